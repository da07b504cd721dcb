// AVX2 + FMA inner loops of the CPU backend (cpu_kernels.h). Compiled with -mavx2 -mfma
// (cmake/CpuFlags.cmake) and called only on CPUs that have both (cpu_kernels.cpp).
//
// Keep this file free of inline or template code that other files also instantiate (no standard
// containers or algorithms, no project headers beyond plain declarations): the linker keeps one copy of
// such code for the whole program, and the copy compiled here would use AVX2 in baseline code.
// Everything here has internal linkage except avx2_kernels().
//
// Register blocking (16 YMM registers):
// - tap_conv: 4 output channels x 24 wide positions = 12 accumulators; per tap 3 loads of the input,
//   4 broadcasts of packed weights, 12 FMAs. The 4-channel weight blocks of all taps stay in L1/L2,
//   the input rows of one 24-position block stay in L1 across the output-channel blocks.
// - tap_wgrad: 4 output channels x 3 taps = 12 accumulators; per 8 positions 4 loads of the gradient,
//   3 of the input, 12 FMAs; horizontal sums once per block.
#include <immintrin.h>

#include <cstdint>

#include "backend/cpu/cpu_kernels.h"

namespace hr::cpu {

namespace {

inline float hsum(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    __m128 sh = _mm_movehdup_ps(lo);
    __m128 s = _mm_add_ps(lo, sh);
    sh = _mm_movehl_ps(sh, s);
    s = _mm_add_ss(s, sh);
    return _mm_cvtss_f32(s);
}

inline double hsum_pd(__m256d v) {
    __m128d lo = _mm256_castpd256_pd128(v);
    __m128d hi = _mm256_extractf128_pd(v, 1);
    lo = _mm_add_pd(lo, hi);
    return _mm_cvtsd_f64(_mm_add_sd(lo, _mm_unpackhi_pd(lo, lo)));
}

// Widens 8 floats to two double vectors and adds them to a0 (low 4) and a1 (high 4).
inline void add_to_pd(__m256 v, __m256d& a0, __m256d& a1) {
    a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

template <int NV>
__attribute__((always_inline)) inline void conv_block(const float* src, const std::int32_t* off, int T, const float* wpk, std::int64_t q0, float* out,
                       std::int64_t ldo, int rows) {
    __m256 acc[4][NV];
    for (int r = 0; r < 4; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
    const float* s0 = src + q0;
    for (int t = 0; t < T; ++t) {
        const float* s = s0 + off[t];
        __m256 x[NV];
        for (int v = 0; v < NV; ++v) x[v] = _mm256_loadu_ps(s + 8 * v);
        const float* w = wpk + 4 * t;
        for (int r = 0; r < 4; ++r) {
            const __m256 b = _mm256_broadcast_ss(w + r);
            for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(b, x[v], acc[r][v]);
        }
    }
    // fixed trip counts, so the accumulators stay in registers
    for (int r = 0; r < 4; ++r)
        if (r < rows)
            for (int v = 0; v < NV; ++v) _mm256_storeu_ps(out + r * ldo + q0 + 8 * v, acc[r][v]);
}

void tap_conv(const float* src, const std::int32_t* off, int T, const float* wp, int K, int Q, float* out,
              std::int64_t ldo) {
    const int KB = (K + 3) / 4;
    // Blocks of 3 vectors; a remainder of 1 vector becomes 2 + 2 (a 1-vector block does 4 broadcasts
    // for 4 FMAs, half the work per load of the others). Each output is its own sum over the taps in
    // order, so the blocking does not change results.
    int v3 = Q / 24, v2 = (Q / 8) % 3 == 2 ? 1 : 0, v1 = 0;
    if ((Q / 8) % 3 == 1) {
        if (v3 > 0) {
            --v3;
            v2 = 2;
        } else {
            v1 = 1;
        }
    }
    std::int64_t q0 = 0;
    for (int b = 0; b < v3; ++b, q0 += 24)
        for (int kb = 0; kb < KB; ++kb) {
            const int rows = K - 4 * kb < 4 ? K - 4 * kb : 4;
            conv_block<3>(src, off, T, wp + std::int64_t(kb) * T * 4, q0, out + std::int64_t(kb) * 4 * ldo, ldo, rows);
        }
    for (int b = 0; b < v2; ++b, q0 += 16)
        for (int kb = 0; kb < KB; ++kb) {
            const int rows = K - 4 * kb < 4 ? K - 4 * kb : 4;
            conv_block<2>(src, off, T, wp + std::int64_t(kb) * T * 4, q0, out + std::int64_t(kb) * 4 * ldo, ldo, rows);
        }
    if (v1)
        for (int kb = 0; kb < KB; ++kb) {
            const int rows = K - 4 * kb < 4 ? K - 4 * kb : 4;
            conv_block<1>(src, off, T, wp + std::int64_t(kb) * T * 4, q0, out + std::int64_t(kb) * 4 * ldo, ldo, rows);
        }
}

template <int NT>
__attribute__((always_inline)) inline void wgrad_block(const float* src, const std::int32_t* off, const float* g,
                                                       std::int64_t ldg, int Q, float* dw, int T, int rows, int nsamp,
                                                       std::int64_t src_stride, std::int64_t g_stride) {
    __m256 acc[4][NT];
    for (int r = 0; r < 4; ++r)
        for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_setzero_ps();
    for (int n = 0; n < nsamp; ++n) {
        const float* s[NT];
        for (int j = 0; j < NT; ++j) s[j] = src + n * src_stride + off[j];
        const float* gn = g + n * g_stride;
        for (int q = 0; q < Q; q += 8) {
            __m256 x[NT];
            for (int j = 0; j < NT; ++j) x[j] = _mm256_loadu_ps(s[j] + q);
            for (int r = 0; r < 4; ++r) {
                const __m256 gv = _mm256_loadu_ps(gn + r * ldg + q);
                for (int j = 0; j < NT; ++j) acc[r][j] = _mm256_fmadd_ps(gv, x[j], acc[r][j]);
            }
        }
    }
    for (int r = 0; r < 4; ++r)
        if (r < rows)
            for (int j = 0; j < NT; ++j) dw[std::int64_t(r) * T + j] += hsum(acc[r][j]);
}

void tap_wgrad(const float* src, const std::int32_t* off, int T, const float* g, std::int64_t ldg, int K, int Q,
               float* dw, int nsamp, std::int64_t src_stride, std::int64_t g_stride) {
    const int KB = (K + 3) / 4;
    for (int kb = 0; kb < KB; ++kb) {
        const int rows = K - 4 * kb < 4 ? K - 4 * kb : 4;
        const float* gk = g + std::int64_t(kb) * 4 * ldg;
        float* dwk = dw + std::int64_t(kb) * 4 * T;
        int t = 0;
        for (; t + 3 <= T; t += 3)
            wgrad_block<3>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride);
        if (T - t == 2) wgrad_block<2>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride);
        if (T - t == 1) wgrad_block<1>(src, off + t, gk, ldg, Q, dwk + t, T, rows, nsamp, src_stride, g_stride);
    }
}

// (No masked loads or stores: they are microcoded and slow on AMD Zen.)
void zero(float* dst, std::int64_t n) {
    const __m256 z = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, z);
    if (i + 4 <= n) {
        _mm_storeu_ps(dst + i, _mm_setzero_ps());
        i += 4;
    }
    for (; i < n; ++i) dst[i] = 0.0f;
}

void copy_rows(float* dst, std::int64_t ds, const float* src, std::int64_t ss, std::int64_t rows, std::int64_t n,
               bool add_bias, float add) {
    const __m256 b = _mm256_set1_ps(add);
    const __m128 b4 = _mm_set1_ps(add);
    for (std::int64_t r = 0; r < rows; ++r, dst += ds, src += ss) {
        std::int64_t i = 0;
        if (add_bias) {
            for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(src + i), b));
            if (i + 4 <= n) {
                _mm_storeu_ps(dst + i, _mm_add_ps(_mm_loadu_ps(src + i), b4));
                i += 4;
            }
            for (; i < n; ++i) dst[i] = src[i] + add;
        } else {
            for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
            if (i + 4 <= n) {
                _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
                i += 4;
            }
            for (; i < n; ++i) dst[i] = src[i];
        }
        for (; i < ds; ++i) dst[i] = 0.0f;
    }
}

