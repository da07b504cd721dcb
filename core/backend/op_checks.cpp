// The older ops' argument checks (op_checks.h), run once above the backends by backend/op_dispatch.cpp.
// Their messages are the ones the CPU and CUDA backends each gave before the checks moved here.
#include "backend/op_checks.h"

namespace hr::ops {

namespace {

// A per-channel vector of batch norm: (C), a float type; an undefined one is refused when required.
void channel_vec(const char* op, const TensorRules& r, const char* name, const Tensor& t, std::int64_t C,
                 bool required) {
    if (!t.defined()) {
        if (required) fail(op, std::string(name) + " is undefined");
        return;
    }
    r.here(op, name, t);
    r.floating(op, name, t);
    if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
}

// x and y (N, C, H, W) or (N, C) of one shape and float dtype; C returned, and N * S (values per channel).
std::int64_t bn_pair(const char* op, const TensorRules& r, const char* xn, const Tensor& x, const char* yn,
                     const Tensor& y, std::int64_t* per_channel = nullptr) {
    r.here(op, xn, x);
    r.here(op, yn, y);
    require_same_shape(op, xn, x, yn, y);
    require_same_dtype(op, xn, x, yn, y);
    r.floating(op, xn, x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    if (per_channel) *per_channel = N * S;
    return C;
}

// An optimizer's parameter (a float the backend computes in, and f32 or f64: master weights) and gradient.
void param_grad(const char* op, const TensorRules& r, const Tensor& param, const Tensor& grad) {
    r.here(op, "param", param);
    r.here(op, "grad", grad);
    r.floating(op, "param", param);
    if (param.dtype() != DType::f32 && param.dtype() != DType::f64)
        fail(op, "param " + desc(param) + " must be f32 or f64 (keep master weights for low precision)");
    r.floating(op, "grad", grad);
    if (grad.numel() != param.numel())
        fail(op, "grad " + desc(grad) + " must have as many elements as param " + desc(param));
}

void optimizer_state(const char* op, const TensorRules& r, const char* name, const Tensor& s, const Tensor& param) {
    r.here(op, name, s);
    if (s.numel() != param.numel())
        fail(op, std::string(name) + " " + desc(s) + " must have as many elements as param " + desc(param));
    r.floating(op, name, s);
    if (s.dtype() != DType::f32 && s.dtype() != DType::f64)
        fail(op, std::string(name) + " " + desc(s) + " must be f32 or f64");
}

}  // namespace

void check_fill(const TensorRules& r, const Tensor& t) { r.here("fill", "tensor", t); }

void check_copy(const TensorRules& r, const Tensor& src, const Tensor& dst) {
    const char* op = "copy";
    r.here(op, "src", src);
    r.here(op, "dst", dst);
    if (src.numel() != dst.numel())
        fail(op, "src " + desc(src) + " and dst " + desc(dst) + " must have the same number of elements");
}

void check_from_host(const char* op, const TensorRules& r, const void* src, const Tensor& dst) {
    r.here(op, "dst", dst);
    if (dst.nbytes() && !src) fail(op, "source pointer is null for dst " + desc(dst));
}

void check_to_host(const char* op, const TensorRules& r, const Tensor& src, const void* dst) {
    r.here(op, "src", src);
    if (src.nbytes() && !dst) fail(op, "destination pointer is null for src " + desc(src));
}

void check_add(const TensorRules& r, const Tensor& a, const Tensor& b, const Tensor& out) {
    const char* op = "add";
    r.here(op, "a", a);
    r.here(op, "b", b);
    r.here(op, "out", out);
    require_same_shape(op, "a", a, "b", b);
    require_same_shape(op, "a", a, "out", out);
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "out", out);
    r.floating(op, "a", a);
}

void check_axpy(const TensorRules& r, const Tensor& x, const Tensor& y) {
    const char* op = "axpy";
    r.here(op, "x", x);
    r.here(op, "y", y);
    if (x.numel() != y.numel()) fail(op, "x " + desc(x) + " and y " + desc(y) + " must have the same number of elements");
    r.floating(op, "x", x);  // x and y may differ in float dtype (bf16 gradients into f32 master gradients)
    r.floating(op, "y", y);
}

void check_scale(const TensorRules& r, const Tensor& x) {
    r.here("scale", "x", x);
    r.floating("scale", "x", x);
}

void check_gemm(const TensorRules& r, bool trans_a, bool trans_b, const Tensor& a, const Tensor& b, const Tensor& c) {
    const char* op = "gemm";
    r.here(op, "a", a);
    r.here(op, "b", b);
    r.here(op, "c", c);
    if (a.ndim() != 2 || b.ndim() != 2 || c.ndim() != 2)
        fail(op, "expects 2-D a, b, c; got a " + desc(a) + ", b " + desc(b) + ", c " + desc(c));
    require_same_dtype(op, "a", a, "b", b);
    require_same_dtype(op, "a", a, "c", c);
    r.floating(op, "a", a);
    const std::int64_t M = trans_a ? a.dim(1) : a.dim(0);
    const std::int64_t K = trans_a ? a.dim(0) : a.dim(1);
    const std::int64_t Kb = trans_b ? b.dim(1) : b.dim(0);
    const std::int64_t N = trans_b ? b.dim(0) : b.dim(1);
    if (K != Kb || c.dim(0) != M || c.dim(1) != N)
        fail(op, std::string("shapes do not match: op(a) ") + shape_str({M, K}) + " @ op(b) " + shape_str({Kb, N}) +
                     " -> c " + shape_str(c.shape()) + " (a " + desc(a) + (trans_a ? " transposed" : "") + ", b " +
                     desc(b) + (trans_b ? " transposed" : "") + ")");
}

void check_bias(const char* op, const char* yn, const char* bn, const TensorRules& r, const Tensor& y,
                const Tensor& bias) {
    r.here(op, yn, y);
    r.here(op, bn, bias);
    std::int64_t N, C, S;
    ncs(op, y, bias, bn, N, C, S);
    r.floating(op, yn, y);
    r.floating(op, bn, bias);
}

void check_conv2d_shapes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p, DType dtype) {
    const char* op = "conv2d_workspace_bytes";
    conv_geom(op, x, w, y, p);
    if (!dtype_is_float(dtype)) fail(op, std::string("expects a float dtype, got ") + dtype_name(dtype));
}

