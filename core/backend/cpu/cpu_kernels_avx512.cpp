// AVX-512 inner loops of the CPU backend's tap convolutions (cpu_kernels.h). Compiled with -mavx512f
// -mavx512vl -mavx2 -mfma (cmake/CpuFlags.cmake) and called only on CPUs whose cpuid reports AVX-512 F
// and VL (and whose OS saves the ZMM state) (cpu_kernels.cpp). Besides the tap convolutions, copy_rows and
// the (de)interleaving of stride-2 phases (masked row ends); the other kernels of the table are the AVX2 ones: they are bound by memory, not by
// arithmetic.
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

// ---- copy_rows -----------------------------------------------------------------------------------------

// As the AVX2 kernel, with masked loads and stores for the end of each row and its zero padding: rows of
// the tap buffers are short (28, 14, 7 values plus a few padding columns), and the AVX2 kernel's scalar
// tails were most of its time there. Same values (copies, or one addition per value).
void copy_rows(float* dst, std::int64_t ds, const float* src, std::int64_t ss, std::int64_t rows, std::int64_t n,
               bool add_bias, float add) {
    const __m512 b = _mm512_set1_ps(add);
    for (std::int64_t r = 0; r < rows; ++r, dst += ds, src += ss) {
        std::int64_t i = 0;
        for (; i + 16 <= n; i += 16) {
            __m512 v = _mm512_loadu_ps(src + i);
            if (add_bias) v = _mm512_add_ps(v, b);
            _mm512_storeu_ps(dst + i, v);
        }
        for (; i < ds; i += 16) {
            const std::int64_t have = n - i;  // values still to copy: fewer than 16 here, <= 0 for zeros only
            const std::int64_t room = ds - i < 16 ? ds - i : 16;
            const __mmask16 mv = have <= 0 ? __mmask16(0) : __mmask16((1u << have) - 1u);
            const __mmask16 ms = __mmask16((1u << room) - 1u);
            __m512 v = _mm512_maskz_loadu_ps(mv, src + i);  // masked lanes are not read
            if (add_bias) v = _mm512_maskz_add_ps(mv, v, b);
            _mm512_mask_storeu_ps(dst + i, ms, v);
        }
    }
}

// ---- deinterleave_rows / interleave_rows ------------------------------------------------------------

// The column phases of stride-2 convolutions, 16 outputs per step, masked row ends (as copy_rows).
__mmask16 low_bits(std::int64_t count) {  // the lowest min(max(count, 0), 16) bits
    return count <= 0 ? __mmask16(0) : count >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << count) - 1u);
}

void deinterleave_rows(float* even, float* odd, std::int64_t ds, const float* src, std::int64_t ss, std::int64_t rows,
                       std::int64_t n) {
    const __m512i pick_even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i pick_odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (std::int64_t r = 0; r < rows; ++r, src += ss) {
        float* e = even ? even + r * ds : nullptr;
        float* o = odd ? odd + r * ds : nullptr;
        std::int64_t i = 0;  // output index
        for (; 2 * i + 32 <= n; i += 16) {
            const __m512 a = _mm512_loadu_ps(src + 2 * i), b = _mm512_loadu_ps(src + 2 * i + 16);
            if (e) _mm512_storeu_ps(e + i, _mm512_permutex2var_ps(a, pick_even, b));
            if (o) _mm512_storeu_ps(o + i, _mm512_permutex2var_ps(a, pick_odd, b));
        }
        const std::int64_t rem = n - 2 * i;  // 0 to 31 source values left
        if (rem > 0) {
            const __m512 a = _mm512_maskz_loadu_ps(low_bits(rem), src + 2 * i);
            const __m512 b = _mm512_maskz_loadu_ps(low_bits(rem - 16), src + 2 * i + 16);
            if (e) _mm512_mask_storeu_ps(e + i, low_bits((rem + 1) / 2), _mm512_permutex2var_ps(a, pick_even, b));
            if (o) _mm512_mask_storeu_ps(o + i, low_bits(rem / 2), _mm512_permutex2var_ps(a, pick_odd, b));
        }
    }
}

void interleave_rows(float* dst, std::int64_t ds, const float* even, const float* odd, std::int64_t ss, std::int64_t rows,
                     std::int64_t n) {
    // dst[2i] = even[i], dst[2i + 1] = odd[i]: the first 16 of the 32 come from lanes 0..7 of both
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const __m512 z = _mm512_setzero_ps();
    for (std::int64_t r = 0; r < rows; ++r, dst += ds) {
        const float* e = even ? even + r * ss : nullptr;
        const float* o = odd ? odd + r * ss : nullptr;
        std::int64_t i = 0;
        for (; 2 * i + 32 <= n; i += 16) {
            const __m512 a = e ? _mm512_loadu_ps(e + i) : z, b = o ? _mm512_loadu_ps(o + i) : z;
            _mm512_storeu_ps(dst + 2 * i, _mm512_permutex2var_ps(a, lo, b));
            _mm512_storeu_ps(dst + 2 * i + 16, _mm512_permutex2var_ps(a, hi, b));
        }
        const std::int64_t rem = n - 2 * i;  // 0 to 31 destination values left
        if (rem > 0) {
            const __m512 a = e ? _mm512_maskz_loadu_ps(low_bits((rem + 1) / 2), e + i) : z;
            const __m512 b = o ? _mm512_maskz_loadu_ps(low_bits(rem / 2), o + i) : z;
            _mm512_mask_storeu_ps(dst + 2 * i, low_bits(rem), _mm512_permutex2var_ps(a, lo, b));
            _mm512_mask_storeu_ps(dst + 2 * i + 16, low_bits(rem - 16), _mm512_permutex2var_ps(a, hi, b));
        }
    }
}

FastKernels make_table() {
    FastKernels k = *avx2_kernels();  // the other memory-bound kernels stay the AVX2 ones
    k.name = "avx512";
    k.tap_conv = tap_conv;
    k.tap_wgrad = tap_wgrad;
    k.copy_rows = copy_rows;
    k.deinterleave_rows = deinterleave_rows;
    k.interleave_rows = interleave_rows;
    return k;
}

}  // namespace

const FastKernels* avx512_kernels() {
    static const FastKernels k = make_table();
    return &k;
}

}  // namespace hr::cpu
