"""Check kforge's example candidates against their problems with plain PyTorch.

CPU (Debian's torch):   /usr/bin/python3 examples/check_cpu_examples.py [--all] [FILE ...]
CUDA (GPU machine):     python examples/check_cuda_examples.py [--all] [FILE ...]

Default: every examples/<backend>/*.py and *.md whose header says `kforge-expect: ok` is built
(load_inline), seeded identically before Model and ModelNew, compared on three random input sets
plus one sign-flipped set (atol = rtol = 1e-4), checked for unchanged inputs and non-aliasing
outputs, and timed (median, eager vs candidate).
--all: also the broken ones (examples/<backend>/broken/); each example runs in its own process,
its outcome (ok, compile_error, runtime_error, timeout, incorrect, format_error) is classified
roughly the way kforge would, and compared with the header's expectation.
Builds are cached in $TORCH_EXTENSIONS_DIR (default /tmp/kforge_torch_extensions).
"""
import importlib.util
import json
import os
import pathlib
import re
import select
import subprocess
import sys
import time

os.environ.setdefault("TORCH_EXTENSIONS_DIR", "/tmp/kforge_torch_extensions")

import torch  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
TOL = 1e-4
RUN_TIMEOUT_S = 30  # after the candidate has been built and imported
BUILD_TIMEOUT_S = 900


def header(path):
    fields = {}
    for line in path.read_text().splitlines()[:2]:
        m = re.match(r"#\s*kforge-(problem|expect):\s*(\S+)", line)
        if m:
            fields[m.group(1)] = m.group(2)
    return fields


class FormatError(Exception):
    pass


def candidate_source(path):
    text = path.read_text()
    if path.suffix == ".md":
        m = re.search(r"```(?:python|py)?[ \t]*\n(.*?)```", text, re.S)
        if not m:
            raise FormatError("no fenced code block")
        return m.group(1)
    return text