void check_conv2d_forward(const TensorRules& r, const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& y,
                          const Conv2dParams& p) {
    const char* op = "conv2d_forward";
    r.here(op, "x", x);
    r.here(op, "w", w);
    r.here(op, "y", y);
    const ConvGeom g = conv_geom(op, x.shape(), w.shape(), y.shape(), p);
    require_same_dtype(op, "x", x, "w", w);
    require_same_dtype(op, "x", x, "y", y);
    r.floating(op, "x", x);
    if (bias.defined()) {
        r.here(op, "bias", bias);
        require_same_dtype(op, "x", x, "bias", bias);
        if (bias.numel() != g.K) fail(op, "bias " + desc(bias) + " must have shape (" + std::to_string(g.K) + ")");
    }
}

void check_conv2d_backward_data(const char* op, const TensorRules& r, const Tensor& dy, const Tensor& w,
                                const Tensor& dx, const Conv2dParams& p) {
    r.here(op, "dy", dy);
    r.here(op, "w", w);
    r.here(op, "dx", dx);
    conv_geom(op, dx.shape(), w.shape(), dy.shape(), p);
    require_same_dtype(op, "dy", dy, "w", w);
    require_same_dtype(op, "dy", dy, "dx", dx);
    r.floating(op, "dy", dy);
}

void check_conv2d_backward_filter(const char* op, const TensorRules& r, const Tensor& x, const Tensor& dy,
                                  const Tensor& dw, const Tensor& dbias, const Conv2dParams& p) {
    r.here(op, "x", x);
    r.here(op, "dy", dy);
    r.here(op, "dw", dw);
    const ConvGeom g = conv_geom(op, x.shape(), dw.shape(), dy.shape(), p);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dw", dw);
    r.floating(op, "x", x);
    if (dbias.defined()) {
        r.here(op, "dbias", dbias);
        require_same_dtype(op, "x", x, "dbias", dbias);
        if (dbias.numel() != g.K) fail(op, "dbias " + desc(dbias) + " must have shape (" + std::to_string(g.K) + ")");
    }
}

void check_maxpool2d_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Tensor& indices,
                             const Pool2dParams& p) {
    const char* op = "maxpool2d_forward";
    r.here(op, "x", x);
    r.here(op, "y", y);
    r.here(op, "indices", indices);
    check_pool(op, x, y, p);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "y", y, "indices", indices);
    r.floating(op, "x", x);
}

