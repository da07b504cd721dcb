#pragma once
// Vectorisable elementwise math for the CPU transformer ops. f32 uses a polynomial exp (the compiler
// turns the loops that call it into AVX2 code; libm's expf/tanhf are scalar calls); f64 (gradient
// checks) uses the exact std::exp.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cpu/cpu_common.h"
#include "backend/cpu/thread_pool.h"

namespace hr::cpu {

// e^x for f32: 2^n * e^r with |r| <= ln(2)/2 and a degree-7 Taylor polynomial of e^r (relative error
// below 3e-7, about 2 ulp); inputs are clamped to [-87.3, 88.7] (the range of normal f32 results).
inline float exp_fast(float x) {
    x = x < -87.3f ? -87.3f : x;  // comparisons, not fmin/fmax: they vectorise without -ffast-math
    x = x > 88.7f ? 88.7f : x;
    // n = round(x / ln 2) by adding 1.5 * 2^23 (no floor: that keeps the loop vectorisable with the
    // default -ftrapping-math); the low bits of `big` then hold n
    const float big = x * 1.4426950408889634f + 12582912.0f;
    std::int32_t bits;
    std::memcpy(&bits, &big, 4);
    const float n = big - 12582912.0f;
    // r = x - n ln 2 in two steps (Cody-Waite), |r| <= ln(2)/2; e^r by its Taylor series to degree 7
    const float r = (x - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
    float p = 1.984126984126984e-04f;
    p = p * r + 1.388888888888889e-03f;
    p = p * r + 8.333333333333333e-03f;
    p = p * r + 4.166666666666667e-02f;
    p = p * r + 1.666666666666667e-01f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    bits = (bits - 0x4B400000 + 127) << 23;  // 0x4B400000: the bits of 1.5 * 2^23
    float scale;
    std::memcpy(&scale, &bits, 4);
    return p * scale;
}
inline double exp_fast(double x) { return std::exp(x); }

// GELU, tanh form, written as x * sigmoid(2u) with u = sqrt(2/pi) (x + 0.044715 x^3): the same function,
// without tanh's cancellation near 0.
template <class A>
inline A gelu_tanh_value(A x) {
    const A u = A(0.7978845608028654) * (x + A(0.044715) * x * x * x);
    return x / (A(1) + exp_fast(A(-2) * u));
}
// d/dx: s + 2 x s (1 - s) u' with s = sigmoid(2u), u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
template <class A>
inline A gelu_tanh_derivative(A x) {
    const A u = A(0.7978845608028654) * (x + A(0.044715) * x * x * x);
    const A du = A(0.7978845608028654) * (A(1) + A(3) * A(0.044715) * x * x);
    const A s = A(1) / (A(1) + exp_fast(A(-2) * u));
    return s + A(2) * x * s * (A(1) - s) * du;
}

// backend.h's counter_uniform, inline (attention dropout draws one per probability): the same bits.
inline float counter_uniform_inline(std::uint64_t seed, std::uint64_t counter) {
    std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + counter + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}


// The transformer and LLaMA ops run on the CPU backend's one thread pool (thread_pool.h), like the GEMMs
// between them: OpenMP's workers, which spin after each region, would take turns with the pool's for the
// same cores. Runs f(t, begin, end) for nt static chunks of [0, n); t is the chunk index (0 .. nt-1), so
// per-chunk partial sums combine in a fixed order whichever thread runs a chunk.
template <class F>
void chunks_indexed(int nt, std::int64_t n, F&& f) {
    if (nt <= 1 || n <= 1) {
        if (n > 0) f(0, std::int64_t{0}, n);
        return;
    }
    parallel_for(nt, nt, [&](std::int64_t t) {
        const std::int64_t b = n * t / nt, e = n * (t + 1) / nt;
        if (e > b) f(static_cast<int>(t), b, e);
    });
}

// How many threads `work` (about one multiply-add a unit) is worth: all of them, or one below the grain.
inline int threads_for(int threads, std::int64_t work) {
    if (threads <= 1 || work < kParallelGrain / 4) return 1;
    return threads;
}

}  // namespace hr::cpu
