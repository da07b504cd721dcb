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
using namespace cuda_detail;

// --- elementwise ---------------------------------------------------------------------------------

void CudaBackend::do_add(const Tensor& a, const Tensor& b, Tensor& out) {
    auto lock = op_lock();
    cuda::add(a.raw(), b.raw(), out.raw(), a.dtype(), a.numel(), compute_);
}

void CudaBackend::do_axpy(float alpha, const Tensor& x, Tensor& y) {
    auto lock = op_lock();
    cuda::axpy(alpha, x.raw(), x.dtype(), y.raw(), y.dtype(), x.numel(), compute_);
}

void CudaBackend::do_scale(Tensor& x, float alpha) {
    auto lock = op_lock();
    cuda::scale(x.raw(), x.dtype(), x.numel(), alpha, compute_);
}

// --- linear algebra ------------------------------------------------------------------------------

void CudaBackend::do_gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta,
                       Tensor& c) {
    const char* op = "gemm";
    const std::int64_t M = trans_a ? a.dim(1) : a.dim(0);
    const std::int64_t K = trans_a ? a.dim(0) : a.dim(1);
    const std::int64_t N = trans_b ? b.dim(0) : b.dim(1);
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

void CudaBackend::do_add_bias(Tensor& y, const Tensor& bias) {
    std::int64_t N, C, S;
    ncs("add_bias", y, bias, "bias", N, C, S);
    auto lock = op_lock();
    cuda::add_bias(y.raw(), y.dtype(), bias.raw(), bias.dtype(), N, C, S, compute_);
}

void CudaBackend::do_bias_grad(const Tensor& dy, Tensor& dbias) {
    std::int64_t N, C, S;
    ncs("bias_grad", dy, dbias, "dbias", N, C, S);
    auto lock = op_lock();
    cuda::bias_grad(dy.raw(), dy.dtype(), dbias.raw(), dbias.dtype(), N, C, S, scratch(), compute_);
}

// --- pooling -------------------------------------------------------------------------------------

namespace {

// What only the GPU requires of pooling (the shared contract is checked above the backends): planes
// within 32 bits.
void require_int_planes(const char* op, const char* name, const Tensor& t) {
    if (t.dim(2) * t.dim(3) > INT_MAX)
        fail(op, std::string("planes beyond 2^31 elements are not supported: ") + name + " " + desc(t));
}

}  // namespace

void CudaBackend::do_maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) {
    require_int_planes("maxpool2d_forward", "x", x);
    auto lock = op_lock();
    cuda::maxpool_forward(x.raw(), y.raw(), indices.data<std::int32_t>(), x.dtype(), x.dim(0) * x.dim(1),
                          int(x.dim(2)), int(x.dim(3)), int(y.dim(2)), int(y.dim(3)), p, compute_);
}

// Indices are not range-checked here (that would need a device round trip); out-of-plane indices are
// skipped by the kernels.
void CudaBackend::do_maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) {
    require_int_planes("maxpool2d_backward", "dx", dx);
    require_int_planes("maxpool2d_backward", "dy", dy);
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), nullptr, compute_);
}

void CudaBackend::do_maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx,
                                                const Pool2dParams& p) {
    require_int_planes("maxpool2d_backward", "dx", dx);
    require_int_planes("maxpool2d_backward", "dy", dy);
    auto lock = op_lock();
    cuda::maxpool_backward(dy.raw(), indices.data<std::int32_t>(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1),
                           int(dx.dim(2)), int(dx.dim(3)), int(dy.dim(2)), int(dy.dim(3)), &p, compute_);
}

void CudaBackend::do_avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) {
    require_int_planes("avgpool2d_forward", "x", x);
    auto lock = op_lock();
    cuda::avgpool_forward(x.raw(), y.raw(), x.dtype(), x.dim(0) * x.dim(1), int(x.dim(2)), int(x.dim(3)),
                          int(y.dim(2)), int(y.dim(3)), p, compute_);
}

void CudaBackend::do_avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) {
    require_int_planes("avgpool2d_backward", "dx", dx);
    auto lock = op_lock();
    cuda::avgpool_backward(dy.raw(), dx.raw(), dx.dtype(), dx.dim(0) * dx.dim(1), int(dx.dim(2)), int(dx.dim(3)),
                           int(dy.dim(2)), int(dy.dim(3)), p, compute_);
}

// --- activations ---------------------------------------------------------------------------------

void CudaBackend::do_activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    auto lock = op_lock();
    cuda::activation_forward(kind, alpha, x.raw(), y.raw(), x.dtype(), x.numel(), compute_);
}

void CudaBackend::do_activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                                         const Tensor& dy, Tensor& dx) {
    const bool have_x = x.defined(), have_y = y.defined();
    auto lock = op_lock();
    cuda::activation_backward(kind, alpha, have_x ? x.raw() : nullptr, have_y ? y.raw() : nullptr, dy.raw(),
                              dx.raw(), dy.dtype(), dy.numel(), compute_);
}

// --- dropout -------------------------------------------------------------------------------------

void CudaBackend::do_dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                                     std::uint64_t offset) {
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;  // as the CPU, in f32
    cuda::dropout_forward(x.raw(), y.raw(), mask.data<std::uint8_t>(), x.dtype(), x.numel(), p, s, seed, offset,
                          compute_);
}

void CudaBackend::do_dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
    auto lock = op_lock();
    const float s = p < 1.0f ? 1.0f / (1.0f - p) : 0.0f;
    cuda::dropout_backward(dy.raw(), mask.data<std::uint8_t>(), dx.raw(), dy.dtype(), dy.numel(), s, compute_);
}

}  // namespace hr
