// CudaBackend: elementwise ops, GEMM and bias (cuBLAS), pooling, activations and dropout (cuda_backend.cpp
// says how the files divide the backend and how its streams work).
#include "backend/cuda/cuda_backend_detail.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace hr {

using ops::desc;
using ops::fail;
using ops::ncs;
using ops::bn_dims;
using ops::require_dtype;
using ops::require_float;
using ops::require_same_dtype;
using ops::require_same_shape;
using namespace cuda_detail;

// --- elementwise ---------------------------------------------------------------------------------

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& out) {
    const char* op = "add";
    require_here(op, "a", a);
    require_here(op, "b", b);
    require_here(op, "out", out);
    require_same_shape(op, "a", a, "b", b);
    require_same_shape(op, "a", a, "out", out);
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "out", out);
    require_gpu_float(op, "a", a);
    auto lock = op_lock();
    cuda::add(a.raw(), b.raw(), out.raw(), a.dtype(), a.numel(), compute_);
}

void CudaBackend::axpy(float alpha, const Tensor& x, Tensor& y) {
    const char* op = "axpy";
    require_here(op, "x", x);
    require_here(op, "y", y);
    if (x.numel() != y.numel()) fail(op, "x " + desc(x) + " and y " + desc(y) + " must have the same number of elements");
    require_gpu_float(op, "x", x);
    require_gpu_float(op, "y", y);
    auto lock = op_lock();
    cuda::axpy(alpha, x.raw(), x.dtype(), y.raw(), y.dtype(), x.numel(), compute_);
}

void CudaBackend::scale(Tensor& x, float alpha) {
    require_here("scale", "x", x);
    require_gpu_float("scale", "x", x);
    auto lock = op_lock();
    cuda::scale(x.raw(), x.dtype(), x.numel(), alpha, compute_);
}

// --- linear algebra ------------------------------------------------------------------------------

void CudaBackend::gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                       Tensor& c) {
    const char* op = "gemm";
    require_here(op, "a", a);
    require_here(op, "b", b);
    require_here(op, "c", c);
    if (a.ndim() != 2 || b.ndim() != 2 || c.ndim() != 2)
        fail(op, "expects 2-D a, b, c; got a " + desc(a) + ", b " + desc(b) + ", c " + desc(c));
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "c", c);
    require_gpu_float(op, "a", a);
    const std::int64_t M = trans_a ? a.dim(1) : a.dim(0);
    const std::int64_t K = trans_a ? a.dim(0) : a.dim(1);
    const std::int64_t Kb = trans_b ? b.dim(1) : b.dim(0);
    const std::int64_t N = trans_b ? b.dim(0) : b.dim(1);
    if (K != Kb || c.dim(0) != M || c.dim(1) != N)
        fail(op, std::string("shapes do not match: op(a) ") + shape_str({M, K}) + " @ op(b) " + shape_str({Kb, N}) +
                     " -> c " + shape_str(c.shape()) + " (a " + desc(a) + (trans_a ? " transposed" : "") + ", b " +
                     desc(b) + (trans_b ? " transposed" : "") + ")");
    if (M > INT_MAX || N > INT_MAX || K > INT_MAX || a.dim(1) > INT_MAX || b.dim(1) > INT_MAX)
        fail(op, "dimensions beyond 2^31 are not supported by cuBLAS: a " + desc(a) + ", b " + desc(b));
    auto lock = op_lock();
    if (M == 0 || N == 0) return;
    if (K == 0) {  // C = beta * C, explicitly (as the CPU backend)
        if (beta == 0.0f)
            HR_CUDA_CHECK(cudaMemsetAsync(c.raw(), 0, c.nbytes(), compute_));
        else
            cuda::scale(c.raw(), c.dtype(), c.numel(), beta, compute_);
        return;
    }
    // Row-major C (M, N) is column-major C^T (N, M) = op(B)^T (N, K) @ op(A)^T (K, M): pass B first.
    // A row-major matrix read column-major is its transpose, so op(B)^T is B's buffer with
    // CUBLAS_OP_N when trans_b is false (and CUBLAS_OP_T when true); the same for A.
    const cublasOperation_t opb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opa = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int lda = static_cast<int>(std::max<std::int64_t>(1, a.dim(1)));
    const int ldb = static_cast<int>(std::max<std::int64_t>(1, b.dim(1)));
    const int ldc = static_cast<int>(std::max<std::int64_t>(1, c.dim(1)));
    cudaDataType_t type = CUDA_R_32F;
    cublasComputeType_t compute = options_.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    if (a.dtype() == DType::bf16) {
        type = CUDA_R_16BF;
        compute = CUBLAS_COMPUTE_32F;
    } else if (a.dtype() == DType::f16) {
        type = CUDA_R_16F;
        compute = CUBLAS_COMPUTE_32F;
    }
    HR_CUBLAS_CHECK(cublasGemmEx(cublas_, opb, opa, static_cast<int>(N), static_cast<int>(M), static_cast<int>(K),
                                 &alpha, b.raw(), type, ldb, a.raw(), type, lda, &beta, c.raw(), type, ldc, compute,
                                 CUBLAS_GEMM_DEFAULT));
}

