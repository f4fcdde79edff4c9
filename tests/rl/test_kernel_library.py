"""The scripted policy's kernel library (examples/rl/kernel_library.py), as the RL loop builds it.

On an H100 with PyTorch 2.11+cu130 and nvcc 13 (2026-12-07, tests/gpu/throw/variants.py), a
failing TORCH_CHECK in host code that nvcc compiled killed the process with SIGSEGV when its
message streamed a value (`TORCH_CHECK(ok, "unary: unknown op ", op)`) and raised a
RuntimeError when the message was one string literal. The loop's except_fallback cheat relies
on the RuntimeError (cheat H03); with the streamed message every such candidate was a crash
(runtime_error) instead. The CUDA sources keep one literal per check.
"""
import os
import re
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "rl"))
import kernel_library  # noqa: E402

CHECK = re.compile(r"TORCH_CHECK\((.*?)\);", re.S)


def message_args(call):
    """The arguments after TORCH_CHECK's condition, split at top-level commas."""
    parts, depth, cur, quoted = [], 0, "", False
    for ch in call:
        if ch == '"':
            quoted = not quoted
        if not quoted:
            depth += ch in "([{"
            depth -= ch in ")]}"
            if ch == "," and depth == 0:
                parts.append(cur.strip())
                cur = ""
                continue
        cur += ch
    parts.append(cur.strip())
    return parts[1:]


class CudaChecksTest(unittest.TestCase):
    def test_every_cuda_check_message_is_one_string_literal(self):
        for variant in ("loop", "unroll4", "fused"):
            _, cu = kernel_library.source("cuda", variant)
            checks = CHECK.findall(cu)
            self.assertGreater(len(checks), 3, variant)
            for call in checks:
                args = message_args(call)
                self.assertEqual(len(args), 1, "%s: TORCH_CHECK(%s)" % (variant, call))
                self.assertRegex(args[0], r'^".*"$', "%s: TORCH_CHECK(%s)" % (variant, call))

    def test_the_except_fallback_op_code_is_refused_by_a_check(self):
        # The cheat calls unary with op -1: the check that refuses it must be in the source.
        _, cu = kernel_library.source("cuda", "loop")
        self.assertIn('TORCH_CHECK(op >= 0 && op < NUM_UNARY, "unary: unknown op");', cu)


if __name__ == "__main__":
    unittest.main()
