#pragma once
// Argument checks shared by every backend (CPU and CUDA), with the same messages on each: a tensor's
// description, the failure every op throws, same shape / dtype rules, and the geometry of convolution,
// pooling, batch norm and per-channel vectors. What only one backend requires (where its tensors live,
// which float types it computes in) stays with it. The transformer ops' contract is transformer_checks.h.
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "base/dtype.h"
#include "base/error.h"

namespace hr::ops {

inline std::string desc(const Tensor& t) {
    if (!t.defined()) return "undefined";
    return shape_str(t.shape()) + " " + dtype_name(t.dtype());
}

[[noreturn]] inline void fail(const char* op, const std::string& what) { throw Error(std::string(op) + ": " + what); }

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

}  // namespace hr::ops
