#pragma once
// Launchers of the CUDA backend's own kernels (cuda_kernels.cu: elementwise, casts, bias, pooling,
// activations, dropout, counters; cuda_train_kernels.cu: batch norm, losses, reductions, optimizers,
// step control). Each takes the stream it runs on, launches nothing for empty inputs, and checks
// the launch. Inputs are validated by the caller (cuda_backend.cpp); a launcher only dispatches on
// dtype and throws hr::Error for a dtype the GPU does not support (f64).
// Float tensors are f32, bf16 or f16 and are computed in f32 (reductions in f64), as on the CPU.
//
// Reductions are deterministic: fixed grids (or grids that depend only on the shape), per-block
// partial sums in a fixed order, then a fixed-order sum of the partials. Their partials live in the
// backend's op scratch (cuda_sizes.h), passed in as `Scratch`; nothing here allocates.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/backend.h"
#include "backend/cuda/cuda_sizes.h"
#include "base/dtype.h"

namespace hr::cuda {

// Whether the module holds code the current device can run: cudaFuncGetAttributes on one of its kernels
// (cudaErrorNoKernelImageForDevice when it was built for other architectures). Creates the context.
cudaError_t kernel_image_status();

// A per-channel vector (batch norm gamma/beta/statistics) of any GPU float dtype; p == nullptr
// means undefined (gamma reads as 1, beta and statistics as 0, running_var as 1).
struct VecArg {
    void* p = nullptr;
    DType dtype = DType::f32;
};

// Scalars a reduction or loss hands back; at the start of the op scratch, copied to pinned memory.
struct ReduceResult {
    double sum = 0;                        // loss sum / sum of squares
    long long count = 0;                   // correct rows
    unsigned long long first_bad = ~0ull;  // first row with an invalid label (cross-entropy)
    unsigned long long bad_count = 0;      // rows with an invalid label
    long long bad_label = 0;               // the label in row first_bad
    int flag = 0;                          // all_finite: 1 when a non-finite value was seen
    int pad = 0;
};
static_assert(sizeof(ReduceResult) <= cuda_sizes::kResultBytes);

// The backend's op scratch (device memory of cuda_sizes::kOpScratchBytes), carved up.
struct Scratch {
    char* base = nullptr;
    ReduceResult* result() const { return reinterpret_cast<ReduceResult*>(base + cuda_sizes::kOffResult); }
    double* reduce(int array) const {  // array 0..2, kReduceBlocks doubles each
        return reinterpret_cast<double*>(base + cuda_sizes::kOffReduce) + array * cuda_sizes::kReduceBlocks;
    }
    double* channel_partials() const { return reinterpret_cast<double*>(base + cuda_sizes::kOffChannelPartials); }
    float* channel_coef() const { return reinterpret_cast<float*>(base + cuda_sizes::kOffChannelCoef); }
    void* bounce() const { return base + cuda_sizes::kOffBounce; }
};

// --- cuda_kernels.cu -------------------------------------------------------------------------------
// p[i] = pattern (elem_size 1, 2, 4 or 8 bytes) for i < n
void fill_pattern(void* p, std::int64_t n, int elem_size, std::uint64_t pattern, cudaStream_t s);
// dst = src converted (float dtypes only)
void cast(const void* src, DType sdt, void* dst, DType ddt, std::int64_t n, cudaStream_t s);
void add(const void* a, const void* b, void* out, DType dt, std::int64_t n, cudaStream_t s);
void axpy(float alpha, const void* x, DType xdt, void* y, DType ydt, std::int64_t n, cudaStream_t s);
void scale(void* x, DType dt, std::int64_t n, float alpha, cudaStream_t s);
// y (N, C, S) += bias[c]
void add_bias(void* y, DType ydt, const void* bias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
              cudaStream_t s);
// dbias[c] += sum_{n,s} dy[n, c, s]: two-stage (channel, slice) partials, then one fixed-order sum
// per channel; one block per channel when C exceeds the scratch's partials.
void bias_grad(const void* dy, DType dydt, void* dbias, DType bdt, std::int64_t N, std::int64_t C, std::int64_t S,
               const Scratch& scratch, cudaStream_t s);
// planes = N * C; indices i32 = h*W+w within the plane
void maxpool_forward(const void* x, void* y, std::int32_t* indices, DType dt, std::int64_t planes, int H, int W,
                     int Ho, int Wo, const Pool2dParams& p, cudaStream_t s);
// dx written. With the pooling windows: one thread per input element gathers, in f32 and in output
// order, the gradients of the outputs whose window covers it and whose maximum it is (the CPU's sum,
// bit for bit). Without them (p == nullptr): one thread per plane adds in output order (deterministic).
// Indices outside the plane are skipped (the CPU backend rejects them up front).
void maxpool_backward(const void* dy, const std::int32_t* indices, void* dx, DType dt, std::int64_t planes, int H,
                      int W, int Ho, int Wo, const Pool2dParams* p, cudaStream_t s);
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
// *counter += by (one thread)
void increment_i64(std::int64_t* counter, std::int64_t by, cudaStream_t s);

// --- cuda_train_kernels.cu -------------------------------------------------------------------------
// x, y (N, C, S). Two-stage: (channel, slice) partial sums in f64, one fixed-order sum per channel
// (statistics, running statistics, per-channel coefficients into the scratch), then an elementwise
// pass; one block per channel when C exceeds the scratch's partials.
void batchnorm_forward_train(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg save_mean, VecArg save_invstd, VecArg running_mean,
                             VecArg running_var, float momentum, float eps, const Scratch& scratch, cudaStream_t s);
// Inference: per-channel coefficients from the running statistics once (double, into the scratch), then an
// elementwise pass in f32 (no double per element).
void batchnorm_forward_infer(const void* x, void* y, DType dt, std::int64_t N, std::int64_t C, std::int64_t S,
                             VecArg gamma, VecArg beta, VecArg running_mean, VecArg running_var, float eps,
                             const Scratch& scratch, cudaStream_t s);
void batchnorm_backward(const void* x, const void* dy, void* dx, DType dt, std::int64_t N, std::int64_t C,
                        std::int64_t S, VecArg gamma, VecArg save_mean, VecArg save_invstd, VecArg dgamma,
                        VecArg dbeta, const Scratch& scratch, cudaStream_t s);

// Where a loss's figures go: the scratch's ReduceResult (sum of row losses, correct rows, bad labels),
// and, for the *_into ops, also StepStats (stats != null: += weight * mean loss, += correct, bad labels).
// control (StepControl, may be null) multiplies the gradient scale by control[kCtlLossScale].
struct LossOut {
    double* stats = nullptr;
    const double* control = nullptr;
    double weight = 1.0;
};
// Labels are checked first (a kernel of their own): with a label outside [0, K) no dlogits is written.
// argmax: the first NaN of a row if it has one, else its first maximum (as the CPU backend).
// skip_ignored: a label of -100 (kIgnoreTarget) is allowed; its row adds no loss and gets a zero gradient
// (the mean still divides by N: the caller rescales, as cross_entropy_inplace documents).
void softmax_cross_entropy(const void* logits, DType dt, const std::int64_t* labels, std::int64_t N,
                           std::int64_t K, float label_smoothing, void* dlogits, float grad_scale, LossOut out,
                           const Scratch& scratch, cudaStream_t s, bool skip_ignored = false);
void mse_loss(const void* pred, const void* target, DType dt, std::int64_t rows, std::int64_t cols, void* dpred,
              float grad_scale, LossOut out, const Scratch& scratch, cudaStream_t s);
using cuda_sizes::kReduceBlocks;
void sum_squares(const void* x, DType dt, std::int64_t n, const Scratch& scratch, cudaStream_t s);
// result->flag = 1 (or control[kCtlFoundInf] = 1 when control != null) if x holds an inf or NaN
void all_finite(const void* x, DType dt, std::int64_t n, ReduceResult* result, double* control, cudaStream_t s);
// param and momentum f32; grad f32/bf16/f16; momentum null when args.momentum == 0.
// control != null: lr, first step and the loss scale from it, and nothing done when found_inf is set
// (backend.h sgd_update_ctl).
void sgd_update(float* param, const void* grad, DType gdt, float* momentum, std::int64_t n, const SgdArgs& a,
                const double* control, cudaStream_t s);
// Without control: step_size = lr / (1 - beta1^step), bc2_sqrt = sqrt(1 - beta2^step), both computed in
// double by the caller. With control: computed per block from control[kCtlOptStep] + 1 the same way.
void adam_update(float* param, const void* grad, DType gdt, float* m, float* v, std::int64_t n, const AdamArgs& a,
                 double step_size, double bc2_sqrt, const double* control, cudaStream_t s);
// backend.h step_control_end (one thread)
void step_control_end(double* control, bool dynamic_loss_scale, std::int64_t growth_interval, cudaStream_t s);

}  // namespace hr::cuda
