#pragma once
// The argument checks of every op of backend.h, made once above the backends (ggml's way): Backend's
// public op (backend/op_dispatch.cpp) runs the op's check_* below, then the backend's do_* op, so the CPU
// and the CUDA backend refuse a bad call with the same message and neither checks it again. What only
// one backend requires is asked of its TensorRules (where its tensors live, which float types it
// computes in); a backend's own limits (the GPU's 32-bit sizes, a workspace its kernels size) stay with
// it. Here: a tensor's description, the failure every op throws, same shape / dtype rules, the geometry
// of convolution, pooling, batch norm, and the older ops' checks (op_checks.cpp); the transformer ops'
// contract is transformer_checks.h.
#include <cstdint>
#include <string>

#include "backend/backend.h"
#include "base/dtype.h"
#include "base/error.h"
#include "base/window_size.h"

namespace hr::ops {

inline std::string desc(const Tensor& t) {
    if (!t.defined()) return "undefined";
    return shape_str(t.shape()) + " " + dtype_name(t.dtype());
}

[[noreturn]] inline void fail(const char* op, const std::string& what) { throw Error(std::string(op) + ": " + what); }

// Where a backend wants its tensors and which float types it computes in; both throw Error naming op.
// Backend::tensor_rules() gives a backend's (the CPU: any defined host tensor, f32/f64/bf16/f16; the GPU:
// its own device, no f64).
class TensorRules {
public:
    virtual ~TensorRules() = default;
    virtual void here(const char* op, const char* name, const Tensor& t) const = 0;      // defined, on this device
    virtual void floating(const char* op, const char* name, const Tensor& t) const = 0;  // a float type it computes in
};

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
    g.Ho = window_output_size(g.H, g.kh, p.stride_h, p.pad_h, p.dilation_h);
    g.Wo = window_output_size(g.W, g.kw, p.stride_w, p.pad_w, p.dilation_w);
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
    const std::int64_t ho = window_output_size(x.dim(2), p.kernel_h, p.stride_h, p.pad_h);
    const std::int64_t wo = window_output_size(x.dim(3), p.kernel_w, p.stride_w, p.pad_w);
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

// --- the older ops' checks (op_checks.cpp), one per op of backend.h, in its order --------------------
void check_fill(const TensorRules& r, const Tensor& t);
void check_copy(const TensorRules& r, const Tensor& src, const Tensor& dst);
// copy_from_host and upload_async (op names the op): dst here, a source when there are bytes to copy.
void check_from_host(const char* op, const TensorRules& r, const void* src, const Tensor& dst);
// copy_to_host and copy_to_host_async.
void check_to_host(const char* op, const TensorRules& r, const Tensor& src, const void* dst);
void check_add(const TensorRules& r, const Tensor& a, const Tensor& b, const Tensor& out);
void check_axpy(const TensorRules& r, const Tensor& x, const Tensor& y);
void check_scale(const TensorRules& r, const Tensor& x);
void check_gemm(const TensorRules& r, bool trans_a, bool trans_b, const Tensor& a, const Tensor& b, const Tensor& c);
// add_bias (y, bias) and bias_grad (dy, dbias): y viewed as (N, C, S), the vector (C).
void check_bias(const char* op, const char* yn, const char* bn, const TensorRules& r, const Tensor& y,
                const Tensor& bias);
// conv2d_workspace_bytes: the geometry and a float dtype.
void check_conv2d_shapes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p, DType dtype);
void check_conv2d_forward(const TensorRules& r, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                          const Conv2dParams& p);
void check_conv2d_backward_data(const char* op, const TensorRules& r, const Tensor& dy, const Tensor& w,
                                const Tensor& dx, const Conv2dParams& p);
void check_conv2d_backward_filter(const char* op, const TensorRules& r, const Tensor& x, const Tensor& dy,
                                  const Tensor& dw, const Tensor& dbias, const Conv2dParams& p);
void check_maxpool2d_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Tensor& indices,
                             const Pool2dParams& p);
// p: the forward's pooling windows (maxpool2d_backward_windows), null when not told.
void check_maxpool2d_backward(const TensorRules& r, const Tensor& dy, const Tensor& indices, const Tensor& dx,
                              const Pool2dParams* p);
void check_avgpool2d_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Pool2dParams& p);
void check_avgpool2d_backward(const TensorRules& r, const Tensor& dy, const Tensor& dx, const Pool2dParams& p);
void check_activation_forward(const TensorRules& r, const Tensor& x, const Tensor& y);
void check_activation_backward(const TensorRules& r, ActivationKind kind, const Tensor& x, const Tensor& y,
                               const Tensor& dy, const Tensor& dx);
void check_dropout_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Tensor& mask, float p);
void check_dropout_backward(const TensorRules& r, const Tensor& dy, const Tensor& mask, const Tensor& dx);
// Batch norm: x and y (N, C, H, W) or (N, C) alike; the vectors (C) float, `required` ones defined.
void check_batchnorm_forward_train(const char* op, const TensorRules& r, const Tensor& x, const Tensor& gamma,
                                   const Tensor& beta, const Tensor& y, const Tensor& save_mean,
                                   const Tensor& save_invstd, const Tensor& running_mean, const Tensor& running_var);
void check_batchnorm_forward_infer(const TensorRules& r, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& running_mean, const Tensor& running_var, const Tensor& y);
void check_batchnorm_backward(const TensorRules& r, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                              const Tensor& save_mean, const Tensor& save_invstd, const Tensor& dx,
                              const Tensor& dgamma, const Tensor& dbeta);
// softmax_cross_entropy(_into): logits (N, K) float, K > 0, labels (N) i64, dlogits like logits when defined.
void check_softmax_cross_entropy(const char* op, const TensorRules& r, const Tensor& logits, const Tensor& labels,
                                 float label_smoothing, const Tensor& dlogits);
void check_mse_loss(const char* op, const TensorRules& r, const Tensor& pred, const Tensor& target,
                    const Tensor& dpred);
// A StepControl / StepStats tensor: here, f64, at least `fields` values.
void check_fields(const char* op, const TensorRules& r, const char* name, const Tensor& t, int fields);
// sum_squares (x float too) and all_finite, all_finite_into (any dtype: an integer tensor is finite).
void check_reduce(const char* op, const TensorRules& r, const Tensor& x, bool need_float);
void check_increment(const TensorRules& r, const Tensor& counter);
void check_sgd_update(const char* op, const TensorRules& r, const Tensor& param, const Tensor& grad,
                      const Tensor& momentum_buf, const SgdArgs& a);
// with_step: a.step is read (adam_update; adam_update_ctl takes the step from control).
void check_adam_update(const char* op, const TensorRules& r, const Tensor& param, const Tensor& grad, const Tensor& m,
                       const Tensor& v, const AdamArgs& a, bool with_step);

}  // namespace hr::ops
