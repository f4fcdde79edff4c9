"""The kernel sources of the scripted policy (scripted_policy.py): one small elementwise library
per backend, in a few variants, each a single load_inline source shared by every problem.

A variant is one extension: every candidate that uses it has the same kernel source, flags and
module name, so kforge builds it once (its artifact cache is keyed by those) however many
problems and samples use it. A loop of N problems x G samples therefore compiles a handful of
extensions, not N x G: on the H200 one CUDA build costs about a minute of CPU
(docs/PERFORMANCE.md).

Every variant exposes the same functions (the fused one adds `chain`):
    unary(x, op, a, b)         y = f_op(x; a, b) elementwise         (op codes: UNARY below)
    binary(x, y, op)           x (+ * - max) y, tensors of one shape (BINARY)
    channel(x, p, op)          x (+ *) p along dim 1, p holding size(1) values (CHANNEL)
    chain(x, ops, as_, bs)     several unary ops in one pass (variant "fused" only)
Inputs must be contiguous (the callers pass .contiguous()); fp32, bf16 and fp16, computed in
fp32. An op code outside the table fails a TORCH_CHECK (the except-fallback cheat uses that).
Standard library only.
"""

# Op codes, shared by both backends' sources and the policy's rewriter.
UNARY = {"relu": 0, "gelu": 1, "gelu_tanh": 2, "silu": 3, "sigmoid": 4, "tanh": 5,
         "softplus": 6, "mish": 7, "hardswish": 8, "abs": 9, "leaky_relu": 10, "elu": 11,
         "clamp": 12, "scale": 13}
BINARY = {"add": 0, "mul": 1, "sub": 2, "maximum": 3}
CHANNEL = {"bias_add": 0, "channel_scale": 1}
MAX_CHAIN = 8

VARIANTS = ("loop", "unroll4", "fused")

# The scalar functions, written once for C++ and CUDA: FN(exp) is std::exp, or expf in CUDA.
_APPLY = r"""
DEVFN float apply_op(int64_t op, float v, float a, float b) {
    switch (op) {
        case 0: return v > 0.0f ? v : 0.0f;
        case 1: return 0.5f * v * (1.0f + FN(erf)(v * 0.7071067811865476f));
        case 2: {
            const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
            return 0.5f * v * (1.0f + FN(tanh)(u));
        }
        case 3: return v / (1.0f + FN(exp)(-v));
        case 4: return 1.0f / (1.0f + FN(exp)(-v));
        case 5: return FN(tanh)(v);
        case 6: return v > 20.0f ? v : FN(log1p)(FN(exp)(v));
        case 7: return v * FN(tanh)(v > 20.0f ? v : FN(log1p)(FN(exp)(v)));
        case 8: return v * FN(fmin)(FN(fmax)(v + 3.0f, 0.0f), 6.0f) / 6.0f;
        case 9: return FN(fabs)(v);
        case 10: return v > 0.0f ? v : v * a;
        case 11: return v > 0.0f ? v : a * FN(expm1)(v);
        case 12: return FN(fmin)(FN(fmax)(v, a), b);
        case 13: return v * a;
        default: return v;
    }
}

DEVFN float apply_bin(int64_t op, float x, float y) {
    switch (op) {
        case 0: return x + y;
        case 1: return x * y;
        case 2: return x - y;
        default: return x > y ? x : y;
    }
}

struct Chain {
    int64_t n;
    int64_t op[MAX_CHAIN];
    float a[MAX_CHAIN];
    float b[MAX_CHAIN];
};

DEVFN float apply_chain(const Chain& c, float v) {
    for (int64_t k = 0; k < c.n; ++k) v = apply_op(c.op[k], v, c.a[k], c.b[k]);
    return v;
}
"""

# Every check's message is one string literal: on the GPU machine (an H100, 2026-12-07) a
# failing TORCH_CHECK whose message streamed a value killed the process, where a literal raised
# (tests/rl/test_kernel_library.py): that machine's compiler links a static libstdc++ into each
# extension, and formatting a number there crashes.
_CHECKS = r"""
static void check_input(const torch::Tensor& x) {
    TORCH_CHECK(x.is_contiguous(), "inputs must be contiguous");
    TORCH_CHECK(x.device().type() == DEVICE_TYPE, "inputs on the wrong device");
}

"""