void check_maxpool2d_backward(const TensorRules& r, const Tensor& dy, const Tensor& indices, const Tensor& dx,
                              const Pool2dParams* p) {
    const char* op = "maxpool2d_backward";
    r.here(op, "dy", dy);
    r.here(op, "indices", indices);
    r.here(op, "dx", dx);
    require_dtype(op, "indices", indices, DType::i32);
    require_same_shape(op, "dy", dy, "indices", indices);
    require_same_dtype(op, "dy", dy, "dx", dx);
    if (dy.ndim() != 4 || dx.ndim() != 4 || dy.dim(0) != dx.dim(0) || dy.dim(1) != dx.dim(1))
        fail(op, "expects dy (N, C, Ho, Wo) and dx (N, C, H, W), got dy " + desc(dy) + ", dx " + desc(dx));
    r.floating(op, "dy", dy);
    if (p) check_pool(op, dx, dy, *p);  // dy's shape is the forward's output for dx's shape and p
}

void check_avgpool2d_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Pool2dParams& p) {
    const char* op = "avgpool2d_forward";
    r.here(op, "x", x);
    r.here(op, "y", y);
    check_pool(op, x, y, p);
    r.floating(op, "x", x);
}

void check_avgpool2d_backward(const TensorRules& r, const Tensor& dy, const Tensor& dx, const Pool2dParams& p) {
    const char* op = "avgpool2d_backward";
    r.here(op, "dy", dy);
    r.here(op, "dx", dx);
    check_pool(op, dx, dy, p);
    r.floating(op, "dx", dx);
}

void check_activation_forward(const TensorRules& r, const Tensor& x, const Tensor& y) {
    const char* op = "activation_forward";
    r.here(op, "x", x);
    r.here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    r.floating(op, "x", x);
}

void check_activation_backward(const TensorRules& r, ActivationKind kind, const Tensor& x, const Tensor& y,
                               const Tensor& dy, const Tensor& dx) {
    const char* op = "activation_backward";
    r.here(op, "dy", dy);
    r.here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    r.floating(op, "dy", dy);
    const bool need_x = kind == ActivationKind::gelu || kind == ActivationKind::leaky_relu;
    const bool have_x = x.defined(), have_y = y.defined();
    if (need_x && !have_x) fail(op, "this activation's backward needs the forward input x");
    if (!have_x && !have_y) fail(op, "needs the forward input x or output y; both are undefined");
    if (have_x) {
        r.here(op, "x", x);
        require_same_shape(op, "x", x, "dy", dy);
        require_same_dtype(op, "x", x, "dy", dy);
    }
    if (have_y) {
        r.here(op, "y", y);
        require_same_shape(op, "y", y, "dy", dy);
        require_same_dtype(op, "y", y, "dy", dy);
    }
}

void check_dropout_forward(const TensorRules& r, const Tensor& x, const Tensor& y, const Tensor& mask, float p) {
    const char* op = "dropout_forward";
    r.here(op, "x", x);
    r.here(op, "y", y);
    r.here(op, "mask", mask);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != x.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as x " + desc(x));
    if (!(p >= 0.0f && p <= 1.0f)) fail(op, "probability p = " + std::to_string(p) + " must be in [0, 1]");
    r.floating(op, "x", x);
}

void check_dropout_backward(const TensorRules& r, const Tensor& dy, const Tensor& mask, const Tensor& dx) {
    const char* op = "dropout_backward";
    r.here(op, "dy", dy);
    r.here(op, "mask", mask);
    r.here(op, "dx", dx);
    require_same_shape(op, "dy", dy, "dx", dx);
    require_same_dtype(op, "dy", dy, "dx", dx);
    require_dtype(op, "mask", mask, DType::u8);
    if (mask.numel() != dy.numel()) fail(op, "mask " + desc(mask) + " must have as many elements as dy " + desc(dy));
    r.floating(op, "dy", dy);
}

void check_batchnorm_forward_train(const char* op, const TensorRules& r, const Tensor& x, const Tensor& gamma,
                                   const Tensor& beta, const Tensor& y, const Tensor& save_mean,
                                   const Tensor& save_invstd, const Tensor& running_mean, const Tensor& running_var) {
    std::int64_t M = 0;
    const std::int64_t C = bn_pair(op, r, "x", x, "y", y, &M);
    if (M <= 1) fail(op, "needs more than one value per channel, got x " + desc(x));
    channel_vec(op, r, "save_mean", save_mean, C, true);
    channel_vec(op, r, "save_invstd", save_invstd, C, true);
    channel_vec(op, r, "running_mean", running_mean, C, false);
    channel_vec(op, r, "running_var", running_var, C, false);
    channel_vec(op, r, "gamma", gamma, C, false);
    channel_vec(op, r, "beta", beta, C, false);
}

