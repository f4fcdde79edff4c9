#include <gtest/gtest.h>

#include "common/rules.h"
#include "legality/testing.h"

namespace kf::legality {
namespace {

// A candidate whose cuda_sources is `kernel` (starting on line 5) and an honest ModelNew.
std::string WithKernel(const std::string& kernel) {
  return "import torch\n"                                       // 1
         "import torch.nn as nn\n"                              // 2
         "from torch.utils.cpp_extension import load_inline\n"  // 3
         "cuda_src = r'''\n" +                                  // 4
         kernel +                                               // 5...
         "'''\n"
         "ext = load_inline(name='e', cpp_sources='', cuda_sources=cuda_src, functions=['f'])\n"
         "class ModelNew(nn.Module):\n"
         "    def forward(self, x):\n"
         "        return ext.f(x)\n";
}
std::string SourceFindings(const std::string& kernel, LegalityOptions opt = {}) {
  return testing::Summary(Check(extract::Extract(WithKernel(kernel)), opt));
}

// A CUDA error check that prints and aborts is not proof of a forged result: noted only; a
// process that exits during a call ends runtime_error.
TEST(SourceRulesTest, ExitInAnErrorCheckIsOnlyNoted) {
  EXPECT_EQ(SourceFindings("#include <cstdio>\n"
                     "#include <cstdlib>\n"
                     "void check(int err) {\n"
                     "  if (err) { printf(\"error %d\\n\", err); abort(); }\n"
                     "  if (err > 1) std::exit(1);\n"
                     "}\n"),
            "H17_note:8 H17_note:9");
}

// Python run from C++ is out of the Python rules' sight (gc scans, frames, timer patches): H16.
// Letting go of the GIL is not.
TEST(SourceRulesTest, PythonRunFromCppIsH16) {
  EXPECT_EQ(SourceFindings("#include <torch/extension.h>\n"
                           "namespace py = pybind11;\n"
                           "void a() { py::exec(\"import gc\"); }\n"
                           "void b() { auto m = pybind11::module_::import(\"time\"); }\n"
                           "void c() { PyRun_SimpleString(\"x = 1\"); }\n"
                           "void d() { PyEval_SetProfile(nullptr, nullptr); }\n"
                           "void e() { PyObject* m = PyImport_ImportModule(\"sys\"); }\n"),
            "H16:7 H16:8 H16:9 H16:10 H16:11");
  EXPECT_EQ(SourceFindings("#include <torch/extension.h>\n"
                           "torch::Tensor f(torch::Tensor x) {\n"
                           "  pybind11::gil_scoped_release nogil;\n"
                           "  PyGILState_STATE s = PyGILState_Ensure();\n"
                           "  PyGILState_Release(s);\n"
                           "  return torch::empty_like(x);\n"
                           "}\n"),
            "");
}

TEST(SourceRulesTest, HonestKernelPasses) {
  EXPECT_EQ(
      SourceFindings(
          "#include <torch/extension.h>\n"
          "#include <ATen/cuda/CUDAContext.h>\n"
          "// not cublasSgemm: we write our own\n"
          "__global__ void k(const float* x, float* y, int n) {\n"
          "  int half = n / 2; float v = x[0] * 2.0f; y[half] = v - 1.0f;\n"
          "}\n"
          "torch::Tensor f(torch::Tensor x) {\n"
          "  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, \"cuda\");\n"
          "  auto y = torch::empty_like(x);\n"
          "  auto stream = at::cuda::getCurrentCUDAStream();\n"
          "  const int n = x.numel() * 2 + x.size(0);\n"
          "  k<<<(n + 255) / 256, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
          "  return y;\n"
          "}\n"),
      "");
}

TEST(SourceRulesTest, LibraryCalls) {
  EXPECT_EQ(SourceFindings("#include <cublas_v2.h>\n"
                     "void g(cublasHandle_t h) { cublasSgemm(h); }\n"),
            "H04:5 H04:6");
  EXPECT_EQ(SourceFindings("torch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
                     "  return at::matmul(a, b);\n"
                     "}\n"),
            "H04:6");
  EXPECT_EQ(SourceFindings("torch::Tensor f(torch::Tensor a, torch::Tensor b) {\n"
                     "  auto c = a.mm(b);\n"
                     "  return torch::relu(c);\n"
                     "}\n"),
            "H04:6 H04:7");
  EXPECT_EQ(SourceFindings("torch::Tensor f(const torch::Tensor& a, torch::Tensor b) {\n"
                     "  return a + b;\n"
                     "}\n"),
            "H04:6");
  EXPECT_EQ(SourceFindings("#include <ATen/native/Activation.h>\n#include <cudnn.h>\n"), "H04:5 H04:6");
  LegalityOptions libs;
  libs.allow_libraries = true;
  EXPECT_EQ(SourceFindings("#include <cublas_v2.h>\nvoid g() { cublasSgemm(0); }\n", libs), "");
}

TEST(SourceRulesTest, StreamsThreadsAndEscapes) {
  EXPECT_EQ(SourceFindings("void g() { cudaStream_t s; cudaStreamCreate(&s); }\n"), "H07:5");
  EXPECT_EQ(SourceFindings("void g() { std::thread t([]{}); t.detach(); }\n"), "H07:5");
  EXPECT_EQ(SourceFindings("void g() {\n  pthread_create(0, 0, 0, 0);\n  auto s = "
                     "at::cuda::getStreamFromPool();\n}\n"),
            "H07:6 H07:7");
  EXPECT_EQ(SourceFindings("void g(void** f, cudaDriverEntryPointQueryResult* r) {\n"
                     "  cudaGetDriverEntryPoint(\"cuStr\" \"eamCreate\", f, 0, r);\n"
                     "  cuGetProcAddress(\"cuLaunchKernel\", f, 12000, 0, 0);\n}\n"),
            "H07:6 H07:7");
  EXPECT_EQ(SourceFindings("void g() {\n  try { h(); } catch (...) {}\n}\n"), "H03:6");
  EXPECT_EQ(
      SourceFindings("void g() {\n  FILE* f = fopen(\"/x\", \"r\");\n  auto e = getenv(\"X\");\n}\n"),
      "H20:6 H15:7");
  EXPECT_EQ(SourceFindings("void g(cudaStreamAttrValue v) {\n  v.accessPolicyWindow.num_bytes = 1;\n}\n"),
            "H18:6");
}

// c10's device-guard interface reaches the same side streams as getStreamFromPool and switches
// the current stream as setCurrentCUDAStream does (seen on an H100, 2026-12-05: a
// getStreamFromGlobalPool stream caught only by the wall clock).
TEST(SourceRulesTest, DeviceGuardStreamsAreH07) {
  EXPECT_EQ(SourceFindings("void g(torch::Tensor x) {\n"
                           "  static c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);\n"
                           "  cudaStream_t side = c10::cuda::CUDAStream("
                           "impl.getStreamFromGlobalPool(x.device(), false)).stream();\n"
                           "}\n"),
            "H07:6 H07:7");
  EXPECT_EQ(SourceFindings("void g(c10::Device d) {\n"
                           "  auto* impl = c10::impl::getDeviceGuardImpl(d.type());\n"
                           "  auto s = impl->getNewStream(d, 0);\n"
                           "  auto old = impl->exchangeStream(s);\n"
                           "}\n"),
            "H07:6 H07:7 H07:8");
  EXPECT_EQ(SourceFindings("void g(const c10::impl::DeviceGuardImplInterface* i) {}\n"
                           "auto r = c10::impl::device_guard_impl_registry[1].load();\n"
                           "C10_REGISTER_GUARD_IMPL(CUDA, MyGuard);\n"
                           "c10::impl::DeviceGuardImplRegistrar reg(c10::DeviceType::CUDA, 0);\n"
                           "c10::cuda::impl::CUDAGuardImpl cuda_impl;\n"),
            "H07:5 H07:6 H07:7 H07:8 H07:9");
  // A pool stream rebuilt from its id.
  EXPECT_EQ(SourceFindings("void g(int64_t id, c10::Device d) {\n"
                           "  auto a = c10::Stream::unpack3(id, 0, c10::DeviceType::CUDA);\n"
                           "  auto b = c10::Stream(c10::Stream::UNSAFE, d, id);\n"
                           "  auto c = c10::cuda::CUDAStream::unpack(id);\n"
                           "}\n"),
            "H07:6 H07:7 H07:8");
  // The current and default streams and a guard over them stay allowed.
  EXPECT_EQ(SourceFindings("void g(torch::Tensor x) {\n"
                           "  auto s = at::cuda::getCurrentCUDAStream();\n"
                           "  at::cuda::CUDAStreamGuard guard(s);\n"
                           "  auto d = c10::cuda::getDefaultCUDAStream();\n"
                           "}\n"),
            "");
}

// CUDA graphs: H07 by default (the strict policy); where the job allows them (the kernelbench
// policy) only the note H07_graph, which ends nothing. Host nodes are host callbacks and side
// streams stay side streams either way.
TEST(SourceRulesTest, CudaGraphsAreH07UnlessTheJobAllowsThem) {
  LegalityOptions graphs;
  graphs.allow_graphs = true;
  const std::string runtime_api =
      "void g(float* x, cudaKernelNodeParams* p) {\n"
      "  cudaGraph_t graph;\n"
      "  cudaGraphCreate(&graph, 0);\n"
      "  cudaGraphNode_t node;\n"
      "  cudaGraphAddKernelNode(&node, graph, nullptr, 0, p);\n"
      "  cudaGraphExec_t exec;\n"
      "  cudaGraphInstantiate(&exec, graph, 0);\n"
      "  cudaGraphLaunch(exec, at::cuda::getCurrentCUDAStream());\n"
      "}\n";
  EXPECT_EQ(SourceFindings(runtime_api), "H07:6 H07:7 H07:8 H07:9 H07:10 H07:11 H07:12");
  EXPECT_EQ(SourceFindings(runtime_api, graphs),
            "H07_graph:6 H07_graph:7 H07_graph:8 H07_graph:9 H07_graph:10 H07_graph:11 "
            "H07_graph:12");
  const auto notes = Check(extract::Extract(WithKernel(runtime_api)), graphs);
  ASSERT_FALSE(notes.empty());
  for (const Diagnostic& d : notes) {
    EXPECT_EQ(d.severity, Severity::kInfo) << d.message;
    EXPECT_EQ(d.hint, RuleHint("H07_graph"));
    EXPECT_EQ(d.message.rfind("allowed under the kernelbench policy: kernel source uses ", 0), 0u)
        << d.message;
  }
  // The driver's graphs, stream capture and ATen's C++ graph are graphs too.
  const std::string other_spellings =
      "void g(CUgraphExec e, CUstream s, cudaStream_t t, cudaGraph_t* out) {\n"
      "  cuGraphLaunch(e, s);\n"
      "  cudaStreamBeginCapture(t, cudaStreamCaptureModeThreadLocal);\n"
      "  cudaStreamEndCapture(t, out);\n"
      "  at::cuda::CUDAGraph graph;\n"
      "  graph.capture_begin();\n"
      "  graph.capture_end();\n"
      "  graph.replay();\n"
      "}\n";
  EXPECT_EQ(SourceFindings(other_spellings), "H07:5 H07:6 H07:7 H07:8 H07:9");
  EXPECT_EQ(SourceFindings(other_spellings, graphs),
            "H07_graph:5 H07_graph:6 H07_graph:7 H07_graph:8 H07_graph:9");
  // What stays H07 with graphs allowed: a host node (a host callback), the stream a graph would
  // be launched on, a host function launched by the driver.
  const std::string still_h07 =
      "void g(cudaGraphNode_t* n, cudaGraph_t graph, cudaHostNodeParams* p, CUstream cs) {\n"
      "  cudaGraphAddHostNode(n, graph, nullptr, 0, p);\n"
      "  cudaStream_t side;\n"
      "  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);\n"
      "  cuLaunchHostFunc(cs, nullptr, nullptr);\n"
      "}\n";
  EXPECT_EQ(SourceFindings(still_h07, graphs), "H07_graph:5 H07:6 H07:8 H07:9");
  // Graphics interop (cudaGraphics*) is no graph.
  EXPECT_EQ(
      SourceFindings("void g(cudaGraphicsResource_t r) { cudaGraphicsMapResources(1, &r); }\n"),
      "");
}

TEST(SourceRulesTest, ReducedPrecision) {
  // Includes and half types are not proof; conversions and tensor-core MMA are only noted (a
  // tensor-core kernel that meets the fp32 tolerance is honest: the trials decide).
  EXPECT_EQ(SourceFindings("#include <cuda_fp16.h>\n"
                     "#include <mma.h>\n"
                     "__global__ void k(const half* x, __half* y, float* z) {\n"
                     "  y[0] = __float2half(1.0f);\n"
                     "}\n"),
            "H13_note:8");
  const auto notes = Check(extract::Extract(
      WithKernel("__global__ void k(float* y) { y[0] = __half2float(__float2half(y[0])); }\n")));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].severity, Severity::kInfo);
  EXPECT_NE(notes[0].message.find("fp32 tolerance"), std::string::npos) << notes[0].message;
  EXPECT_EQ(SourceFindings("#include <cuda_bf16.h>\n"
                     "template <typename T> __device__ float load(const T* p);\n"
                     "template <> __device__ float load<__nv_bfloat16>(const __nv_bfloat16* p);\n"
                     "void f(torch::Tensor x) { if (x.scalar_type() == at::kHalf) return; }\n"),
            "");
  EXPECT_EQ(SourceFindings("__global__ void k() {\n  nvcuda::wmma::fragment<int> a;\n}\n"), "H13_note:6");
  EXPECT_EQ(SourceFindings("__global__ void k() {\n  "
                     "asm(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {};\");\n}\n"),
            "H13_note:6");
  EXPECT_EQ(SourceFindings("void f(torch::Tensor x) { auto p = x.data_ptr<at::Half>(); }\n"), "");
  EXPECT_EQ(SourceFindings("void f() { setAllowTF32CuBLAS(true); }\n"), "H13:5");
  LegalityOptions half_problem;
  half_problem.fp32_problem = false;
  EXPECT_EQ(SourceFindings("__global__ void k(__half* y) {}\n", half_problem), "");
}

TEST(SourceRulesTest, UnresolvedSourcesAreSkipped) {
  const std::string code = std::string(testing::kPrelude) +
                           "def make():\n    return 'cublasSgemm();'\n"
                           "ext2 = load_inline(name='g', cpp_sources=make(), functions=['f'])\n";
  EXPECT_EQ(testing::Summary(Check(extract::Extract(code))), "");
}

}  // namespace
}  // namespace kf::legality