# ---- C++ (the CPU backend) ------------------------------------------------------------------
# The loop over elements per variant; BODY(i) computes and stores element i.
_CPU_LOOP = {
    "loop": "for (int64_t i = 0; i < n; ++i) { BODY(i); }",
    "unroll4": ("int64_t i = 0;\n"
                "    for (; i + 4 <= n; i += 4) {\n"
                "        BODY(i); BODY(i + 1); BODY(i + 2); BODY(i + 3);\n"
                "    }\n"
                "    for (; i < n; ++i) { BODY(i); }"),
}

_CPU_BODY = r"""
template <typename scalar_t>
static void unary_impl(const scalar_t* in, scalar_t* out, int64_t n, int64_t op, float a, float b) {
#define BODY(i) out[i] = static_cast<scalar_t>(apply_op(op, static_cast<float>(in[i]), a, b))
    LOOP
#undef BODY
}

template <typename scalar_t>
static void binary_impl(const scalar_t* p, const scalar_t* q, scalar_t* out, int64_t n,
                        int64_t op) {
#define BODY(i) \
    out[i] = static_cast<scalar_t>(apply_bin(op, static_cast<float>(p[i]), static_cast<float>(q[i])))
    LOOP
#undef BODY
}

template <typename scalar_t>
static void channel_impl(const scalar_t* p, const scalar_t* q, scalar_t* out, int64_t n,
                         int64_t channels, int64_t inner, int64_t op) {
#define BODY(i)                                                        \
    out[i] = static_cast<scalar_t>(apply_bin(op, static_cast<float>(p[i]), \
                                             static_cast<float>(q[((i) / inner) % channels])))
    LOOP
#undef BODY
}

torch::Tensor unary(torch::Tensor x, int64_t op, double a, double b) {
    check_input(x);
    TORCH_CHECK(op >= 0 && op < NUM_UNARY, "unary: unknown op");
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "unary", [&] {
        unary_impl<scalar_t>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), x.numel(), op,
                             static_cast<float>(a), static_cast<float>(b));
    });
    return y;
}

torch::Tensor binary(torch::Tensor x, torch::Tensor w, int64_t op) {
    check_input(x);
    check_input(w);
    TORCH_CHECK(x.sizes() == w.sizes() && x.scalar_type() == w.scalar_type(),
                "binary: operands of one shape and dtype");
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "binary", [&] {
        binary_impl<scalar_t>(x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
                              y.data_ptr<scalar_t>(), x.numel(), op);
    });
    return y;
}

torch::Tensor channel(torch::Tensor x, torch::Tensor w, int64_t op) {
    check_input(x);
    check_input(w);
    TORCH_CHECK(x.dim() >= 2 && w.numel() == x.size(1), "channel: one value per channel");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel(), channels = x.size(1);
    if (n == 0) return y;
    const int64_t inner = n / x.size(0) / channels;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "channel", [&] {
        channel_impl<scalar_t>(x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(),
                               y.data_ptr<scalar_t>(), n, channels, inner, op);
    });
    return y;
}
"""

# The chain of unary ops both backends' chain kernels take, from the ops' ids and constants.
_MAKE_CHAIN = r"""
static Chain make_chain(const std::vector<int64_t>& ops, const std::vector<double>& as,
                        const std::vector<double>& bs) {
    TORCH_CHECK(!ops.empty() && ops.size() <= MAX_CHAIN && as.size() == ops.size() &&
                bs.size() == ops.size(), "chain: 1 to 8 ops, one a and one b each");
    Chain c;
    c.n = static_cast<int64_t>(ops.size());
    for (size_t k = 0; k < ops.size(); ++k) {
        TORCH_CHECK(ops[k] >= 0 && ops[k] < NUM_UNARY, "chain: unknown op");
        c.op[k] = ops[k];
        c.a[k] = static_cast<float>(as[k]);
        c.b[k] = static_cast<float>(bs[k]);
    }
    return c;
}"""

