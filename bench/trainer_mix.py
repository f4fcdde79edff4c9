"""The answers bench/trainer_load.py sends: the repository's candidate files with the verdict
each header says it must get (`# kforge-expect:`), variants made from the honest ones, and a
step's groups drawn from them. Standard library only."""
import hashlib
import os
import random
import re

HEADER = re.compile(r"^# kforge-([a-z-]+):\s*(.*?)\s*$")
# Files never sent: they need no more than the sandbox to be harmless, but a load test is no
# place for 2 GiB of disk writes, and the endless ones cost a whole call timeout each.
SKIP = {"h20_fill_disk.py", "h20_files_outside.py", "h20_infinite_loop.py", "hang.py"}
NO_CODE = "I could not write a faster kernel for this problem."


def read_headers(text):
    """The `# kforge-KEY: value` lines of a candidate's leading comment block."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = HEADER.match(line)
        if m and m.group(1) not in out:
            out[m.group(1)] = m.group(2)
    return out


def expected_status(headers, policy):
    """The status the file must get under `policy` (its -kernelbench header where it has one)."""
    if policy == "kernelbench" and headers.get("expect-kernelbench"):
        return headers["expect-kernelbench"]
    return headers.get("expect")


def problem_id(headers):
    p = headers.get("problem", "")
    return p[:-3] if p.endswith(".py") else p


def kind_of(folder_kind, expect):
    """honest / broken / cheat by what the file must get, whatever folder it came from."""
    if expect == "ok":
        return "honest" if folder_kind == "honest" else None
    return "cheat" if expect == "cheat" else "broken"


def inject_compile_error(text):
    """A header that does not exist, before the first #include: the compiler stops at once."""
    i = text.find("#include <")
    if i < 0:
        return None
    return text[:i] + '#include "kforge_trainer_load_no_such_header.h"\n' + text[i:]


def inject_crash(text):
    """`raise` as the first statement of ModelNew.forward (a one-line `def forward(...):`)."""
    lines = text.split("\n")
    in_new = False
    for i, line in enumerate(lines):
        if line.startswith("class "):
            in_new = line.startswith("class ModelNew")
        m = re.match(r"^(\s+)def forward\(self.*\):\s*$", line)
        if in_new and m:
            for j in range(i + 1, len(lines)):
                if lines[j].strip():
                    indent = re.match(r"^(\s*)", lines[j]).group(1)
                    if len(indent) <= len(m.group(1)):
                        return None
                    lines.insert(j, indent + 'raise RuntimeError("trainer_load: a crash")')
                    return "\n".join(lines)
    return None


def inject_timer_patch(text):
    """time.perf_counter replaced by a slow clock, after the header block (static H08)."""
    lines = text.split("\n")
    k = 0
    while k < len(lines) and lines[k].startswith("#"):
        k += 1
    patch = ["import time", "_kf_clock = time.perf_counter",
             "time.perf_counter = lambda: _kf_clock() * 0.01"]
    return "\n".join(lines[:k] + patch + lines[k:])


def catalogue(root, backend, policy, families):
    """Every answer this run may send: dicts of kind, mutation, family, source, problem, expect,
    text. Broken and cheating variants are also made from each honest file."""
    sources = []  # (folder kind, family, glob folder)
    if "load_inline" in families:
        sources += [("honest", "load_inline", "examples/%s" % backend),
                    ("broken", "load_inline", "examples/%s/broken" % backend),
                    ("redteam", "load_inline", "tests/redteam/%s" % backend)]
    if "triton" in families:
        honest = "examples/triton_cuda/level1 examples/triton_cuda/level2" if backend == "cuda" \
            else "examples/triton"
        sources += [("honest", "triton", d) for d in honest.split()]
        sources += [("broken", "triton", "examples/triton/broken"),
                    ("redteam", "triton", "tests/redteam/triton")]
    out = []
    for folder_kind, family, folder in sources:
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not name.endswith(".py") or name in SKIP:
                continue
            rel = os.path.join(folder, name)
            with open(os.path.join(root, rel)) as f:
                text = f.read()
            h = read_headers(text)
            expect = expected_status(h, policy)
            kind = kind_of(folder_kind, expect)
            if not problem_id(h) or not expect or not kind or expect == "timeout":
                continue
            out.append({"kind": kind, "mutation": "file", "family": family, "source": rel,
                        "problem": problem_id(h), "expect": expect, "text": text})
            if kind == "honest":
                for mutation, expect2, kind2, fn in [
                        ("missing_header", "compile_error", "broken", inject_compile_error),
                        ("raise_in_forward", "runtime_error", "broken", inject_crash),
                        ("timer_patch", "cheat", "cheat", inject_timer_patch)]:
                    t = fn(text)
                    if t:
                        out.append({"kind": kind2, "mutation": mutation, "family": family,
                                    "source": rel, "problem": problem_id(h), "expect": expect2,
                                    "text": t})
    return out


def plan_step(cat, problems, group_size, rng, mix):
    """One step: per problem a group of group_size entries drawn by kind (mix: honest, broken,
    cheat weights); a kind the problem has no entry of falls back to another; some broken
    samples are replies without code."""
    by = {}
    for e in cat:
        by.setdefault((e["problem"], e["kind"]), []).append(e)
    groups = []
    for p in problems:
        samples = []
        for _ in range(group_size):
            kind = rng.choices(["honest", "broken", "cheat"], weights=mix)[0]
            if kind == "broken" and rng.random() < 0.15:
                samples.append({"kind": "broken", "mutation": "no_code", "family": "reply",
                                "source": "", "problem": p, "expect": "format_error",
                                "text": None})
                continue
            pool = by.get((p, kind)) or by.get((p, "broken")) or by.get((p, "honest"))
            files = [e for e in pool if e["mutation"] == "file"]
            # The red team's own files first where the problem has them.
            if kind == "cheat" and files and rng.random() < 0.75:
                pool = files
            samples.append(dict(rng.choice(pool)))
        groups.append({"problem": p, "samples": samples})
    return groups


def choose_problems(cat, n, step, rng_seed):
    """n problems with an honest answer, level1/relu first (it has most of the red team), the
    rest rotating through a seeded order from step to step."""
    have = sorted({e["problem"] for e in cat if e["kind"] == "honest"})
    rest = [p for p in have if p != "level1/relu"]
    random.Random(rng_seed).shuffle(rest)
    first = ["level1/relu"] if "level1/relu" in have else []
    k = max(0, n - len(first))
    rot = (rest[(step * k) % len(rest):] + rest[:(step * k) % len(rest)]) if rest else []
    return (first + rot)[:n]


def render(sample, nonce, rng):
    """The text a model would have written: the file as it is, or inside a reply's fenced block;
    the nonce comment makes it a job of its own (same kernel sources, so the same build)."""
    if sample["text"] is None:
        return NO_CODE + "\n(" + nonce + ")"
    code = sample["text"].rstrip("\n") + "\n# trainer_load %s\n" % nonce
    if rng.random() < 0.5:
        return code
    return "Here is a kernel for the problem.\n\n```python\n" + code + "```\n"


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


