"""How long the first profiled call takes in a fresh CUDA process, per profiler (the runtime
rules profile one correctness call of every candidate, each in its own process).

    python3 bench/profiler_startup.py      # on a machine with a GPU and PyTorch

One line per variant, each in a fresh process: Kineto (torch.profiler, CPU activity only), the
same after a plain first call (so the model's own first-call cost is apart), PyTorch's legacy
profiler, and Kineto with two environment settings. For each: seconds to enter the profiler,
to run, to list events, and the outermost aten ops recorded (which must agree). Results of
2026-11-30 on the H200: docs/PERFORMANCE.md.
"""
import json, os, subprocess, sys, time
VARIANT = r'''
import time, json, sys, os
t_start = time.perf_counter()
import torch
variant = sys.argv[1]
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
x = torch.randn(256, 16384, device="cuda")
w = torch.randn(512, 512, device="cuda")
def fn():
    return torch.relu(x), torch.mm(w, w)
res = {"variant": variant, "import_init_s": time.perf_counter() - t_start}
if variant == "firstcall":
    t = time.perf_counter(); fn(); torch.cuda.synchronize(); res["plain_first_s"] = time.perf_counter() - t
    variant = "kineto"
def names(evs):
    top = set()
    for e in evs:
        if e.name.startswith("aten::"):
            p = e.cpu_parent; nested = False
            while p is not None:
                if p.name.startswith("aten::"): nested = True; break
                p = p.cpu_parent
            if not nested: top.add(e.name)
    return sorted(top)
for rep in range(2):
    t0 = time.perf_counter()
    if variant == "legacy":
        from torch.autograd import profiler_legacy
        with profiler_legacy.profile() as prof:
            fn(); torch.cuda.synchronize()
        t1 = time.perf_counter()
        evs = prof.function_events
    else:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t_in = time.perf_counter()
            fn(); torch.cuda.synchronize()
            t_body = time.perf_counter()
        t1 = time.perf_counter()
        res["enter_s_%d" % rep] = t_in - t0
        res["exit_s_%d" % rep] = t1 - t_body
        evs = prof.events()
    t2 = time.perf_counter()
    res["profile_s_%d" % rep] = t1 - t0
    res["events_s_%d" % rep] = t2 - t1
    res["top_%d" % rep] = names(evs)
print(json.dumps(res))
'''
for v, env in [("kineto", {}), ("firstcall", {}), ("legacy", {}), ("kineto", {"KINETO_USE_DAEMON": "1"}),
               ("kineto", {"TORCH_DISABLE_ADDR2LINE": "1", "KINETO_LOG_LEVEL": "5"})]:
    e = dict(os.environ); e.update(env)
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", VARIANT, v], env=e, capture_output=True, text=True, timeout=60)
        out = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr[-800:]
    except subprocess.TimeoutExpired:
        out = "timeout"
    print(v, env, "%.1fs" % (time.time() - t), out, flush=True)