// even and odd elements of the 16 floats a, b (in order)
inline __m256 even_of(__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
}
inline __m256 odd_of(__m256 a, __m256 b) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

void deinterleave_rows(float* even, float* odd, std::int64_t ds, const float* src, std::int64_t ss, std::int64_t rows,
                       std::int64_t n) {
    for (std::int64_t r = 0; r < rows; ++r, src += ss) {
        float* e = even ? even + r * ds : nullptr;
        float* o = odd ? odd + r * ds : nullptr;
        std::int64_t i = 0;  // output index
        for (; 2 * i + 16 <= n; i += 8) {
            const __m256 a = _mm256_loadu_ps(src + 2 * i), b = _mm256_loadu_ps(src + 2 * i + 8);
            if (e) _mm256_storeu_ps(e + i, even_of(a, b));
            if (o) _mm256_storeu_ps(o + i, odd_of(a, b));
        }
        for (; 2 * i < n; ++i) {
            if (e) e[i] = src[2 * i];
            if (o && 2 * i + 1 < n) o[i] = src[2 * i + 1];
        }
    }
}

void interleave_rows(float* dst, std::int64_t ds, const float* even, const float* odd, std::int64_t ss, std::int64_t rows,
                     std::int64_t n) {
    const __m256 z = _mm256_setzero_ps();
    for (std::int64_t r = 0; r < rows; ++r, dst += ds) {
        const float* e = even ? even + r * ss : nullptr;
        const float* o = odd ? odd + r * ss : nullptr;
        std::int64_t i = 0;
        for (; 2 * i + 16 <= n; i += 8) {
            // e0..e7, o0..o7 -> e0 o0 e1 o1 ... (unpack within 128-bit lanes, then reorder the lanes)
            const __m256 a = e ? _mm256_loadu_ps(e + i) : z, b = o ? _mm256_loadu_ps(o + i) : z;
            const __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
            _mm256_storeu_ps(dst + 2 * i, _mm256_permute2f128_ps(lo, hi, 0x20));
            _mm256_storeu_ps(dst + 2 * i + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        }
        for (; 2 * i < n; ++i) {
            dst[2 * i] = e ? e[i] : 0.0f;
            if (2 * i + 1 < n) dst[2 * i + 1] = o ? o[i] : 0.0f;
        }
    }
}

void bn_sums(const float* x, std::int64_t n, float shift, double* s1, double* s2) {
    const __m256 k = _mm256_set1_ps(shift);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), k);
        const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), k);
        a0 = _mm256_add_ps(a0, d0);
        a1 = _mm256_add_ps(a1, d1);
        b0 = _mm256_fmadd_ps(d0, d0, b0);
        b1 = _mm256_fmadd_ps(d1, d1, b1);
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), k);
        a0 = _mm256_add_ps(a0, d0);
        b0 = _mm256_fmadd_ps(d0, d0, b0);
    }
    __m256d p0 = _mm256_setzero_pd(), p1 = _mm256_setzero_pd(), r0 = _mm256_setzero_pd(), r1 = _mm256_setzero_pd();
    add_to_pd(_mm256_add_ps(a0, a1), p0, p1);
    add_to_pd(_mm256_add_ps(b0, b1), r0, r1);
    double t1 = hsum_pd(_mm256_add_pd(p0, p1)), t2 = hsum_pd(_mm256_add_pd(r0, r1));
    for (; i < n; ++i) {
        const double d = double(x[i] - shift);
        t1 += d;
        t2 += d * d;
    }
    *s1 += t1;
    *s2 += t2;
}

