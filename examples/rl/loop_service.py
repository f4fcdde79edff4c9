"""The processes and HTTP calls of examples/rl/loop.py: a `kforge serve` in a process group
of its own, kforge commands run under a deadline and ended whole, JSON over HTTP.

Every process started here is ended by the code that started it (Service.stop, run_logged),
by its process group. Standard library only.
"""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request


class LoopError(Exception):
    """A step that could not run: exit 2 with this message."""


class Deadline:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self, what):
        left = self.end - time.monotonic()
        if left <= 0:
            raise LoopError("out of time (--deadline-s) before " + what)
        return left


def http(method, url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            code, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read().decode()
    try:
        return code, json.loads(text)
    except ValueError:
        return code, text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Service:
    """One `kforge serve` process (in its own process group) and its log."""

    def __init__(self, kforge, flags, out_dir, name, cwd):
        """Starts `kforge serve --port P FLAGS...` on a free loopback port; its output goes to
        OUT/NAME.log and its process group to OUT/NAME.pid (for a wrapper that must clean up
        after a loop killed outright)."""
        self.log = os.path.join(out_dir, name + ".log")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.argv = [kforge, "serve", "--port", str(self.port)] + list(flags)
        with open(self.log, "w") as logf:
            self.proc = subprocess.Popen(self.argv, stdout=logf, stderr=subprocess.STDOUT,
                                         cwd=cwd, start_new_session=True)
        with open(os.path.join(out_dir, name + ".pid"), "w") as f:
            f.write("%d\n" % self.proc.pid)

    def wait_up(self, deadline, limit_s=120):
        end = time.monotonic() + min(limit_s, deadline.left("kforge serve started"))
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise LoopError("kforge serve exited with %d at start; %s:\n%s"
                                % (self.proc.returncode, self.log, tail(self.log)))
            try:
                if http("GET", self.url + "/healthz", timeout=2)[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise LoopError("kforge serve did not answer /healthz in %d s; %s:\n%s"
                        % (limit_s, self.log, tail(self.log)))

    def stop(self, grace_s=60):
        """SIGTERM to its group (the service finishes the jobs in hand), SIGKILL after
        grace_s."""
        if self.proc.poll() is None:
            kill_group(self.proc, grace_s)


def kill_group(proc, grace_s):
    """Ends a process started in a session of its own, and everything it started."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=30)


def run_logged(argv, log, timeout_s, what, cwd):
    """Runs a kforge command in a session of its own, output to `log`; on timeout its whole
    group is ended (synth and data start Python runners of their own)."""
    with open(log, "w") as logf:
        proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, cwd=cwd,
                                start_new_session=True)
        try:
            return proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_group(proc, 5)
            raise LoopError("%s ran past --deadline-s; %s:\n%s" % (what, log, tail(log)))
        except BaseException:
            kill_group(proc, 5)
            raise
