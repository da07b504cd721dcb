#pragma once
// The rules of an update step that the host and both backends apply, written once (issue 55): dynamic loss
// scaling after a step (TrainingState's host step, the device step's control on the CPU, step_ops.cpp, and on
// the GPU, cuda_train_kernels.cu) and Adam's bias correction (the CPU's adam_update, the CUDA backend's, and
// its kernel when the step count lives on the device). Every function is `HR_HOST_DEVICE`: `__host__
// __device__` in a CUDA compile, a plain inline function in the CPU's, so nvcc and the host compiler see the
// same text. Plain arithmetic only (no std:: calls a device cannot make); the results are bit for bit the
// ones each copy computed before.
#include <math.h>

#if defined(__CUDACC__)
#define HR_HOST_DEVICE __host__ __device__
#else
#define HR_HOST_DEVICE
#endif

namespace hr {

// Dynamic loss scaling (docs/strategies.md), after one step: a step whose gradients overflowed (not
// finite) is skipped, halves the scale (not below 1) and restarts the count of good steps; a good step
// counts, and the growth_interval-th good step in a row doubles the scale and restarts the count.
// `Count` is the good-step counter's type (an integer on the host, a double in the device's control).
template <class Count>
HR_HOST_DEVICE inline void update_loss_scale(bool overflowed, double& scale, Count& good_steps,
                                             long long growth_interval) {
    if (overflowed) {
        const double half = scale / 2;
        scale = 1.0 < half ? half : 1.0;  // std::max(1.0, half)
        good_steps = 0;
        return;
    }
    good_steps += 1;
    if (good_steps >= static_cast<Count>(growth_interval)) {
        scale *= 2;
        good_steps = 0;
    }
}

// Adam's bias correction at step t (1-based), as torch.optim.Adam's single-tensor path, in double:
// step_size = lr / (1 - beta1^t) and bc2_sqrt = sqrt(1 - beta2^t); the update is then
// p -= step_size * m / (sqrt(v) / bc2_sqrt + eps).
struct AdamBiasCorrection {
    double step_size;
    double bc2_sqrt;
};
HR_HOST_DEVICE inline AdamBiasCorrection adam_bias_correction(double lr, double beta1, double beta2, double t) {
    const double bc1 = 1.0 - pow(beta1, t);
    const double bc2 = 1.0 - pow(beta2, t);
    return {lr / bc1, sqrt(bc2)};
}

}  // namespace hr
