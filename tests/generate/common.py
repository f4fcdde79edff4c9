"""Paths and candidates shared by the generate and MCP tests."""
import os
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KFORGE = os.environ.get("KFORGE_BIN", os.path.join(ROOT, "build", "kforge"))
# One cache for every step, so a kernel compiled once is never compiled again.
CACHE = os.environ.get("KFORGE_TEST_CACHE") or os.path.join(tempfile.gettempdir(), "kforge-generate-test-cache")
PROBLEM = os.path.join(ROOT, "problems", "level1", "relu.py")
# Fast evaluation: fewer trials and a short timing budget; correctness is still checked.
EVAL_FLAGS = ["--backend", "cpu", "--python", "/usr/bin/python3", "--cache", CACHE,
              "--trials", "2", "--timing-budget-ms", "100", "--build-workers", "2"]

with open(os.path.join(ROOT, "examples", "cpu", "relu.py")) as f:
    CORRECT = f.read()
# Does not compile: a helper header that does not exist. Included first, so the compiler stops
# at once instead of parsing torch's headers (a compile costs a minute on a busy CI machine).
INCLUDE = "#include <torch/extension.h>\n"
assert INCLUDE in CORRECT
NO_COMPILE = CORRECT.replace(INCLUDE, '#include "relu_helpers.h"\n' + INCLUDE, 1)
# Wrong without a compile of its own: the same kernel (a cache hit), a flattened result.
GOOD_RETURN = "return relu_ext.relu_forward(x.contiguous())"
assert GOOD_RETURN in CORRECT
WRONG = CORRECT.replace(GOOD_RETURN, GOOD_RETURN + ".view(-1)")


def reply(code, thought="I will write a C++ loop."):
    """A model reply: reasoning in a think block, prose, then the code in a fence."""
    return "<think>%s</think>\nHere is my kernel.\n\n```python\n%s```\n" % (thought, code)


def run_kforge(args, timeout=300, **kw):
    return subprocess.run([KFORGE] + args, capture_output=True, text=True, timeout=timeout, **kw)
