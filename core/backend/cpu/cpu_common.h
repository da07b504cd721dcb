#pragma once
// Shared helpers of the CPU backend: storage-type tags for the float dtypes, load/store with the
// compute type (double for f64, float otherwise), dtype dispatch and validation messages.
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/backend.h"
#include "backend/cpu/thread_pool.h"
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


// ---- checks shared by the CPU and CUDA backends (same messages on every backend) -------------------

// Views t as (N, C, S) with C = t.dim(1) (t must be at least 2-D); vec must be (C).
inline void ncs(const char* op, const Tensor& t, const Tensor& vec, const char* vec_name, std::int64_t& N,
                std::int64_t& C, std::int64_t& S) {
    if (t.ndim() < 2) fail(op, "expects a tensor of at least 2 dimensions (N, C, ...), got " + desc(t));
    N = t.dim(0);
    C = t.dim(1);
    S = C && N ? t.numel() / (N * C) : 0;
    if (vec.ndim() != 1 || vec.dim(0) != C)
        fail(op, std::string(vec_name) + " " + desc(vec) + " must have shape (" + std::to_string(C) +
                     ") to match channels of " + desc(t));
}

struct ConvGeom {
    std::int64_t N, C, H, W, K, kh, kw, Ho, Wo;
    std::int64_t P() const { return Ho * Wo; }
    std::int64_t R() const { return C * kh * kw; }
};

inline std::string params_str(const Conv2dParams& p) {
    return "stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", padding " +
           std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) + ", dilation " + std::to_string(p.dilation_h) +
           "x" + std::to_string(p.dilation_w);
}

// x (N, C, H, W), w (K, C, kh, kw), y (N, K, Ho, Wo) consistent with p (groups = 1).
inline ConvGeom conv_geom(const char* op, const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p) {
    if (x.size() != 4 || w.size() != 4 || y.size() != 4)
        fail(op, "expects x (N, C, H, W), w (K, C, kh, kw), y (N, K, Ho, Wo); got x " + shape_str(x) + ", w " +
                     shape_str(w) + ", y " + shape_str(y));
    if (p.stride_h <= 0 || p.stride_w <= 0 || p.dilation_h <= 0 || p.dilation_w <= 0 || p.pad_h < 0 || p.pad_w < 0)
        fail(op, "invalid parameters: " + params_str(p));
    ConvGeom g{x[0], x[1], x[2], x[3], w[0], w[2], w[3], 0, 0};
    if (w[1] != g.C)
        fail(op, "w " + shape_str(w) + " expects " + std::to_string(w[1]) + " input channels but x " + shape_str(x) +
                     " has " + std::to_string(g.C) + " (groups = 1 only)");
    g.Ho = (g.H + 2 * p.pad_h - p.dilation_h * (g.kh - 1) - 1) / p.stride_h + 1;
    g.Wo = (g.W + 2 * p.pad_w - p.dilation_w * (g.kw - 1) - 1) / p.stride_w + 1;
    if (g.Ho <= 0 || g.Wo <= 0)
        fail(op, "kernel " + shape_str(w) + " with " + params_str(p) + " does not fit input " + shape_str(x));
    if (y[0] != g.N || y[1] != g.K || y[2] != g.Ho || y[3] != g.Wo)
        fail(op, "for x " + shape_str(x) + ", w " + shape_str(w) + " and " + params_str(p) + " y must be " +
                     shape_str({g.N, g.K, g.Ho, g.Wo}) + ", got " + shape_str(y));
    return g;
}


// Pooling: x (N, C, H, W), y (N, C, Ho, Wo) consistent with p; same dtype.
inline void check_pool(const char* op, const Tensor& x, const Tensor& y, const Pool2dParams& p) {
    if (x.ndim() != 4 || y.ndim() != 4)
        fail(op, "expects x (N, C, H, W) and y (N, C, Ho, Wo), got x " + desc(x) + ", y " + desc(y));
    if (p.kernel_h <= 0 || p.kernel_w <= 0 || p.stride_h <= 0 || p.stride_w <= 0 || p.pad_h < 0 || p.pad_w < 0)
        fail(op, "invalid pooling parameters: kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
                     ", stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", padding " +
                     std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w));
    const std::int64_t ho = (x.dim(2) + 2 * p.pad_h - p.kernel_h) / p.stride_h + 1;
    const std::int64_t wo = (x.dim(3) + 2 * p.pad_w - p.kernel_w) / p.stride_w + 1;
    if (y.dim(0) != x.dim(0) || y.dim(1) != x.dim(1) || y.dim(2) != ho || y.dim(3) != wo)
        fail(op, "for x " + desc(x) + " with kernel " + std::to_string(p.kernel_h) + "x" + std::to_string(p.kernel_w) +
                     ", stride " + std::to_string(p.stride_h) + "x" + std::to_string(p.stride_w) + ", padding " +
                     std::to_string(p.pad_h) + "x" + std::to_string(p.pad_w) + " y must be " +
                     shape_str({x.dim(0), x.dim(1), ho, wo}) + ", got " + desc(y));
    require_same_dtype(op, "x", x, "y", y);
}

// x viewed as (N, C, S) for batch norm: (N, C, H, W) or (N, C).
inline void bn_dims(const char* op, const Tensor& x, std::int64_t& N, std::int64_t& C, std::int64_t& S) {
    if (x.ndim() != 4 && x.ndim() != 2) fail(op, "expects x (N, C, H, W) or (N, C), got " + desc(x));
    N = x.dim(0);
    C = x.dim(1);
    S = x.ndim() == 4 ? x.dim(2) * x.dim(3) : 1;
}

}  // namespace hr::cpu
