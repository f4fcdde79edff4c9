"""End to end (CPU backend): a build that fails because the machine lacks torch's C++ headers
is infra_error with the fix `kforge doctor` gives, and it is not cached: with the headers back,
the same cache folder builds the candidate and passes it.

Usage: test_missing_headers.py path/to/kforge [--python /usr/bin/python3]

The headers are hidden, not removed: --python names a wrapper that runs the real interpreter in
a private mount namespace where torch's include/torch folder (and /usr/include/torch, the same
folder on Debian) is an empty one. Patching torch's include_paths() would not do: the compiler
also finds Debian's headers in /usr/include. Needs root or unprivileged user namespaces; exits
77 (skipped) without them.
"""
import argparse
import glob
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77
FIX = "apt-get install libtorch-dev"


def header_dirs(python):
    """The folders holding torch/extension.h that a build could find, without importing torch."""
    code = ("import importlib.util, os; s = importlib.util.find_spec('torch'); "
            "print(os.path.realpath(os.path.join(list(s.submodule_search_locations)[0], "
            "'include', 'torch')))")
    found = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    dirs = {found.stdout.strip()}
    if os.path.isdir("/usr/include/torch"):
        dirs.add(os.path.realpath("/usr/include/torch"))
    return sorted(d for d in dirs if os.path.isfile(os.path.join(d, "extension.h")))


def hiding_wrapper(tmp, python, dirs):
    """A script that runs `python` with every folder in `dirs` replaced by an empty one."""
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    mounts = "; ".join("mount --bind %s %s || exit 97" % (shlex.quote(empty), shlex.quote(d))
                       for d in dirs)
    inner = '%s; exec %s "$@"' % (mounts, shlex.quote(python))
    unshare = "unshare --mount" if os.geteuid() == 0 else "unshare --user --map-root-user --mount"
    path = os.path.join(tmp, "python-without-torch-headers")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# %s without torch's C++ headers (a private mount namespace)\n"
                "exec %s -- /bin/sh -c %s sh \"$@\"\n" % (python, unshare, shlex.quote(inner)))
    os.chmod(path, 0o755)
    return path


def hides(wrapper, dirs):
    check = "import os, sys; sys.exit(any(os.path.exists(os.path.join(d, 'extension.h')) for d in %r))" % dirs
    return subprocess.run([wrapper, "-c", check], capture_output=True).returncode == 0


def kforge_eval(kforge, python, cache):
    cmd = [kforge, "eval", "--json", "--backend", "cpu", "--python", python, "--cache", cache,
           "--problem", os.path.join(ROOT, "problems", "level1", "relu.py"),
           "--candidate", os.path.join(ROOT, "examples", "cpu", "relu.py"),
           "--no-baselines", "--trials", "1", "--build-workers", "1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1500)
    try:
        verdict = json.loads(p.stdout)
    except ValueError:
        raise AssertionError("no verdict (exit %d)\nstdout: %s\nstderr: %s"
                             % (p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p.returncode, verdict, p.stderr


def kforge_doctor(kforge, python):
    p = subprocess.run([kforge, "doctor", "--json", "--backend", "cpu", "--python", python],
                       capture_output=True, text=True, timeout=600)
    report = json.loads(p.stdout)
    return p.returncode, {c["name"]: c for c in report["checks"]}


def stage(verdict, name):
    return next((s for s in verdict["stages"] if s["name"] == name), None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kforge")
    ap.add_argument("--python", default="/usr/bin/python3")
    args = ap.parse_args()
    kforge = os.path.abspath(args.kforge)
    # The cache's second build starts a PCH that runs on after kforge exits (runner/
    # kforge_runner/pch.py, stop()): it may still be writing the cache when this folder goes.
    with tempfile.TemporaryDirectory(prefix="kforge-env-test-", ignore_cleanup_errors=True) as tmp:
        dirs = header_dirs(args.python)
        if not dirs:
            print("skipped: %s's torch has no C++ headers to hide" % args.python)
            return SKIP
        wrapper = hiding_wrapper(tmp, args.python, dirs)
        if not hides(wrapper, dirs):
            print("skipped: cannot hide %s (no mount namespace for this user)" % dirs)
            return SKIP
        cache = os.path.join(tmp, "cache")

        # 1. Without torch's headers: the machine's fault, with doctor's fix, nothing cached.
        rc, v, err = kforge_eval(kforge, wrapper, cache)
        assert v["status"] == "infra_error", json.dumps(v, indent=1)
        assert rc == 3, (rc, err)
        env = [d for d in v["diagnostics"] if d["message"].startswith("environment: ")]
        assert env, v["diagnostics"]
        assert "torch/extension.h" in env[0]["message"], env[0]
        assert env[0]["hint"] == FIX and env[0]["code"] == "environment", env[0]
        assert v["reward"] is None, v["reward"]
        assert "infrastructure failure: environment: " in err and "(fix: %s)" % FIX in err, err
        cached = glob.glob(os.path.join(cache, "artifacts", "*", "result.json"))
        assert not cached, "an environment failure was cached: %s" % cached
        print("hidden headers: infra_error, %r, hint %r, nothing cached"
              % (env[0]["message"], env[0]["hint"]))

        # 2. kforge doctor names the same part and the same fix.
        rc, checks = kforge_doctor(kforge, wrapper)
        assert rc == 1, rc
        assert checks["torch_headers"]["state"] == "fail", checks["torch_headers"]
        assert checks["torch_headers"]["fix"] == env[0]["hint"], (checks["torch_headers"], env[0])
        print("doctor: torch_headers fail, fix %r" % checks["torch_headers"]["fix"])

        # 3. Headers back, same cache: built now (no cached failure in the way), and correct.
        rc, v, err = kforge_eval(kforge, args.python, cache)
        assert rc == 0 and v["status"] == "ok", (rc, err[-2000:], json.dumps(v, indent=1)[-3000:])
        build = stage(v, "build")
        assert build and build["ok"] and build["compiled"] == 1 and not build["cache_hit"], build
        rc, checks = kforge_doctor(kforge, args.python)
        assert checks["torch_headers"]["state"] == "ok", checks["torch_headers"]
        print("headers back: ok, compiled %d, doctor torch_headers ok" % build["compiled"])
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
