"""Which processes bench/trainer_load.py kills mid-run (a GPU worker of the service, or one lane
of an in-process service), found through /proc, and the thread that kills them.
Standard library only."""
import os
import signal
import threading
import time

def proc_table(proc="/proc"):
    """pid -> (ppid, argv) of every process that can be read."""
    table = {}
    for d in os.listdir(proc):
        if not d.isdigit():
            continue
        try:
            with open(os.path.join(proc, d, "cmdline"), "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            with open(os.path.join(proc, d, "stat")) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        table[int(d)] = (ppid, argv)
    return table


def descendants(table, pid):
    kids = {}
    for p, (pp, _) in table.items():
        kids.setdefault(pp, []).append(p)
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def is_kforge(argv, sub):
    return len(argv) > 1 and os.path.basename(argv[0]).startswith("kforge") and argv[1] == sub


def flag(argv, name):
    """The value of `--name V` or `--name=V` in argv (the last one given), else None."""
    got = [b for a, b in zip(argv, argv[1:]) if a == name]
    got += [a.split("=", 1)[1] for a in argv if a.startswith(name + "=")]
    return got[-1] if got else None


def gpu_workers(table, redis_url):
    """`kforge worker --role gpu` processes on the Redis at redis_url (other services' workers
    on a shared machine are left alone)."""
    return sorted(pid for pid, (_, argv) in table.items()
                  if is_kforge(argv, "worker") and flag(argv, "--role") == "gpu" and
                  flag(argv, "--redis") == redis_url)


def serve_on_port(table, port):
    for pid, (_, argv) in sorted(table.items()):
        given = flag(argv, "--port")
        if is_kforge(argv, "serve") and (given == str(port) or (given is None and port == 8000)):
            return pid
    return None


def runner_module(argv):
    for a in argv:
        if a.startswith("kforge_runner."):
            return a[len("kforge_runner."):]
    return None


def kill_plan(table, engine, port):
    """(what, [pids]) to SIGKILL: a GPU worker of the service on `port` and everything under it
    (Redis), or one lane of the in-process service: its judge, the zygote started right after
    it, the zygote's children (candidates)."""
    serve = serve_on_port(table, port)
    if serve is None:
        return "no `kforge serve` on port %d found on this machine" % port, []
    if engine == "redis":
        url = flag(table[serve][1], "--redis")
        w = gpu_workers(table, url)
        if not w:
            return "no `kforge worker --role gpu` on the service's Redis found", []
        return "kforge worker --role gpu (pid %d) and its runner processes" % w[0], \
            [w[0]] + descendants(table, w[0])
    kids = [p for p in descendants(table, serve) if table[p][0] == serve]
    judges = sorted(p for p in kids if runner_module(table[p][1]) == "judge")
    if not judges:
        return "no judge process under kforge serve (pid %d)" % serve, []
    zygotes = sorted(p for p in kids if runner_module(table[p][1]) == "zygote" and p > judges[0])
    pids = [judges[0]] + zygotes[:1]
    for z in zygotes[:1]:
        pids += descendants(table, z)
    return "lane of kforge serve (pid %d): judge %d, zygote %s" % (
        serve, judges[0], zygotes[0] if zygotes else "none"), pids


def busy(table, pids):
    """A candidate is running: a zygote among pids has a child."""
    zyg = [p for p in pids if p in table and runner_module(table[p][1]) == "zygote"]
    return any(table[c][0] in zyg for c in table)


class Killer(threading.Thread):
    def __init__(self, after_s, wait_s, engine, port, t0):
        super().__init__(daemon=True)
        self.after_s, self.wait_s, self.engine, self.port, self.t0 = after_s, wait_s, engine, \
            port, t0
        self.report = {"after_s": after_s, "killed": [], "what": None}
        self.stop = threading.Event()

    def run(self):
        if self.stop.wait(self.after_s):
            return
        deadline = time.monotonic() + self.wait_s
        while True:
            table = proc_table()
            what, pids = kill_plan(table, self.engine, self.port)
            if pids and (busy(table, pids) or time.monotonic() >= deadline):
                break
            if not pids and time.monotonic() >= deadline:
                self.report["what"] = what
                return
            if self.stop.wait(0.2):
                return
        self.report.update(what=what, busy=busy(table, pids),
                           argv={str(p): " ".join(table[p][1])[:200] for p in pids if p in table})
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
                self.report["killed"].append(p)
            except OSError:
                pass
        self.report["at_s"] = round(time.monotonic() - self.t0, 2)
