"""Tests for the zygote's imports (runner/kforge_runner/zygote.py): whatever it imports before
forking, its candidates inherit, and on a GPU one question about CUDA there is enough to break
every one of them. PyTorch poisons fork once torch.cuda.is_available() or device_count() has
asked the driver: each forked child then fails "Cannot re-initialize CUDA in forked
subprocess" at its first CUDA call (an H100 on 2026-12-06: every candidate of the CUDA red team
crashed at load while the zygote imported torch.utils.cpp_extension, which asks at import).
This machine has no GPU, so the tests watch the questions instead of the crash.
Run with /usr/bin/python3 -m unittest discover -s tests/runner (needs torch)."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "runner")

# Imports the zygote module with PyTorch's device questions replaced by recorders; prints what
# was asked and which modules the import left loaded.
PROBE = r'''
import json, sys, traceback
import torch
asked = []
def recorder(name, real):
    def ask(*a, **k):
        asked.append((name, "".join(traceback.format_stack(limit=6)[:-1])))
        return real(*a, **k)
    return ask
torch.cuda.is_available = recorder("torch.cuda.is_available", torch.cuda.is_available)
torch.cuda.device_count = recorder("torch.cuda.device_count", torch.cuda.device_count)
if hasattr(torch._C, "_cuda_getDeviceCount"):
    torch._C._cuda_getDeviceCount = recorder("torch._C._cuda_getDeviceCount",
                                             torch._C._cuda_getDeviceCount)
sys.path.insert(0, sys.argv[1])
import kforge_runner.zygote  # noqa: F401
print(json.dumps({"asked": asked, "modules": sorted(sys.modules)}))
'''


def probe():
    out = subprocess.run([sys.executable, "-c", PROBE, RUNNER], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return json.loads(out.strip().splitlines()[-1])


class ZygoteImportsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.result = probe()

    def test_never_asks_about_cuda_before_forking(self):
        asked = self.result["asked"]
        self.assertEqual(asked, [], "the zygote asked PyTorch about CUDA devices at import; "
                         "its forked candidates could not use CUDA:\n"
                         + "\n".join(name + " from\n" + stack for name, stack in asked))

    def test_cpp_extension_left_to_the_children(self):
        # It asks torch.cuda.is_available() at import (to find CUDA's folder).
        self.assertFalse("torch.utils.cpp_extension" in self.result["modules"],
                         "the zygote imported torch.utils.cpp_extension")

    def test_cpp_extension_dependencies_inherited(self):
        # The slow part of cpp_extension's import (0.28 s a candidate on this machine) is
        # these; the children's own import of cpp_extension is then about 10 ms.
        for module in ("setuptools", "torch.utils.hipify.hipify_python"):
            self.assertTrue(module in self.result["modules"], "%s is not inherited" % module)

    def test_the_probe_sees_a_question(self):
        # The recorders work: importing cpp_extension after them is seen asking.
        code = PROBE.replace("import kforge_runner.zygote  # noqa: F401",
                             "import torch.utils.cpp_extension")
        out = subprocess.run([sys.executable, "-c", code, RUNNER], check=True,
                             capture_output=True, text=True, timeout=120).stdout
        asked = json.loads(out.strip().splitlines()[-1])["asked"]
        self.assertTrue(asked, "importing cpp_extension asked nothing: the probe is blind")


if __name__ == "__main__":
    unittest.main()