void bn_bwd_sums(const float* x, const float* dy, std::int64_t n, float mean, double* sdy, double* sdyx) {
    const __m256 m = _mm256_set1_ps(mean);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 g0 = _mm256_loadu_ps(dy + i), g1 = _mm256_loadu_ps(dy + i + 8);
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
        const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m);
        a0 = _mm256_add_ps(a0, g0);
        a1 = _mm256_add_ps(a1, g1);
        b0 = _mm256_fmadd_ps(g0, d0, b0);
        b1 = _mm256_fmadd_ps(g1, d1, b1);
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 g0 = _mm256_loadu_ps(dy + i);
        const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), m);
        a0 = _mm256_add_ps(a0, g0);
        b0 = _mm256_fmadd_ps(g0, d0, b0);
    }
    __m256d p0 = _mm256_setzero_pd(), p1 = _mm256_setzero_pd(), r0 = _mm256_setzero_pd(), r1 = _mm256_setzero_pd();
    add_to_pd(_mm256_add_ps(a0, a1), p0, p1);
    add_to_pd(_mm256_add_ps(b0, b1), r0, r1);
    double t1 = hsum_pd(_mm256_add_pd(p0, p1)), t2 = hsum_pd(_mm256_add_pd(r0, r1));
    for (; i < n; ++i) {
        t1 += double(dy[i]);
        t2 += double(dy[i]) * double(x[i] - mean);
    }
    *sdy += t1;
    *sdyx += t2;
}

