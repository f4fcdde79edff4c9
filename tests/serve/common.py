"""Helpers of the reward-service tests: a private redis-server, kforge processes, HTTP calls.

Standard library only. Every process started here is ended by the Cluster that started it.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBLEMS = os.path.join(ROOT, "problems")
# KFORGE_TEST_BACKEND=cuda runs the same tests on a GPU machine (examples/cuda/ candidates).
BACKEND = os.environ.get("KFORGE_TEST_BACKEND", "cpu")
RELU = os.path.join(ROOT, "examples", BACKEND, "relu.py")
SLOW_RELU = os.path.join(ROOT, "tests", "serve", "data", "slow_relu.py")
# Fast evaluation settings: the tests are about the service, not about timing.
EVAL_FLAGS = ["--backend", BACKEND, "--no-baselines", "--trials", "2", "--timing-budget-ms", "200",
              "--build-workers", "1"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path):
    with open(path) as f:
        return f.read()


def fresh(candidate_text):
    """The same candidate as a new job: a comment outside the kernel sources changes the job id
    but not the build key, so the extension comes from the artifact cache."""
    return candidate_text + "\n# nonce %s\n" % uuid.uuid4().hex


def http(method, url, body=None, raw=None, timeout=300, headers=None):
    """Returns (status, parsed JSON or text, headers)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            code, text, hdrs = r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        code, text, hdrs = e.code, e.read().decode(), dict(e.headers)
    except urllib.error.URLError as e:
        # A server that refuses a large body may answer and close before the client has sent
        # it all: the client then sees the connection broken, not the answer. Status None.
        if raw is None or not isinstance(e.reason, (BrokenPipeError, ConnectionResetError)):
            raise
        return None, "the server closed the connection: %s" % e.reason, {}
    try:
        return code, json.loads(text), hdrs
    except ValueError:
        return code, text, hdrs


# How long a serve may take to answer /healthz (a GPU machine warms CUDA lanes first).
SERVE_START_S = float(os.environ.get("KFORGE_TEST_SERVE_START_S", "60"))


def descendants(pid):
    """{pid: command line} of every process below pid (children get their own process groups,
    so a process group does not find them)."""
    parent, cmd = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/cmdline" % d, "rb") as f:
                cmd[int(d)] = f.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):
            pass
    out, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for child, par in parent.items():
            if par == p:
                out[child] = cmd.get(child, "")
                todo.append(child)
    return out


def wait_until(pred, timeout_s, what, interval_s=0.1):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(interval_s)
    raise AssertionError("timed out after %.0f s waiting for %s" % (timeout_s, what))


class Cluster:
    """A temp folder, a private redis-server and kforge processes; stop() ends them all."""

    def __init__(self, kforge, cache=None):
        self.kforge = kforge
        self.tmp = tempfile.mkdtemp(prefix="kf-serve-test-")
        # Artifacts are shared between the tests of one build tree (a build is 20-40 s here);
        # verdicts are not: each test makes its candidates new with fresh().
        self.cache = cache or os.path.join(self.tmp, "cache")
        self.procs = {}
        self.redis_port = None

    def start_redis(self):
        self.redis_port = free_port()
        d = os.path.join(self.tmp, "redis")
        os.makedirs(d)
        self._spawn("redis", ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", d])
        wait_until(lambda: self.redis("PING") == "PONG", 20, "redis-server")
        return "redis://127.0.0.1:%d" % self.redis_port

    def redis(self, *args):
        """One Redis command through redis-cli; stdout stripped."""
        out = subprocess.run(["redis-cli", "-p", str(self.redis_port)] + list(args),
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip()

    def start_serve(self, name, args, port=None):
        port = port or free_port()
        self._spawn(name, [self.kforge, "serve", "--port", str(port), "--problems", PROBLEMS,
                           "--cache", self.cache] + EVAL_FLAGS + args)
        url = "http://127.0.0.1:%d" % port

        proc = self.procs[name]

        def up():
            if proc.poll() is not None:
                raise AssertionError("kforge serve %s exited with %s before answering:\n%s" % (
                    name, proc.returncode, self.log(name)[-3000:]))
            try:
                return http("GET", url + "/healthz", timeout=2)[0] == 200
            except OSError:
                return False
        try:
            wait_until(up, SERVE_START_S, "kforge serve on port %d" % port, 0.2)
        except AssertionError as e:
            raise AssertionError("%s; its log ends:\n%s" % (e, self.log(name)[-3000:])) from None
        return url

    def start_worker(self, name, role, redis_url, extra=()):
        self._spawn(name, [self.kforge, "worker", "--role", role, "--redis", redis_url,
                           "--name", name, "--cache", self.cache] + EVAL_FLAGS + list(extra))

    def log(self, name):
        return read(os.path.join(self.tmp, name + ".log"))

    def _spawn(self, name, argv):
        logf = open(os.path.join(self.tmp, name + ".log"), "w")
        self.procs[name] = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT,
                                            cwd=ROOT, start_new_session=True)

    def kill(self, name, sig=signal.SIGKILL):
        """Signals the process group (the process and the runner processes it started); after
        SIGTERM, waits for a clean exit (jobs in hand are finished) and then SIGKILLs."""
        p = self.procs.pop(name)
        try:
            os.killpg(p.pid, sig)
            p.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)

    def stop(self, keep_logs=False):
        # kforge first (it would only retry a vanished Redis), redis-server last.
        for name in sorted(self.procs, key=lambda n: n == "redis"):
            self.kill(name, signal.SIGTERM if name != "redis" else signal.SIGKILL)
        if keep_logs:
            print("logs kept in", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)


def run_test(name, body):
    """The main of a test file: a Cluster for the command line's KFORGE [CACHE], body(cluster),
    every process ended either way and the logs kept when it failed; prints NAME: PASS."""
    import sys
    kforge = sys.argv[1]
    cache = sys.argv[2] if len(sys.argv) > 2 else None
    c = Cluster(kforge, cache)
    ok = False
    try:
        body(c)
        ok = True
    finally:
        c.stop(keep_logs=not ok)
    print("%s: PASS" % name)
