#include <gtest/gtest.h>

#include "common/rules.h"
#include "legality/testing.h"

namespace kf::legality {
namespace {

using testing::CheckBody;
using testing::Findings;
using testing::WithForward;

// A try/except is only a hint: noted (info), its branches watched at run time.
TEST(PythonRulesTest, TryExceptIsAGuardToWatch) {
  auto ds =
      CheckBody(WithForward("        try:\n"
                            "            return ext.f(x)\n"
                            "        except Exception:\n"
                            "            return x\n"));
  EXPECT_EQ(testing::Summary(ds), "H03_guard:13");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::kInfo);
  EXPECT_EQ(Findings("try:\n    import foo\nexcept ImportError:\n    foo = None\n"), "H03_guard:9");
}

// CUDA graphs from Python are H07 under every policy, never H01 (a graph computes nothing by
// itself). Where the job allows graphs in the kernel sources (the kernelbench policy) the
// message says so: a replay from Python is outside the H02 ablation, and torch.cuda.graph makes
// torch's own side stream current inside its block.
TEST(PythonRulesTest, CudaGraphsFromPythonAreH07UnderEveryPolicy) {
  LegalityOptions graphs;
  graphs.allow_graphs = true;
  const std::string capture = WithForward(
      "        g = torch.cuda.CUDAGraph()\n"      // 13
      "        static_x = torch.empty_like(x)\n"  // 14
      "        with torch.cuda.graph(g):\n"       // 15
      "            static_y = ext.f(static_x)\n"  // 16
      "        static_x.copy_(x)\n"               // 17
      "        g.replay()\n"                      // 18
      "        return static_y.clone()\n");       // 19
  EXPECT_EQ(Findings(capture), "H07:13 H07:15");
  EXPECT_EQ(Findings(capture, graphs), "H07:13 H07:15");
  for (const Diagnostic& d : CheckBody(capture)) {
    EXPECT_EQ(d.severity, Severity::kError);
    EXPECT_EQ(d.message.find("kernelbench"), std::string::npos) << d.message;
  }
  for (const Diagnostic& d : CheckBody(capture, graphs)) {
    EXPECT_EQ(d.severity, Severity::kError);
    EXPECT_NE(d.message.find("not even under the kernelbench policy"), std::string::npos)
        << d.message;
  }
  const std::string imported =
      "from torch.cuda import make_graphed_callables\n"    // 9
      "from torch.cuda import graphs as G\n"               // 10
      "pool = torch.cuda.graph_pool_handle()\n"            // 11
      "graph_class = getattr(torch.cuda, 'CUDAGraph')\n";  // 12
  EXPECT_EQ(Findings(imported), "H07:9 H07:10 H07:11 H07:12");
  EXPECT_EQ(Findings(imported, graphs), "H07:9 H07:10 H07:11 H07:12");
}

// Exception swallowing with no branch of its own to watch stays an error.
TEST(PythonRulesTest, SuppressingContextManagers) {
  EXPECT_EQ(Findings("import contextlib\n" +
                     WithForward("        with contextlib.suppress(RuntimeError):\n"
                                 "            return ext.f(x)\n")),
            "H03:14");
  EXPECT_EQ(Findings("from contextlib import suppress\n"), "H03:9");
}

TEST(PythonRulesTest, SideStreamsAndThreads) {
  EXPECT_EQ(Findings(WithForward("        s = torch.cuda.Stream()\n"
                                 "        with torch.cuda.stream(s):\n"
                                 "            return ext.f(x)\n")),
            "H07:13 H07:14");
  EXPECT_EQ(Findings("import threading\n"), "H07:9");
  EXPECT_EQ(Findings("from concurrent.futures import ThreadPoolExecutor as P\n"), "H07:9");
  EXPECT_EQ(Findings("import os\npid = os.fork()\n"), "H07:10");
  EXPECT_EQ(
      Findings("from torch import cuda as c\n" + WithForward("        c.set_stream(c.Stream())\n")),
      "H07:14");
  // The private classes and functions the public stream API is made of: the same side streams.
  EXPECT_EQ(Findings(WithForward("        s = torch._C._CudaStreamBase(priority=0)\n"
                                 "        return ext.f(x, s.cuda_stream)\n")),
            "H07:13");
  EXPECT_EQ(Findings("from torch._C import _CudaStreamBase as S\n"), "H07:9");
  EXPECT_EQ(Findings(WithForward("        torch._C._cuda_setStream(1, 0, 0)\n")), "H07:13");
  // Every public and private spelling of a side stream or a stream switch.
  EXPECT_EQ(Findings(WithForward("        torch.cuda.set_stream(s)\n"
                                 "        with torch.cuda.StreamContext(s):\n"
                                 "            e = torch.cuda.ExternalStream(ptr)\n"
                                 "        t = torch.Stream(device='cuda')\n"
                                 "        u = torch.cuda.streams.Stream()\n"
                                 "        torch.cuda._set_stream_by_id(1, 0, 1)\n"
                                 "        v = torch.cuda.get_stream_from_external(ptr)\n")),
            "H07:13 H07:14 H07:15 H07:16 H07:17 H07:18 H07:19");
  EXPECT_EQ(Findings(WithForward("        torch.accelerator.set_stream(s)\n"
                                 "        torch._C._accelerator_setStream(s)\n"
                                 "        w = torch.get_device_module('cuda').Stream()\n")),
            "H07:13 H07:14 H07:15");
  EXPECT_EQ(Findings("from torch._dynamo.device_interface import get_interface_for_device\n"
                     "from torch._streambase import _StreamBase\n"
                     "from torch.accelerator import set_stream\n"),
            "H07:9 H07:10 H07:11");
  // The current stream is the timed stream: allowed.
  EXPECT_EQ(Findings(WithForward("        s = torch.cuda.current_stream().cuda_stream\n"
                                 "        return ext.f(x, s)\n")),
            "");
  // Making the current stream current switches nothing (CUDA-L1's level1/19 sample 1 does it);
  // any other stream, or a stream method of the current one, is still a switch.
  EXPECT_EQ(Findings(WithForward("        torch.cuda.set_stream(torch.cuda.current_stream())\n"
                                 "        torch.cuda.set_stream(torch.cuda.current_stream(x.device))\n")),
            "");
  EXPECT_EQ(Findings(WithForward("        torch.cuda.set_stream(torch.cuda.default_stream())\n"
                                 "        torch.cuda.set_stream(torch.cuda.current_stream(), s)\n"
                                 "        torch.cuda.set_stream(torch.cuda.current_stream)\n"
                                 "        torch.cuda.set_stream(torch.cuda.current_stream().x)\n")),
            "H07:13 H07:14 H07:15 H07:16");
}

TEST(PythonRulesTest, MonkeyPatching) {
  EXPECT_EQ(Findings("torch.cuda.Event.elapsed_time = lambda a, b: 0.001\n"), "H08:9");
  EXPECT_EQ(Findings("import time as tm\ntm.perf_counter = lambda: 0.0\n"), "H08:10");
  EXPECT_EQ(Findings("E = torch.cuda.Event\nsetattr(E, 'elapsed_time', None)\n"), "H08:10");
  EXPECT_EQ(Findings("__builtins__['print'] = None\n"), "H08:9");
  EXPECT_EQ(Findings("import builtins\n"), "H08:9");
  EXPECT_EQ(Findings("import kforge_runner.judge\nfrom kforge_native import x\n"), "H08:9 H08:10");
  EXPECT_EQ(Findings("import torch.nn.functional as F\nF.relu = lambda t: t\ndel torch.allclose\n"),
            "H08:10 H08:11");
  // Own objects may be assigned freely.
  EXPECT_EQ(Findings(WithForward("        self.calls = 1\n        return ext.f(x)\n")), "");
}

TEST(PythonRulesTest, HarnessStateAndEscapes) {
  EXPECT_EQ(Findings("import gc\nimport inspect\nimport ctypes\n"), "H16:9 H16:10 H16:11");
  EXPECT_EQ(Findings("import sys\nf = sys._getframe(1)\nm = sys.modules\n"), "H16:10 H16:11");
  EXPECT_EQ(Findings("g = globals()\nexec('x=1')\nv = eval('1')\n"), "H16:9 H16:10 H16:11");
  EXPECT_EQ(Findings("import os\nif os.environ.get('X'):\n    pass\nv = os.getenv('Y')\n"),
            "H15:10 H15:12");
  EXPECT_EQ(Findings("import traceback\n"), "H15:9");
  EXPECT_EQ(Findings("data = open('/tmp/expected').read()\nimport socket\nimport subprocess\n"),
            "H20:9 H20:10 H20:11");
  EXPECT_EQ(Findings("import os\nos.system('ls')\nos.execv('/bin/sh', [])\n"), "H20:10 H20:11");
  EXPECT_EQ(Findings("import sys\nsys.exit(0)\n"), "H17:10");
}

// An exit inside an except branch is an error path: noted (H17_note), decided by what runs.
TEST(PythonRulesTest, ExitOnAnErrorPathIsOnlyNoted) {
  EXPECT_EQ(Findings("import sys\ntry:\n    x = 1\nexcept Exception:\n    print('failed')\n"
                     "    sys.exit(1)\n"),
            "H03_guard:10 H17_note:14");
  EXPECT_EQ(Findings("try:\n    x = 1\nexcept Exception:\n    if x:\n        exit(1)\n"),
            "H03_guard:9 H17_note:13");
  // Outside an except branch it stays a finding, and writing stdout in one does too.
  EXPECT_EQ(Findings("import os\nif True:\n    os._exit(0)\n"), "H17:11");
  EXPECT_EQ(Findings("import sys\ntry:\n    x = 1\nexcept Exception:\n    sys.stdout.write('ok')\n"),
            "H03_guard:10 H17:13");
  EXPECT_EQ(Findings(WithForward("        return ext.f(x.frame.f_back)\n")), "H16:13");
}

// Seen in released kernels (CUDA-L1, docs/CORPORA.md): settings that change no result or timer.
TEST(PythonRulesTest, SettingsThatAreNotPatches) {
  EXPECT_EQ(Findings("torch.backends.cudnn.benchmark = True\n"
                     "torch.backends.cudnn.deterministic = False\n"
                     "torch.backends.cudnn.enabled = False\n"),
            "");
  EXPECT_EQ(Findings("torch.cuda.synchronize = lambda: None\n"), "H08:9");
  // Build settings may be written; the environment is not read, nor written otherwise.
  EXPECT_EQ(Findings("import os\nos.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'\n"), "");
  EXPECT_NE(Findings("import os\nos.environ['NVIDIA_TF32_OVERRIDE'] = '1'\n"), "");
  EXPECT_EQ(Findings("import os\narch = os.environ['TORCH_CUDA_ARCH_LIST']\n"), "H15:10");
  // A literal relative folder is inside the candidate's own, a literal outside it is an
  // escape, and a computed path is left to the sandbox (it decides by what runs).
  EXPECT_EQ(Findings("import os\nos.makedirs('cuda_extensions', exist_ok=True)\n"), "");
  EXPECT_EQ(Findings("import os\nos.makedirs('/tmp/x')\nos.mkdir('../up')\nos.makedirs(d)\n"
                     "os.makedirs(os.path.join(os.path.dirname(__file__), 'b'), exist_ok=True)\n"),
            "H20:10 H20:11");
}

TEST(PythonRulesTest, DynamicLookupsOnTorch) {
  EXPECT_EQ(Findings("mm = getattr(torch, 'mat' + 'mul')\n"), "H01:9");
  EXPECT_EQ(Findings("mm = getattr(torch, 'matmul')\n"), "H01:9");
  EXPECT_EQ(Findings("mm = torch.__dict__['matmul']\nv = vars(torch.nn.functional)\n"),
            "H01:9 H01:10");
  EXPECT_EQ(Findings("dt = getattr(torch, 'float32')\n"), "");  // a literal, harmless name
}

TEST(PythonRulesTest, PrecisionDowngrade) {
  EXPECT_EQ(Findings(WithForward("        return ext.f(x.half())\n")), "H13:13");
  EXPECT_EQ(Findings(WithForward("        return ext.f(x.to(torch.bfloat16))\n")), "H13:13");
  EXPECT_EQ(Findings("torch.backends.cuda.matmul.allow_tf32 = True\n"
                     "torch.set_float32_matmul_precision('high')\n"
                     "from torch.cuda.amp import autocast\n"
                     "with autocast():\n"
                     "    pass\n"),
            "H13:9 H13:10 H13:12");
  // Importing autocast is not using it; turning it off is the opposite of a downgrade.
  EXPECT_EQ(Findings("from torch.cuda.amp import autocast\n"), "");
  EXPECT_EQ(Findings("class A:\n"
                     "    @torch.cuda.amp.autocast(enabled=False)\n"
                     "    def f(self, x):\n"
                     "        return x\n"
                     "with torch.autocast('cuda', enabled=False):\n"
                     "    pass\n"),
            "");
  EXPECT_EQ(Findings("with torch.cuda.amp.autocast(enabled=torch.cuda.is_available()):\n"
                     "    pass\n"),
            "H13:9");
  EXPECT_EQ(Findings(WithForward("        return ext.f(x.to(dtype='float16'))\n")), "H13:13");
  // Asking what a tensor is computes nothing in half precision (CUDA-L1's matmuls pick their
  // kernel this way); a cast beside such a test is still found.
  EXPECT_EQ(Findings("def f(x):\n"
                     "    if x.dtype == torch.float16 or torch.bfloat16 is x.dtype:\n"
                     "        return 1\n"
                     "    if x.dtype in (torch.float16, torch.bfloat16):\n"
                     "        return 2\n"
                     "    if x.dtype not in [torch.half]:\n"
                     "        return x.to(torch.float16)\n"),
            "H13:15");
  LegalityOptions half_problem;
  half_problem.fp32_problem = false;
  EXPECT_EQ(Findings(WithForward("        return ext.f(x.half())\n"), half_problem), "");
}

TEST(PythonRulesTest, LocatesFindingsInAReply) {
  const std::string reply =
      std::string("Here you go:\n\n```python\n") + testing::kPrelude + "import gc\n```\n";
  const auto ds = Check(extract::Extract(reply));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].code, "H16");
  EXPECT_EQ(ds[0].line, 12);  // code line 9 + 3 lines before the block
  EXPECT_EQ(ds[0].excerpt, "import gc");
  EXPECT_EQ(ds[0].message,
            "importing gc (the garbage collector's object list) is not allowed (H16)");
}

}  // namespace
}  // namespace kf::legality
