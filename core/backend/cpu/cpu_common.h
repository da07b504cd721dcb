#pragma once
// Shared helpers of the CPU backend: storage-type tags for the float dtypes, load/store with the
// compute type (double for f64, float otherwise), dtype dispatch and validation messages.
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/backend.h"
#include "base/dtype.h"
#include "base/error.h"

namespace hr::cpu {

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

inline std::string desc(const Tensor& t) {
    if (!t.defined()) return "undefined";
    return shape_str(t.shape()) + " " + dtype_name(t.dtype());
}

[[noreturn]] inline void fail(const char* op, const std::string& what) { throw Error(std::string(op) + ": " + what); }

inline void require_defined(const char* op, const char* name, const Tensor& t) {
    if (!t.defined()) fail(op, std::string(name) + " is undefined");
    if (!t.device().is_cpu()) fail(op, std::string(name) + " is on " + t.device().str() + ", expected cpu");
}
inline void require_same_shape(const char* op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
    if (a.shape() != b.shape())
        fail(op, std::string(an) + " " + desc(a) + " and " + bn + " " + desc(b) + " must have the same shape");
}
inline void require_same_dtype(const char* op, const char* an, const Tensor& a, const char* bn, const Tensor& b) {
    if (a.dtype() != b.dtype())
        fail(op, std::string(an) + " " + desc(a) + " and " + bn + " " + desc(b) + " must have the same dtype");
}
inline void require_dtype(const char* op, const char* name, const Tensor& t, DType dt) {
    if (t.dtype() != dt)
        fail(op, std::string(name) + " " + desc(t) + " must be " + dtype_name(dt));
}
inline void require_float(const char* op, const char* name, const Tensor& t) {
    if (!dtype_is_float(t.dtype())) fail(op, std::string(name) + " " + desc(t) + " must be a float tensor");
}

// Elementwise loops run in parallel only above this many elements (below, threading costs more).
constexpr std::int64_t kParallelGrain = 1 << 17;

// Runs f(begin, end) over [0, n) split into `threads` equal static chunks (one chunk when n < grain).
// Each index is handled by exactly one call, so results never depend on scheduling.
template <class F>
void parallel_chunks(int threads, std::int64_t n, std::int64_t grain, F&& f) {
    int nt = (n < grain || threads <= 1) ? 1 : threads;
    if (nt == 1) {
        if (n > 0) f(std::int64_t{0}, n);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(nt)
    for (int t = 0; t < nt; ++t) {
        std::int64_t b = n * t / nt, e = n * (t + 1) / nt;
        if (e > b) f(b, e);
    }
}

}  // namespace hr::cpu
