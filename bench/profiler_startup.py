"""How long the first profiled call takes in a fresh CUDA process, per profiler (the runtime
rules profile one correctness call of every candidate, each in its own process).

    python3 bench/profiler_startup.py      # on a machine with a GPU and PyTorch

One line per variant, each in a fresh process: Kineto (torch.profiler, CPU activity only), the
same after a plain first call (so the model's own first-call cost is apart), PyTorch's legacy
profiler, and Kineto with two environment settings. For each: seconds to enter the profiler,
to run, to list events, and the outermost aten ops recorded (which must agree). Results of
2026-11-30 on the H200: docs/PERFORMANCE.md.
"""
import json
import os
import subprocess
import sys
import time

VARIANTS = [
    ("kineto", {}),
    ("firstcall", {}),
    ("legacy", {}),
    ("kineto", {"KINETO_USE_DAEMON": "1"}),
    ("kineto", {"TORCH_DISABLE_ADDR2LINE": "1", "KINETO_LOG_LEVEL": "5"}),
]


def outermost_aten(events):
    top = set()
    for e in events:
        if not e.name.startswith("aten::"):
            continue
        parent = e.cpu_parent
        while parent is not None and not parent.name.startswith("aten::"):
            parent = parent.cpu_parent
        if parent is None:
            top.add(e.name)
    return sorted(top)


def child(variant):
    """One fresh process: CUDA up, then the same small forward profiled twice."""
    t_start = time.perf_counter()
    import torch
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    x = torch.randn(256, 16384, device="cuda")
    w = torch.randn(512, 512, device="cuda")

    def forward():
        out = torch.relu(x), torch.mm(w, w)
        torch.cuda.synchronize()
        return out

    res = {"variant": variant, "import_init_s": time.perf_counter() - t_start}
    if variant == "firstcall":
        t = time.perf_counter()
        forward()
        res["plain_first_s"] = time.perf_counter() - t
        variant = "kineto"
    for rep in range(2):
        t0 = time.perf_counter()
        if variant == "legacy":
            from torch.autograd import profiler_legacy
            with profiler_legacy.profile() as prof:
                forward()
            t1 = time.perf_counter()
            events = prof.function_events
        else:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                t_in = time.perf_counter()
                forward()
                t_body = time.perf_counter()
            t1 = time.perf_counter()
            res["enter_s_%d" % rep] = t_in - t0
            res["exit_s_%d" % rep] = t1 - t_body
            events = prof.events()
        res["profile_s_%d" % rep] = t1 - t0
        res["top_%d" % rep] = outermost_aten(events)
        res["events_s_%d" % rep] = time.perf_counter() - t1
    print(json.dumps(res))


def main():
    for variant, env in VARIANTS:
        t = time.time()
        try:
            p = subprocess.run([sys.executable, __file__, "--child", variant],
                               env=dict(os.environ, **env), capture_output=True, text=True,
                               timeout=60)
            out = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr[-800:]
        except subprocess.TimeoutExpired:
            out = "timeout"
        print(variant, env, "%.1fs" % (time.time() - t), out, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