_CPU_CHAIN = _MAKE_CHAIN + r"""
template <typename scalar_t>
static void chain_impl(const scalar_t* in, scalar_t* out, int64_t n, const Chain& c) {
    for (int64_t i = 0; i < n; ++i) {
        out[i] = static_cast<scalar_t>(apply_chain(c, static_cast<float>(in[i])));
    }
}

torch::Tensor chain(torch::Tensor x, std::vector<int64_t> ops, std::vector<double> as,
                    std::vector<double> bs) {
    check_input(x);
    const Chain c = make_chain(ops, as, bs);
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "chain", [&] {
        chain_impl<scalar_t>(x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), x.numel(), c);
    });
    return y;
}
"""

# ---- CUDA ---------------------------------------------------------------------------------
_CUDA_KERNELS = {
    "loop": r"""
#define GRID_LOOP(i) \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; \
         i += (int64_t)blockDim.x * gridDim.x)
#define PER_THREAD 1
""",
    # Each thread takes four elements a block-width apart per step: fewer blocks, the same
    # coalesced accesses.
    "unroll4": r"""
#define GRID_LOOP(i) \
    for (int64_t base = (int64_t)blockIdx.x * blockDim.x * 4 + threadIdx.x; base < n; \
         base += (int64_t)blockDim.x * gridDim.x * 4) \
        for (int64_t i = base, k_ = 0; k_ < 4; ++k_, i += blockDim.x) \
            if (i < n)
#define PER_THREAD 4
""",
}

_CUDA_BODY = r"""
template <typename scalar_t>
__global__ void unary_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                             int64_t n, int64_t op, float a, float b) {
    GRID_LOOP(i) { out[i] = static_cast<scalar_t>(apply_op(op, static_cast<float>(in[i]), a, b)); }
}

template <typename scalar_t>
__global__ void binary_kernel(const scalar_t* __restrict__ p, const scalar_t* __restrict__ q,
                              scalar_t* __restrict__ out, int64_t n, int64_t op) {
    GRID_LOOP(i) {
        out[i] = static_cast<scalar_t>(apply_bin(op, static_cast<float>(p[i]),
                                                 static_cast<float>(q[i])));
    }
}

template <typename scalar_t>
__global__ void channel_kernel(const scalar_t* __restrict__ p, const scalar_t* __restrict__ q,
                               scalar_t* __restrict__ out, int64_t n, int64_t channels,
                               int64_t inner, int64_t op) {
    GRID_LOOP(i) {
        out[i] = static_cast<scalar_t>(apply_bin(op, static_cast<float>(p[i]),
                                                      static_cast<float>(q[(i / inner) % channels])));
    }
}

static int blocks_for(int64_t n) {
    const int64_t per_block = 256 * PER_THREAD;
    return (int)std::max<int64_t>(1, std::min<int64_t>((n + per_block - 1) / per_block, 65535));
}

torch::Tensor unary(torch::Tensor x, int64_t op, double a, double b) {
    check_input(x);
    TORCH_CHECK(op >= 0 && op < NUM_UNARY, "unary: unknown op");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "unary", [&] {
        unary_kernel<scalar_t><<<blocks_for(n), 256, 0, stream>>>(
            x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, op, (float)a, (float)b);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor binary(torch::Tensor x, torch::Tensor w, int64_t op) {
    check_input(x);
    check_input(w);
    TORCH_CHECK(x.sizes() == w.sizes() && x.scalar_type() == w.scalar_type(),
                "binary: operands of one shape and dtype");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "binary", [&] {
        binary_kernel<scalar_t><<<blocks_for(n), 256, 0, stream>>>(
            x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, op);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

torch::Tensor channel(torch::Tensor x, torch::Tensor w, int64_t op) {
    check_input(x);
    check_input(w);
    TORCH_CHECK(x.dim() >= 2 && w.numel() == x.size(1), "channel: one value per channel");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel(), channels = x.size(1);
    if (n == 0) return y;
    const int64_t inner = n / x.size(0) / channels;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "channel", [&] {
        channel_kernel<scalar_t><<<blocks_for(n), 256, 0, stream>>>(
            x.data_ptr<scalar_t>(), w.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, channels,
            inner, op);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_CUDA_CHAIN = _MAKE_CHAIN + r"""