def load_problem(path):
    spec = importlib.util.spec_from_file_location("kforge_problem", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_candidate(path):
    mod = type(sys)("kforge_candidate_" + path.stem)
    mod.__file__ = str(path)
    exec(compile(candidate_source(path), str(path), "exec"), mod.__dict__)
    if not hasattr(mod, "ModelNew"):
        raise FormatError("no class ModelNew")
    return mod


def sync(device):
    if device == "cuda":
        torch.cuda.synchronize()


def time_ms(fn, inputs, device):
    for _ in range(3):
        fn(*inputs)
    sync(device)
    times = []
    t_end = time.perf_counter() + 0.5
    while len(times) < 5 or (time.perf_counter() < t_end and len(times) < 200):
        t0 = time.perf_counter()
        fn(*inputs)
        sync(device)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e3


def storage_ptr(t):
    return t.untyped_storage().data_ptr() if hasattr(t, "untyped_storage") else t.storage().data_ptr()


def draw(problem, seed, sign, device):
    torch.manual_seed(seed)
    return [x.to(device) * sign if torch.is_tensor(x) else x for x in problem.get_inputs()]


def check(path, device, marker=None):
    """Returns (status, message, load_s, (eager_ms, cand_ms) or None)."""
    h = header(path)
    problem = load_problem(ROOT / "problems" / h["problem"])
    t0 = time.perf_counter()
    try:
        cand = load_candidate(path)
    except FormatError as e:
        return "format_error", str(e), 0.0, None
    except Exception as e:  # load_inline failures surface here
        text = f"{type(e).__name__}: {e}"
        status = "compile_error" if "Error building extension" in text or "error" in text.lower() else "runtime_error"
        return status, text.splitlines()[0][:200], time.perf_counter() - t0, None
    load_s = time.perf_counter() - t0
    if marker:
        marker()
    init = problem.get_init_inputs()
    torch.manual_seed(0)
    ref = problem.Model(*init).to(device)
    torch.manual_seed(0)
    new = cand.ModelNew(*init).to(device)
    worst = 0.0
    try:
        for seed, sign in [(11, 1.0), (22, 1.0), (33, 1.0), (44, -1.0)]:
            inputs = draw(problem, seed, sign, device)
            keep = [x.clone() if torch.is_tensor(x) else x for x in inputs]
            expected = ref(*[x.clone() if torch.is_tensor(x) else x for x in inputs])
            got = new(*inputs)
            sync(device)
            for a, b in zip(inputs, keep):
                if torch.is_tensor(a) and not torch.equal(a, b):
                    return "incorrect", "an input was modified", load_s, None
            if type(got) is not torch.Tensor or got.shape != expected.shape or got.dtype != expected.dtype:
                return "incorrect", f"bad output {type(got).__name__} {getattr(got, 'shape', None)}", load_s, None
            if any(torch.is_tensor(x) and storage_ptr(x) == storage_ptr(got) for x in inputs):
                return "incorrect", "output aliases an input", load_s, None
            if not torch.allclose(got, expected, atol=TOL, rtol=TOL):
                err = (got - expected).abs().max().item()
                return "incorrect", f"mismatch (seed {seed}, sign {sign:+.0f}): max abs err {err:.3e}", load_s, None
            worst = max(worst, ((got - expected).abs() / (TOL + TOL * expected.abs())).max().item())
        inputs = draw(problem, 55, 1.0, device)
        timing = (time_ms(ref, inputs, device), time_ms(new, inputs, device))
    except Exception as e:
        return "runtime_error", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", load_s, None
    return "ok", f"worst err/tol {worst:.3f}", load_s, timing


def run_isolated(path, device):
    """Runs one example in a child process; returns (status, message, load_s, timing)."""
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--one", str(path), "--device", device]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + BUILD_TIMEOUT_S
    result = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            proc.wait()
            return "timeout", f"killed after the {RUN_TIMEOUT_S}s run limit", 0.0, None
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if not ready:
            continue
        line = proc.stdout.readline()
        if not line:
            break
        if line.startswith("KFORGE-LOADED"):
            deadline = time.monotonic() + RUN_TIMEOUT_S
        elif line.startswith("KFORGE-RESULT "):
            result = json.loads(line[len("KFORGE-RESULT "):])
    rc = proc.wait()
    if result is None:
        return "runtime_error", f"process died (exit {rc})", 0.0, None
    return tuple(result)


def main():
    args = sys.argv[1:]
    device = "cpu"
    if "--device" in args:
        i = args.index("--device")
        device = args[i + 1]
        del args[i:i + 2]
    torch.set_grad_enabled(False)
    if args and args[0] == "--one":
        res = check(pathlib.Path(args[1]), device, marker=lambda: print("KFORGE-LOADED", flush=True))
        print("KFORGE-RESULT " + json.dumps(res), flush=True)
        return 0
    run_all = "--all" in args
    args = [a for a in args if a != "--all"]
    folder = HERE / device
    if args:
        paths = [pathlib.Path(a).resolve() for a in args]
    else:
        paths = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".md"))
        if run_all:
            paths += sorted(p for p in (folder / "broken").iterdir() if p.suffix in (".py", ".md"))
    bad = 0
    print(f"torch {torch.__version__}, device {device}, threads {torch.get_num_threads()}, "
          f"ext dir {os.environ['TORCH_EXTENSIONS_DIR']}", flush=True)
    for path in paths:
        h = header(path)
        expect = h.get("expect")
        if expect != "ok" and not run_all and not args:
            continue
        if run_all or expect != "ok":
            status, msg, load_s, t = run_isolated(path, device)
        else:
            status, msg, load_s, t = check(path, device)
        good = status == expect
        bad += not good
        timing = f"eager {t[0]:8.3f} ms  candidate {t[1]:8.3f} ms  speedup {t[0] / t[1]:5.2f}x  " if t else ""
        print(f"{'PASS' if good else 'FAIL'} {path.relative_to(HERE)} [{h.get('problem')}] expect {expect}, "
              f"got {status}; load {load_s:5.1f}s  {timing}{msg}", flush=True)
    print("FAILED" if bad else "all as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
