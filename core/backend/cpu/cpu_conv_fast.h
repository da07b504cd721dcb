#pragma once
// The CPU backend's fast f32 convolutions (direct "tap" convolutions on the AVX2 kernels of
// cpu_kernels.h; cpu_conv_fast.cpp describes the method). The backend uses them when
// fast_conv_supported() and the kernels exist, and its reference im2col + BLAS code otherwise.
#include <cstddef>
#include <cstdint>

#include "backend/cpu/cpu_common.h"
#include "backend/cpu/cpu_kernels.h"

namespace hr::cpu {

// f32, dilation 1, sizes that fit 32-bit offsets.
bool fast_conv_supported(const ConvGeom& g, const Conv2dParams& p);

// Which of the three calls run fast: fast_conv_supported(), and the fast method does not compute more
// than twice the multiply-adds the convolution needs (it computes zero borders and rounding).
struct FastConvChoice {
    bool forward = false, backward_data = false, backward_filter = false;
    bool any() const { return forward || backward_data || backward_filter; }
    bool all() const { return forward && backward_data && backward_filter; }
};
FastConvChoice fast_conv_choice(const ConvGeom& g, const Conv2dParams& p);

// Workspace bytes for the three calls at these shapes with `threads` threads (64-byte aligned start
// not required: the functions align it themselves).
std::size_t fast_conv_workspace_bytes(const ConvGeom& g, const Conv2dParams& p, int threads);

// y = conv(x, w) + bias (bias may be null); y written.
void fast_conv_forward(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p, const float* x,
                       const float* w, const float* bias, float* y, void* workspace);
// dx = conv_transpose(dy, w); dx written.
void fast_conv_backward_data(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p,
                             const float* dy, const float* w, float* dx, void* workspace);
// dw += corr(x, dy); db += sum(dy) when db is not null. The sums over the batch run in 16 fixed
// chunks of samples, reduced in chunk order: the result does not depend on the thread count.
void fast_conv_backward_filter(const FastKernels& k, int threads, const ConvGeom& g, const Conv2dParams& p,
                               const float* x, const float* dy, float* dw, float* db, void* workspace);

}  // namespace hr::cpu
