#pragma once
// Run-time dispatched inner loops of the CPU backend's fast f32 paths (cmake/CpuFlags.cmake).
//
// fast_kernels() returns the table for this CPU: the AVX-512 one (cpu_kernels_avx512.cpp: its tap
// convolutions on ZMM registers, the other kernels AVX2) when cpuid reports AVX-512 F and VL besides AVX2
// and FMA and the OS saves the ZMM state; the AVX2 + FMA kernels (cpu_kernels_avx2.cpp) when cpuid
// reports AVX2 and FMA (and the OS saves YMM state); or null, in which case the backend uses its
// portable reference code for everything (im2col + OpenBLAS convolutions, double-precision batch norm).
// HEADROOM_CPU_KERNELS=reference in the environment forces the reference code, =avx2 the AVX2 table on
// an AVX-512 CPU (for comparisons).
//
// "Tap" convolution: every convolution the backend runs fast (forward, backward data, any stride) is
// written as out[k][q] = sum_t w[k][t] * src[off[t] + q] over a prepared input buffer `src` (a padded,
// and for strides > 1 phase-split, copy of the input) in which each tap t (an input channel and a kernel
// position) is a fixed offset, and q runs over "wide" output positions (rows as long as the buffer's
// rows; the extra columns are computed and dropped). See cpu_conv_fast.cpp.
#include <cstdint>

namespace hr::cpu {

struct FastKernels {
    const char* name;  // "avx512", "avx2"

    // out[k * ldo + q] = sum_{t < T} wp[(k / 4) * T * 4 + t * 4 + k % 4] * src[off[t] + q]
    // for k < K, q < Q. Q is a multiple of 8; src must be readable at off[t] + q for all q < Q.
    // wp holds the weights packed in blocks of 4 output channels (rows past K are zero).
    void (*tap_conv)(const float* src, const std::int32_t* off, int T, const float* wp, int K, int Q, float* out,
                     std::int64_t ldo);

    // dw[k * T + t] += sum_{n < nsamp} sum_{q < Q} g[n * g_stride + k * ldg + q] * src[n * src_stride + off[t] + q]
    // for k < K, t < T (nsamp samples whose buffers lie at fixed strides). Q is a multiple of 8; each g
    // has a multiple of 4 rows (those past K zero), each src readable as above.
    void (*tap_wgrad)(const float* src, const std::int32_t* off, int T, const float* g, std::int64_t ldg, int K, int Q,
                      float* dw, int nsamp, std::int64_t src_stride, std::int64_t g_stride);

    // Copies `rows` rows of n floats (src row stride ss) to dst (row stride ds >= n) and zeroes
    // dst[n, ds) of every row; adds `add` to every copied value when add_bias. (Padding, phase planes
    // and wide rows of the tap convolutions.)
    void (*copy_rows)(float* dst, std::int64_t ds, const float* src, std::int64_t ss, std::int64_t rows, std::int64_t n,
                      bool add_bias, float add);
    // dst[0, n) = 0
    void (*zero)(float* dst, std::int64_t n);
    // For `rows` rows of n floats (src row stride ss): even[i] = src[2i], odd[i] = src[2i + 1] (row
    // stride ds each; either may be null to skip it). The column phases of a stride-2 convolution.
    void (*deinterleave_rows)(float* even, float* odd, std::int64_t ds, const float* src, std::int64_t ss,
                              std::int64_t rows, std::int64_t n);
    // The inverse: dst[2i] = even[i], dst[2i + 1] = odd[i] for positions < n of `rows` rows (dst row
    // stride ds, even/odd row stride ss; a null source gives zeros).
    void (*interleave_rows)(float* dst, std::int64_t ds, const float* even, const float* odd, std::int64_t ss,
                            std::int64_t rows, std::int64_t n);

    // Batch-norm row sums, accumulated in double across rows:
    // s1 += sum(x - shift), s2 += sum((x - shift)^2) over x[0, n)
    void (*bn_sums)(const float* x, std::int64_t n, float shift, double* s1, double* s2);
    // sdy += sum(dy), sdyx += sum(dy * (x - mean)) over [0, n)
    void (*bn_bwd_sums)(const float* x, const float* dy, std::int64_t n, float mean, double* sdy, double* sdyx);
    // y = (x - m) * a + b over [0, n); with relu, y = max((x - m) * a + b, 0). (Batch norm's affine
    // map in the form that does not cancel when the mean is large against the spread.)
    void (*scale_shift)(const float* x, std::int64_t n, float m, float a, float b, float* y, bool relu);
    // dx = k_dy * dy + k_x * (x - mean) + k_0 over [0, n)
    void (*bn_bwd_apply)(const float* x, const float* dy, std::int64_t n, float k_dy, float k_x, float mean, float k_0,
                         float* dx);
    // MaxPool2d(2) of one plane x (row stride W; 2 Ho rows and 2 Wo columns are read): y[oh * Wo + ow] and
    // idx[oh * Wo + ow] (the index into the plane) of the window at (2 oh, 2 ow). The candidates are taken
    // in the order (0, 0), (0, 1), (1, 0), (1, 1), a later one replacing the best when greater or NaN
    // (PyTorch's rule: the first maximum wins, a NaN propagates). Branch-free (the maxima of real data are
    // where the branches of a scalar loop mispredict).
    void (*maxpool2x2)(const float* x, std::int64_t W, std::int64_t Ho, std::int64_t Wo, float* y, std::int32_t* idx);
};

// The kernels for this CPU, or null (see above). Decided once per process.
const FastKernels* fast_kernels();

// The AVX2 + FMA table (defined in cpu_kernels_avx2.cpp; only call it on a CPU that has both).
const FastKernels* avx2_kernels();
// The AVX-512 table (cpu_kernels_avx512.cpp; only on a CPU with AVX-512 F and VL, AVX2 and FMA).
const FastKernels* avx512_kernels();

}  // namespace hr::cpu
