#pragma once
// Launchers of the CUDA backend's own kernels (cuda_kernels.cu: elementwise, casts, bias, pooling,
// activations, dropout; cuda_train_kernels.cu: batch norm, losses, reductions, optimizers).
// Each takes the stream it runs on, launches nothing for empty inputs, and checks the launch.
// Inputs are validated by the caller (cuda_backend.cpp); a launcher only dispatches on dtype and
// throws hr::Error for a dtype the GPU does not support (f64).
// Float tensors are f32, bf16 or f16 and are computed in f32 (reductions in f64), as on the CPU.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/backend.h"
#include "base/dtype.h"

namespace hr::cuda {

// A per-channel vector (batch norm gamma/beta/statistics) of any GPU float dtype; p == nullptr
// means undefined (gamma reads as 1, beta and statistics as 0, running_var as 1).
struct VecArg {
    void* p = nullptr;
    DType dtype = DType::f32;
};

// Scalars a reduction hands back; lives in device scratch, copied to pinned host memory.
struct ReduceResult {
    double sum = 0;                 // loss sum / sum of squares
    long long count = 0;            // correct rows
    unsigned long long first_bad = ~0ull;  // first row with an invalid label (cross-entropy)
    int flag = 0;                   // all_finite: 1 when a non-finite value was seen
    int pad = 0;
};

// --- cuda_kernels.cu -------------------------------------------------------------------------------
// p[i] = pattern (elem_size 1, 2, 4 or 8 bytes) for i < n
void fill_pattern(void* p, std::int64_t n, int elem_size, std::uint64_t pattern, cudaStream_t s);
// dst = src converted (float dtypes only)
void cast(const void* src, DType sdt, void* dst, DType ddt, std::int64_t n, cudaStream_t s);
void add(const void* a, const void* b, void* out, DType dt, std::int64_t n, cudaStream_t s);
void axpy(float alpha, const void* x, DType xdt, void* y, DType ydt, std::int64_t n, cudaStream_t s);
void scale(void* x, DType dt, std::int64_t n, float alpha, cudaStream_t s);
// y (N, C, S) += bias[c];  dbias[c] += sum_{n,s} dy[n, c, s]
void add_bias(void* y, DType ydt, const void* bias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
              cudaStream_t s);
void bias_grad(const void* dy, DType dydt, void* dbias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
               cudaStream_t s);
// planes = N * C; indices i32 = h*W+w within the plane
void maxpool_forward(const void* x, void* y, std::int32_t* indices, DType dt, std::int64_t planes, int H, int W,
                     int Ho, int Wo, const Pool2dParams& p, cudaStream_t s);
void maxpool_backward(const void* dy, const std::int32_t* indices, void* dx, DType dt, std::int64_t planes,
                      std::int64_t HW, std::int64_t HoWo, cudaStream_t s);
void avgpool_forward(const void* x, void* y, DType dt, std::int64_t planes, int H, int W, int Ho, int Wo,
                     const Pool2dParams& p, cudaStream_t s);
void avgpool_backward(const void* dy, void* dx, DType dt, std::int64_t planes, int H, int W, int Ho, int Wo,
                      const Pool2dParams& p, cudaStream_t s);
void activation_forward(ActivationKind kind, float alpha, const void* x, void* y, DType dt, std::int64_t n,
                        cudaStream_t s);
// x or y may be null (the caller checked that the kind has what it needs)
void activation_backward(ActivationKind kind, float alpha, const void* x, const void* y, const void* dy, void* dx,
                         DType dt, std::int64_t n, cudaStream_t s);
// keep = counter_uniform(seed, offset + i) >= p; y = keep ? x * scale : 0
void dropout_forward(const void* x, void* y, std::uint8_t* mask, DType dt, std::int64_t n, float p, float scale,
                     std::uint64_t seed, std::uint64_t offset, cudaStream_t s);
void dropout_backward(const void* dy, const std::uint8_t* mask, void* dx, DType dt, std::int64_t n, float scale,
                      cudaStream_t s);

// --- cuda_train_kernels.cu -------------------------------------------------------------------------
// x, y (N, C, S); one block per channel.
void batchnorm_forward_train(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                             VecArg running_var, float momentum, float eps, cudaStream_t s);
void batchnorm_forward_infer(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var, float eps,
                             cudaStream_t s);
void batchnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t N, std::int64_t C,
                        std::int64_t S, VecArg gamma, VecArg save_mean, VecArg save_invstd, VecArg dgamma,
                        VecArg dbeta, cudaStream_t s);
// Per row losses into row_loss (N doubles) and row_ok (N ints), then summed into *result
// (sum, count, first_bad). result must hold first_bad = ~0 before the call (the launcher sets it).
void softmax_cross_entropy(const void* logits, DType dt, const std::int64_t* labels, std::int64_t N,
                           std::int64_t K, float label_smoothing, void* dlogits, float grad_scale, double* row_loss,
                           int* row_ok, ReduceResult* result, cudaStream_t s);
void mse_loss(const void* pred, const void* target, DType dt, std::int64_t rows, std::int64_t cols, void* dpred,
              float grad_scale, double* row_loss, int* row_ok, ReduceResult* result, cudaStream_t s);
// partials holds kReduceBlocks doubles.
constexpr int kReduceBlocks = 512;
void sum_squares(const void* x, DType dt, std::int64_t n, double* partials, ReduceResult* result, cudaStream_t s);
void all_finite(const void* x, DType dt, std::int64_t n, ReduceResult* result, cudaStream_t s);
// param and momentum f32; grad f32/bf16/f16; momentum null when args.momentum == 0
void sgd_update(float* param, const void* grad, DType gdt, float* momentum, std::int64_t n, const SgdArgs& a,
                cudaStream_t s);
// step_size = lr / (1 - beta1^step), bc2_sqrt = sqrt(1 - beta2^step), both computed in double by the caller
void adam_update(float* param, const void* grad, DType gdt, float* m, float* v, std::int64_t n, const AdamArgs& a,
                 double step_size, double bc2_sqrt, cudaStream_t s);

}  // namespace hr::cuda