template <typename scalar_t>
__global__ void chain_kernel(const scalar_t* __restrict__ in, scalar_t* __restrict__ out,
                             int64_t n, Chain c) {
    GRID_LOOP(i) { out[i] = static_cast<scalar_t>(apply_chain(c, static_cast<float>(in[i]))); }
}

torch::Tensor chain(torch::Tensor x, std::vector<int64_t> ops, std::vector<double> as,
                    std::vector<double> bs) {
    check_input(x);
    const Chain c = make_chain(ops, as, bs);
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, x.scalar_type(), "chain", [&] {
        chain_kernel<scalar_t><<<blocks_for(n), 256, 0, stream>>>(
            x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, c);
    });
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

_DECLS = [
    "torch::Tensor unary(torch::Tensor x, int64_t op, double a, double b);",
    "torch::Tensor binary(torch::Tensor x, torch::Tensor w, int64_t op);",
    "torch::Tensor channel(torch::Tensor x, torch::Tensor w, int64_t op);",
]
_CHAIN_DECL = ("torch::Tensor chain(torch::Tensor x, std::vector<int64_t> ops, "
               "std::vector<double> as, std::vector<double> bs);")


def functions(variant):
    return ["unary", "binary", "channel"] + (["chain"] if variant == "fused" else [])


def _prelude(cuda):
    head = ["#include <torch/extension.h>"]
    if cuda:
        head.append("#include <ATen/cuda/CUDAContext.h>")
    head += ["#include <algorithm>", "#include <cmath>", "#include <vector>", "",
             "#define MAX_CHAIN %d" % MAX_CHAIN, "#define NUM_UNARY %d" % len(UNARY)]
    if cuda:
        head += ["#define DEVFN __device__ __forceinline__", "#define FN(name) name##f",
                 "#define DEVICE_TYPE torch::kCUDA"]
    else:
        head += ["#define DEVFN static inline", "#define FN(name) std::name",
                 "#define DEVICE_TYPE torch::kCPU"]
    return "\n".join(head) + "\n"


def source(backend, variant, typo=False):
    """(cpp_source, cuda_source or None) of one variant; typo: it includes a header that
    does not exist (the compile-error mutation)."""
    cuda = backend == "cuda"
    if cuda:
        body = _CUDA_KERNELS["unroll4" if variant == "unroll4" else "loop"] + _CUDA_BODY
        if variant == "fused":
            body += _CUDA_CHAIN
    else:
        loop = _CPU_LOOP["unroll4" if variant == "unroll4" else "loop"]
        body = _CPU_BODY.replace("LOOP", loop)
        if variant == "fused":
            body += _CPU_CHAIN
    text = _prelude(cuda) + _APPLY + _CHECKS + body
    if typo:
        # A header that does not exist (models invent them): the compiler stops at once,
        # before it reads torch's headers, so this failure costs no real build.
        text = "#include <torch/kernels/elementwise_ops.h>\n" + text
    decls = "\n".join(_DECLS + ([_CHAIN_DECL] if variant == "fused" else [])) + "\n"
    return (decls, text) if cuda else (text, None)


def module_name(backend, variant, typo=False):
    tag = variant + ("_typo" if typo else "")
    return "kforge_loop_%s_%s" % (backend, tag)


def load_block(backend, variant, typo=False, var="_k"):
    """The Python lines that build the variant: `var = load_inline(...)`."""
    cpp, cu = source(backend, variant, typo)
    name = module_name(backend, variant, typo)
    lines = ["_cpp_source = r'''%s'''" % cpp]
    if cu is not None:
        lines.append("_cuda_source = r'''%s'''" % cu)
    lines.append("%s = load_inline(" % var)
    lines.append("    name=%r," % name)
    lines.append("    cpp_sources=_cpp_source,")
    if cu is not None:
        lines.append("    cuda_sources=_cuda_source,")
        lines.append("    extra_cuda_cflags=['-O3'],")
    else:
        lines.append("    extra_cflags=['-O3'],")
    lines.append("    functions=%r," % functions(variant))
    lines.append("    verbose=False,")
    lines.append(")")
    return "\n".join(lines) + "\n"