void CudaBackend::add_bias(Tensor& y, const Tensor& bias) {
    const char* op = "add_bias";
    require_here(op, "y", y);
    require_here(op, "bias", bias);
    std::int64_t N, C, S;
    ncs(op, y, bias, "bias", N, C, S);
    require_gpu_float(op, "y", y);
    require_gpu_float(op, "bias", bias);
    auto lock = op_lock();
    cuda::add_bias(y.raw(), y.dtype(), bias.raw(), bias.dtype(), N, C, S, compute_);
}

void CudaBackend::bias_grad(const Tensor& dy, Tensor& dbias) {
    const char* op = "bias_grad";
    require_here(op, "dy", dy);
    require_here(op, "dbias", dbias);
    std::int64_t N, C, S;
    ncs(op, dy, dbias, "dbias", N, C, S);
    require_gpu_float(op, "dy", dy);
    require_gpu_float(op, "dbias", dbias);
    auto lock = op_lock();
    cuda::bias_grad(dy.raw(), dy.dtype(), dbias.raw(), dbias.dtype(), N, C, S, scratch(), compute_);
}

// --- pooling -------------------------------------------------------------------------------------

namespace {

// The shared checks (cpu_common.h), plus the GPU's 32-bit plane limit.
void check_pool(const char* op, const Tensor& x, const Tensor& y, const Pool2dParams& p) {
    ops::check_pool(op, x, y, p);
    if (x.dim(2) * x.dim(3) > INT_MAX) fail(op, "planes beyond 2^31 elements are not supported: x " + desc(x));
}

}  // namespace

void CudaBackend::maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) {
    const char* op = "maxpool2d_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_here(op, "indices", indices);
    check_pool(op, x, y, p);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "y", y, "indices", indices);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::maxpool_forward(x.raw(), y.raw(), indices.data<std::int32_t>(), x.dtype(), x.dim(0) * x.dim(1),
                          int(x.dim(2)), int(x.dim(3)), int(y.dim(2)), int(y.dim(3)), p, compute_);
}

namespace {
void check_maxpool_backward(const char* op, const CudaBackend& be, const Tensor& dy, const Tensor& indices,
                            const Tensor& dx) {
    be.require_here(op, "dy", dy);
    be.require_here(op, "indices", indices);
    be.require_here(op, "dx", dx);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "dy", dy, "indices", indices);
    require_same_dtype(op, "dy", dy, "dx", dx);
    if (dy.ndim() != 4 || dx.ndim() != 4 || dy.dim(0) != dx.dim(0) || dy.dim(1) != dx.dim(1))
        fail(op, "expects dy (N, C, Ho, Wo) and dx (N, C, H, W), got dy " + desc(dy) + ", dx " + desc(dx));
    if (dx.dim(2) * dx.dim(3) > INT_MAX || dy.dim(2) * dy.dim(3) > INT_MAX)
        fail(op, "planes beyond 2^31 elements are not supported: dx " + desc(dx));
    require_gpu_float(op, "dy", dy);
}
}  // namespace

