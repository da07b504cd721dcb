// AVX-512 inner loops of the CPU backend's tap convolutions (cpu_kernels.h). Compiled with -mavx512f
// -mavx512vl -mavx2 -mfma (cmake/CpuFlags.cmake) and called only on CPUs whose cpuid reports AVX-512 F
// and VL (and whose OS saves the ZMM state) (cpu_kernels.cpp). The other kernels of the table are the
// AVX2 ones: they are bound by memory, not by arithmetic.
//
// Same rules as cpu_kernels_avx2.cpp: no inline or template code another file also instantiates, internal
// linkage for everything but avx512_kernels().
//
// Register blocking (32 ZMM registers):
// - tap_conv: 8 output channels (two packed 4-channel weight blocks) x 48 wide positions (3 vectors of 16)
//   = 24 accumulators; per tap 3 loads of the input, 8 broadcasts, 24 FMAs: twice the work per input load
//   of the AVX2 kernel's 4 x 24. Tails: 16 and 8 positions (the 8 with YMM registers, no masks), and a
//   last block of 4 channels. Each output is its own sum over the taps in order with one FMA per tap, as
//   in the AVX2 kernel, so both kernels give the same bits.
// - tap_wgrad: 4 output channels x 6 taps = 24 accumulators; per 16 positions 4 loads of the gradient, 6
//   of the input, 24 FMAs; an 8-position tail in the low half; horizontal sums once per block. (The sums
//   run over 16 lanes instead of the AVX2 kernel's 8: results are reproducible on this kernel table, and
//   differ from the AVX2 table's in the last bits.)
// GCC 12 warns about the "undefined" upper halves inside its own AVX-512 intrinsics
// (_mm512_reduce_add_ps, _mm512_zextps256_ps512: GCC bug 105593), not about this code.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/cpu_kernels.h"