void scale_shift(const float* x, std::int64_t n, float m, float a, float b, float* y, bool relu) {
    const __m256 vm = _mm256_set1_ps(m), va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b), z = _mm256_setzero_ps();
    std::int64_t i = 0;
    if (relu) {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_max_ps(_mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), va, vb), z));
        for (; i < n; ++i) {
            const float v = __builtin_fmaf(x[i] - m, a, b);
            y[i] = v > 0.0f ? v : 0.0f;
        }
    } else {
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), va, vb));
        for (; i < n; ++i) y[i] = __builtin_fmaf(x[i] - m, a, b);
    }
}

void bn_bwd_apply(const float* x, const float* dy, std::int64_t n, float k_dy, float k_x, float mean, float k_0,
                  float* dx) {
    const __m256 vdy = _mm256_set1_ps(k_dy), vx = _mm256_set1_ps(k_x), vm = _mm256_set1_ps(mean),
                 v0 = _mm256_set1_ps(k_0);
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
        const __m256 r = _mm256_fmadd_ps(vdy, _mm256_loadu_ps(dy + i), _mm256_fmadd_ps(vx, d, v0));
        _mm256_storeu_ps(dx + i, r);
    }
    for (; i < n; ++i) dx[i] = __builtin_fmaf(k_dy, dy[i], __builtin_fmaf(k_x, x[i] - mean, k_0));
}

// best/at take v/i where v > best or v is NaN
inline void pool_take(__m256& best, __m256i& at, __m256 v, __m256i i) {
    const __m256 m = _mm256_or_ps(_mm256_cmp_ps(v, best, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    best = _mm256_blendv_ps(best, v, m);
    at = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(at), _mm256_castsi256_ps(i), m));
}

void maxpool2x2(const float* x, std::int64_t W, std::int64_t Ho, std::int64_t Wo, float* y, std::int32_t* idx) {
    const __m256i lanes = _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14);
    const __m256i one = _mm256_set1_epi32(1), row = _mm256_set1_epi32(static_cast<std::int32_t>(W));
    for (std::int64_t oh = 0; oh < Ho; ++oh) {
        const float* r0 = x + 2 * oh * W;
        const float* r1 = r0 + W;
        float* yo = y + oh * Wo;
        std::int32_t* io = idx + oh * Wo;
        const std::int32_t base = static_cast<std::int32_t>(2 * oh * W);
        std::int64_t ow = 0;
        for (; ow + 8 <= Wo; ow += 8) {
            const __m256 a0 = _mm256_loadu_ps(r0 + 2 * ow), a1 = _mm256_loadu_ps(r0 + 2 * ow + 8);
            const __m256 b0 = _mm256_loadu_ps(r1 + 2 * ow), b1 = _mm256_loadu_ps(r1 + 2 * ow + 8);
            const __m256i i = _mm256_add_epi32(_mm256_set1_epi32(base + static_cast<std::int32_t>(2 * ow)), lanes);
            __m256 best = even_of(a0, a1);
            __m256i at = i;
            pool_take(best, at, odd_of(a0, a1), _mm256_add_epi32(i, one));
            pool_take(best, at, even_of(b0, b1), _mm256_add_epi32(i, row));
            pool_take(best, at, odd_of(b0, b1), _mm256_add_epi32(_mm256_add_epi32(i, row), one));
            _mm256_storeu_ps(yo + ow, best);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(io + ow), at);
        }
        for (; ow < Wo; ++ow) {
            const std::int32_t i0 = base + static_cast<std::int32_t>(2 * ow);
            const float v[4] = {r0[2 * ow], r0[2 * ow + 1], r1[2 * ow], r1[2 * ow + 1]};
            const std::int32_t at[4] = {i0, i0 + 1, i0 + static_cast<std::int32_t>(W), i0 + static_cast<std::int32_t>(W) + 1};
            float best = v[0];
            std::int32_t best_i = at[0];
            for (int q = 1; q < 4; ++q) {
                const bool take = (v[q] > best) | (v[q] != v[q]);
                best = take ? v[q] : best;
                best_i = take ? at[q] : best_i;
            }
            yo[ow] = best;
            io[ow] = best_i;
        }
    }
}

const FastKernels kAvx2 = {"avx2",  tap_conv,    tap_wgrad,   copy_rows,    zero,        deinterleave_rows,
                           interleave_rows, bn_sums, bn_bwd_sums, scale_shift, bn_bwd_apply, maxpool2x2};

}  // namespace

const FastKernels* avx2_kernels() { return &kAvx2; }

}  // namespace hr::cpu