void check_batchnorm_forward_infer(const TensorRules& r, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& running_mean, const Tensor& running_var, const Tensor& y) {
    const char* op = "batchnorm_forward_infer";
    const std::int64_t C = bn_pair(op, r, "x", x, "y", y);
    channel_vec(op, r, "running_mean", running_mean, C, true);
    channel_vec(op, r, "running_var", running_var, C, true);
    channel_vec(op, r, "gamma", gamma, C, false);
    channel_vec(op, r, "beta", beta, C, false);
}

void check_batchnorm_backward(const TensorRules& r, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                              const Tensor& save_mean, const Tensor& save_invstd, const Tensor& dx,
                              const Tensor& dgamma, const Tensor& dbeta) {
    const char* op = "batchnorm_backward";
    const std::int64_t C = bn_pair(op, r, "x", x, "dy", dy);
    r.here(op, "dx", dx);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dx", dx);
    channel_vec(op, r, "save_mean", save_mean, C, true);
    channel_vec(op, r, "save_invstd", save_invstd, C, true);
    channel_vec(op, r, "gamma", gamma, C, false);
    channel_vec(op, r, "dgamma", dgamma, C, false);
    channel_vec(op, r, "dbeta", dbeta, C, false);
}

void check_softmax_cross_entropy(const char* op, const TensorRules& r, const Tensor& logits, const Tensor& labels,
                                 float label_smoothing, const Tensor& dlogits) {
    r.here(op, "logits", logits);
    r.here(op, "labels", labels);
    if (logits.ndim() != 2) fail(op, "expects logits (N, K), got " + desc(logits));
    require_dtype(op, "labels", labels, DType::i64);
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    if (labels.numel() != N)
        fail(op, "labels " + desc(labels) + " must have shape (" + std::to_string(N) + ") for logits " + desc(logits));
    if (K <= 0) fail(op, "logits " + desc(logits) + " has no classes");
    if (dlogits.defined()) {
        r.here(op, "dlogits", dlogits);
        require_same_shape(op, "logits", logits, "dlogits", dlogits);
        require_same_dtype(op, "logits", logits, "dlogits", dlogits);
    }
    if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f))
        fail(op, "label_smoothing " + std::to_string(label_smoothing) + " must be in [0, 1]");
    r.floating(op, "logits", logits);
}

void check_mse_loss(const char* op, const TensorRules& r, const Tensor& pred, const Tensor& target,
                    const Tensor& dpred) {
    r.here(op, "pred", pred);
    r.here(op, "target", target);
    require_same_shape(op, "pred", pred, "target", target);
    require_same_dtype(op, "pred", pred, "target", target);
    if (dpred.defined()) {
        r.here(op, "dpred", dpred);
        require_same_shape(op, "pred", pred, "dpred", dpred);
        require_same_dtype(op, "pred", pred, "dpred", dpred);
    }
    r.floating(op, "pred", pred);
}

void check_fields(const char* op, const TensorRules& r, const char* name, const Tensor& t, int fields) {
    r.here(op, name, t);
    if (t.dtype() != DType::f64 || t.numel() < fields)
        fail(op, std::string(name) + " " + desc(t) + " must be f64 with at least " + std::to_string(fields) +
                     " elements");
}

void check_reduce(const char* op, const TensorRules& r, const Tensor& x, bool need_float) {
    r.here(op, "x", x);
    if (need_float) r.floating(op, "x", x);
}

void check_increment(const TensorRules& r, const Tensor& counter) {
    r.here("increment", "counter", counter);
    if (counter.dtype() != DType::i64 || counter.numel() != 1)
        fail("increment", "counter " + desc(counter) + " must be one i64 element");
}

void check_sgd_update(const char* op, const TensorRules& r, const Tensor& param, const Tensor& grad,
                      const Tensor& momentum_buf, const SgdArgs& a) {
    param_grad(op, r, param, grad);
    if (a.momentum != 0.0f) optimizer_state(op, r, "momentum_buf", momentum_buf, param);
    if (a.nesterov && (a.momentum <= 0.0f || a.dampening != 0.0f))
        fail(op, "nesterov momentum requires momentum > 0 and dampening = 0");
}

void check_adam_update(const char* op, const TensorRules& r, const Tensor& param, const Tensor& grad, const Tensor& m,
                       const Tensor& v, const AdamArgs& a, bool with_step) {
    param_grad(op, r, param, grad);
    optimizer_state(op, r, "m", m, param);
    optimizer_state(op, r, "v", v, param);
    if (m.dtype() != v.dtype()) fail(op, "m " + desc(m) + " and v " + desc(v) + " must share a dtype");
    if (with_step && a.step < 1) fail(op, "step " + std::to_string(a.step) + " must be >= 1 (it is 1-based)");
}

}  // namespace hr::ops
