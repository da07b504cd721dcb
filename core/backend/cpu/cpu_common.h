#pragma once
// Shared helpers of the CPU backend: storage-type tags for the float dtypes, load/store with the
// compute type (double for f64, float otherwise), dtype dispatch and validation messages.
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/backend.h"
#include "backend/op_checks.h"
#include "backend/cpu/thread_pool.h"
#include "base/dtype.h"
#include "base/error.h"

namespace hr::cpu {

// the checks every backend shares (backend/op_checks.h), by their short names in the CPU backend
using namespace hr::ops;

struct Bf16 {
    std::uint16_t bits;
};
struct F16 {
    std::uint16_t bits;
};

// Compute type: double for f64, float for f32/bf16/f16.
template <class T>
struct ComputeOf {
    using type = float;
};
template <>
struct ComputeOf<double> {
    using type = double;
};
template <class T>
using Acc = typename ComputeOf<T>::type;

inline float load(const float* p, std::int64_t i) { return p[i]; }
inline double load(const double* p, std::int64_t i) { return p[i]; }
inline float load(const Bf16* p, std::int64_t i) {
    std::uint32_t u = static_cast<std::uint32_t>(p[i].bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline float load(const F16* p, std::int64_t i) { return f16_to_f32(p[i].bits); }

inline void store(float* p, std::int64_t i, float v) { p[i] = v; }
inline void store(double* p, std::int64_t i, double v) { p[i] = v; }
inline void store(Bf16* p, std::int64_t i, float v) { p[i].bits = f32_to_bf16(v); }
inline void store(F16* p, std::int64_t i, float v) { p[i].bits = f32_to_f16(v); }

template <class T>
constexpr bool is_low_precision = std::is_same_v<T, Bf16> || std::is_same_v<T, F16>;

// Calls f(T{}) with T the storage type of a float dtype; throws for non-float dtypes.
template <class F>
void dispatch_float(DType dt, const char* op, F&& f) {
    switch (dt) {
        case DType::f32: f(float{}); return;
        case DType::f64: f(double{}); return;
        case DType::bf16: f(Bf16{}); return;
        case DType::f16: f(F16{}); return;
        default:
            throw Error(std::string(op) + ": expects a float tensor (f32, f64, bf16, f16), got " +
                        dtype_name(dt));
    }
}

inline void require_defined(const char* op, const char* name, const Tensor& t) {
    if (!t.defined()) fail(op, std::string(name) + " is undefined");
    if (!t.device().is_cpu()) fail(op, std::string(name) + " is on " + t.device().str() + ", expected cpu");
}
// Elementwise loops run in parallel only above this many elements (below, threading costs more).
constexpr std::int64_t kParallelGrain = 1 << 17;

// Runs f(begin, end) over [0, n) on the backend's thread pool (thread_pool.h), in up to 4 chunks per
// thread so that a thread the scheduler takes away does not hold up the rest (one call when
// n < grain). Each index is handled by exactly one call; callers compute each index's result
// independently of the split, so results never depend on scheduling or the thread count.
template <class F>
void parallel_chunks(int threads, std::int64_t n, std::int64_t grain, F&& f) {
    if (n <= 0) return;
    const std::int64_t nt = (n < grain || threads <= 1) ? 1 : std::min<std::int64_t>(n, 4 * std::int64_t(thread_slots(threads)));
    if (nt == 1) {
        f(std::int64_t{0}, n);
        return;
    }
    parallel_for(threads, nt, [&](std::int64_t t) {
        const std::int64_t b = n * t / nt, e = n * (t + 1) / nt;
        if (e > b) f(b, e);
    });
}


}  // namespace hr::cpu