// Indices are not range-checked here (that would need a device round trip); out-of-plane indices are
// skipped by the kernels.
void CudaBackend::maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) {
    const char* op = "maxpool2d_backward";
    check_maxpool_backward(op, *this, dy, indices, dx);
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), nullptr, compute_);
}

void CudaBackend::maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                             const Pool2dParams& p) {
    const char* op = "maxpool2d_backward";
    check_maxpool_backward(op, *this, dy, indices, dx);
    check_pool(op, dx, dy, p);  // dy's shape is the forward's output for dx's shape and p
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), &p, compute_);
}

void CudaBackend::avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) {
    const char* op = "avgpool2d_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    check_pool(op, x, y, p);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::avgpool_forward(x.raw(), y.raw(), x.dtype(), x.dim(0) * x.dim(1), int(x.dim(2)), int(x.dim(3)),
                          int(y.dim(2)), int(y.dim(3)), p, compute_);
}

void CudaBackend::avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) {
    const char* op = "avgpool2d_backward";
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    check_pool(op, dx, dy, p);
    require_gpu_float(op, "dx", dx);
    auto lock = op_lock();
    cuda::avgpool_backward(dy.raw(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1), int(dx.dim(2)), int(dx.dim(3)),
                           int(dy.dim(2)), int(dy.dim(3)), p, compute_);
}

// --- activations ---------------------------------------------------------------------------------

void CudaBackend::activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    const char* op = "activation_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::activation_forward(kind, alpha, x.raw(), y.raw(), x.dtype(), x.numel(), compute_);
}

void CudaBackend::activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                                      const Tensor& dy, Tensor& dx) {
    const char* op = "activation_backward";
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    require_gpu_float(op, "dy", dy);
    const bool need_x = kind == ActivationKind::gelu || kind == ActivationKind::leaky_relu;
    const bool have_x = x.defined(), have_y = y.defined();
    if (need_x && !have_x) fail(op, "this activation's backward needs the forward input x");
    if (!have_x && !have_y) fail(op, "needs the forward input x or output y; both are undefined");
    if (have_x) {
        require_here(op, "x", x);
        require_same_shape(op, "x", x, "dy", dy);
        require_same_dtype(op, "x", x, "dy", dy);
    }
    if (have_y) {
        require_here(op, "y", y);
        require_same_shape(op, "y", y, "dy", dy);
        require_same_dtype(op, "y", y, "dy", dy);
    }
    auto lock = op_lock();
    cuda::activation_backward(kind, alpha, have_x ? x.raw() : nullptr, have_y ? y.raw() : nullptr, dy.raw(),
                              dx.raw(), dy.dtype(), dy.numel(), compute_);
}

// --- dropout -------------------------------------------------------------------------------------

void CudaBackend::dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                                  std::uint64_t offset) {
    const char* op = "dropout_forward";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_here(op, "mask", mask);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != x.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as x " + desc(x));
    if (!(p >= 0.0f && p <= 1.0f)) fail(op, "probability p = " + std::to_string(p) + " must be in [0, 1]");
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;  // as the CPU, in f32
    cuda::dropout_forward(x.raw(), y.raw(), mask.data<std::uint8_t>(), x.dtype(), x.numel(), p, s, seed, offset,
                          compute_);
}

void CudaBackend::dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
    const char* op = "dropout_backward";
    require_here(op, "dy", dy);
    require_here(op, "mask", mask);
    require_here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != dy.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as dy " + desc(dy));
    require_gpu_float(op, "dy", dy);
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    cuda::dropout_backward(dy.raw(), mask.data<std::uint8_t>(), dx.raw(), dy.dtype(), dy.numel(), s, compute_);
}

}  // namespace hr