namespace hr::cpu {

namespace {

// ---- tap_conv ------------------------------------------------------------------------------------------

// NB packed 4-channel weight blocks (1 or 2) x NV vectors of 16 positions.
template <int NB, int NV>
__attribute__((always_inline)) inline void conv_block16(const float* src, const std::int32_t* off, int T, const float* wpk,
                                                        std::int64_t wstride, std::int64_t q0, float* out, std::int64_t ldo,
                                                        int rows) {
    __m512 acc[4 * NB][NV];
    for (int r = 0; r < 4 * NB; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
    const float* s0 = src + q0;
    for (int t = 0; t < T; ++t) {
        const float* s = s0 + off[t];
        __m512 x[NV];
        for (int v = 0; v < NV; ++v) x[v] = _mm512_loadu_ps(s + 16 * v);
        for (int b = 0; b < NB; ++b) {
            const float* w = wpk + b * wstride + 4 * t;
            for (int r = 0; r < 4; ++r) {
                const __m512 bw = _mm512_set1_ps(w[r]);
                for (int v = 0; v < NV; ++v) acc[4 * b + r][v] = _mm512_fmadd_ps(bw, x[v], acc[4 * b + r][v]);
            }
        }
    }
    for (int r = 0; r < 4 * NB; ++r)
        if (r < rows)
            for (int v = 0; v < NV; ++v) _mm512_storeu_ps(out + r * ldo + q0 + 16 * v, acc[r][v]);
}

// The last 8 positions of a row block (Q is a multiple of 8): YMM vectors, NB packed blocks.
template <int NB>
__attribute__((always_inline)) inline void conv_block8(const float* src, const std::int32_t* off, int T, const float* wpk,
                                                       std::int64_t wstride, std::int64_t q0, float* out, std::int64_t ldo,
                                                       int rows) {
    __m256 acc[4 * NB];
    for (int r = 0; r < 4 * NB; ++r) acc[r] = _mm256_setzero_ps();
    const float* s0 = src + q0;
    for (int t = 0; t < T; ++t) {
        const __m256 x = _mm256_loadu_ps(s0 + off[t]);
        for (int b = 0; b < NB; ++b) {
            const float* w = wpk + b * wstride + 4 * t;
            for (int r = 0; r < 4; ++r) acc[4 * b + r] = _mm256_fmadd_ps(_mm256_broadcast_ss(w + r), x, acc[4 * b + r]);
        }
    }
    for (int r = 0; r < 4 * NB; ++r)
        if (r < rows) _mm256_storeu_ps(out + r * ldo + q0, acc[r]);
}

template <int NV>
void conv_positions16(const float* src, const std::int32_t* off, int T, const float* wp, int K, std::int64_t q0, float* out,
                      std::int64_t ldo) {
    const int KB = (K + 3) / 4;
    const std::int64_t ws = std::int64_t(T) * 4;
    int kb = 0;
    for (; kb + 2 <= KB; kb += 2) {
        const int rows = K - 4 * kb < 8 ? K - 4 * kb : 8;
        conv_block16<2, NV>(src, off, T, wp + kb * ws, ws, q0, out + std::int64_t(kb) * 4 * ldo, ldo, rows);
    }
    if (kb < KB) conv_block16<1, NV>(src, off, T, wp + kb * ws, ws, q0, out + std::int64_t(kb) * 4 * ldo, ldo, K - 4 * kb);
}

void tap_conv(const float* src, const std::int32_t* off, int T, const float* wp, int K, int Q, float* out, std::int64_t ldo) {
    const int KB = (K + 3) / 4;
    const std::int64_t ws = std::int64_t(T) * 4;
    std::int64_t q0 = 0;
    for (; q0 + 48 <= Q; q0 += 48) conv_positions16<3>(src, off, T, wp, K, q0, out, ldo);
    if (q0 + 32 <= Q) {
        conv_positions16<2>(src, off, T, wp, K, q0, out, ldo);
        q0 += 32;
    } else if (q0 + 16 <= Q) {
        conv_positions16<1>(src, off, T, wp, K, q0, out, ldo);
        q0 += 16;
    }
    if (q0 < Q) {  // 8 positions left
        int kb = 0;
        for (; kb + 2 <= KB; kb += 2)
            conv_block8<2>(src, off, T, wp + kb * ws, ws, q0, out + std::int64_t(kb) * 4 * ldo, ldo,
                           K - 4 * kb < 8 ? K - 4 * kb : 8);
        if (kb < KB) conv_block8<1>(src, off, T, wp + kb * ws, ws, q0, out + std::int64_t(kb) * 4 * ldo, ldo, K - 4 * kb);
    }
}

// ---- tap_wgrad -----------------------------------------------------------------------------------------

template <int NT>
__attribute__((always_inline)) inline void wgrad_block(const float* src, const std::int32_t* off, const float* g,
                                                       std::int64_t ldg, int Q, float* dw, int T, int rows, int nsamp,
                                                       std::int64_t src_stride, std::int64_t g_stride) {
    __m512 acc[4][NT];
    for (int r = 0; r < 4; ++r)
        for (int j = 0; j < NT; ++j) acc[r][j] = _mm512_setzero_ps();
    const int q16 = Q / 16 * 16;
    for (int n = 0; n < nsamp; ++n) {
        const float* s[NT];
        for (int j = 0; j < NT; ++j) s[j] = src + n * src_stride + off[j];
        const float* gn = g + n * g_stride;
        for (int q = 0; q < q16; q += 16) {
            __m512 x[NT];
            for (int j = 0; j < NT; ++j) x[j] = _mm512_loadu_ps(s[j] + q);
            for (int r = 0; r < 4; ++r) {
                const __m512 gv = _mm512_loadu_ps(gn + r * ldg + q);
                for (int j = 0; j < NT; ++j) acc[r][j] = _mm512_fmadd_ps(gv, x[j], acc[r][j]);
            }
        }
        if (q16 < Q) {  // 8 positions left: the low half of the vectors, the high half zero
            __m512 x[NT];
            for (int j = 0; j < NT; ++j) x[j] = _mm512_zextps256_ps512(_mm256_loadu_ps(s[j] + q16));
            for (int r = 0; r < 4; ++r) {
                const __m512 gv = _mm512_zextps256_ps512(_mm256_loadu_ps(gn + r * ldg + q16));
                for (int j = 0; j < NT; ++j) acc[r][j] = _mm512_fmadd_ps(gv, x[j], acc[r][j]);
            }
        }
    }
    for (int r = 0; r < 4; ++r)
        if (r < rows)
            for (int j = 0; j < NT; ++j) dw[std::int64_t(r) * T + j] += _mm512_reduce_add_ps(acc[r][j]);
}

void tap_wgrad(const float* src, const std::int32_t* off, int T, const float* g, std::int64_t ldg, int K, int Q, float* dw,
               int nsamp, std::int64_t src_stride, std::int64_t g_stride) {
    const int KB = (K + 3) / 4;
    for (int kb = 0; kb < KB; ++kb) {
        const int rows = K - 4 * kb < 4 ? K - 4 * kb : 4;
        const float* gk = g + std::int64_t(kb) * 4 * ldg;
        float* dwk = dw + std::int64_t(kb) * 4 * T;
        int t = 0;
        for (; t + 6 <= T; t += 6) wgrad_block<6>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride);
        switch (T - t) {
            case 5: wgrad_block<5>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride); break;
            case 4: wgrad_block<4>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride); break;
            case 3: wgrad_block<3>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride); break;
            case 2: wgrad_block<2>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride); break;
            case 1: wgrad_block<1>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride); break;
            default: break;
        }
    }
}

FastKernels make_table() {
    FastKernels k = *avx2_kernels();  // the memory-bound kernels stay the AVX2 ones
    k.name = "avx512";
    k.tap_conv = tap_conv;
    k.tap_wgrad = tap_wgrad;
    return k;
}

}  // namespace

const FastKernels* avx512_kernels() {
    static const FastKernels k = make_table();
    return &k;
}

}  // namespace hr::cpu
