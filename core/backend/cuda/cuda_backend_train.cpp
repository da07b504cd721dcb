// CudaBackend: batch norm, losses, reductions, the step-control ops and the optimizers (see cuda_backend.cpp).
#include "backend/cuda/cuda_backend_detail.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace hr {

using ops::desc;
using ops::fail;
using ops::ncs;
using ops::bn_dims;
using ops::require_dtype;
using ops::require_float;
using ops::require_same_dtype;
using ops::require_same_shape;
using namespace cuda_detail;

// --- batch norm ----------------------------------------------------------------------------------


void CudaBackend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                          Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                          Tensor& running_var, float momentum, float eps) {
    const char* op = "batchnorm_forward_train";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    if (N * S <= 1) fail(op, "needs more than one value per channel, got x " + desc(x));
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("save_mean", save_mean, true);
    check_vec("save_invstd", save_invstd, true);
    check_vec("running_mean", running_mean, false);
    check_vec("running_var", running_var, false);
    check_vec("gamma", gamma, false);
    check_vec("beta", beta, false);
    auto lock = op_lock();
    cuda::batchnorm_forward_train(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(save_mean),
                                  vec(save_invstd), vec(running_mean), vec(running_var), momentum, eps, scratch(), compute_);
}

void CudaBackend::batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                          const Tensor& running_mean, const Tensor& running_var, float eps,
                                          Tensor& y) {
    const char* op = "batchnorm_forward_infer";
    require_here(op, "x", x);
    require_here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("running_mean", running_mean, true);
    check_vec("running_var", running_var, true);
    check_vec("gamma", gamma, false);
    check_vec("beta", beta, false);
    auto lock = op_lock();
    cuda::batchnorm_forward_infer(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(running_mean),
                                  vec(running_var), eps, scratch(), compute_);
}

void CudaBackend::batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                                     const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const char* op = "batchnorm_backward";
    require_here(op, "x", x);
    require_here(op, "dy", dy);
    require_here(op, "dx", dx);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    require_gpu_float(op, "x", x);
    std::int64_t N, C, S;
    bn_dims(op, x, N, C, S);
    auto check_vec = [&](const char* name, const Tensor& t, bool required) {
        if (!t.defined()) {
            if (required) fail(op, std::string(name) + " is undefined");
            return;
        }
        require_here(op, name, t);
        require_gpu_float(op, name, t);
        if (t.numel() != C) fail(op, std::string(name) + " " + desc(t) + " must have shape (" + std::to_string(C) + ")");
    };
    check_vec("save_mean", save_mean, true);
    check_vec("save_invstd", save_invstd, true);
    check_vec("gamma", gamma, false);
    check_vec("dgamma", dgamma, false);
    check_vec("dbeta", dbeta, false);
    auto lock = op_lock();
    cuda::batchnorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), N, C, S, vec(gamma), vec(save_mean),
                             vec(save_invstd), vec(dgamma), vec(dbeta), scratch(), compute_);
}

// --- losses --------------------------------------------------------------------------------------

namespace {

void check_xent(const char* op, const CudaBackend& be, const Tensor& logits, const Tensor& labels,
                float label_smoothing, const Tensor& dlogits) {
    be.require_here(op, "logits", logits);
    be.require_here(op, "labels", labels);
    if (logits.ndim() != 2) fail(op, "expects logits (N, K), got " + desc(logits));
    require_dtype(op, "labels", labels, DType::i64);
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    if (labels.numel() != N)
        fail(op, "labels " + desc(labels) + " must have shape (" + std::to_string(N) + ") for logits " + desc(logits));
    if (K <= 0) fail(op, "logits " + desc(logits) + " has no classes");
    if (dlogits.defined()) {
        be.require_here(op, "dlogits", dlogits);
        require_same_shape(op, "logits", logits, "dlogits", dlogits);
        require_same_dtype(op, "logits", logits, "dlogits", dlogits);
    }
    if (!(label_smoothing >= 0.0f && label_smoothing <= 1.0f))
        fail(op, "label_smoothing " + std::to_string(label_smoothing) + " must be in [0, 1]");
    require_gpu_float(op, "logits", logits);
}

void check_mse(const char* op, const CudaBackend& be, const Tensor& pred, const Tensor& target, const Tensor& dpred) {
    be.require_here(op, "pred", pred);
    be.require_here(op, "target", target);
    require_same_shape(op, "pred", pred, "target", target);
    require_same_dtype(op, "pred", pred, "target", target);
    if (dpred.defined()) {
        be.require_here(op, "dpred", dpred);
        require_same_shape(op, "pred", pred, "dpred", dpred);
        require_same_dtype(op, "pred", pred, "dpred", dpred);
    }
    require_gpu_float(op, "pred", pred);
}

void check_fields(const char* op, const CudaBackend& be, const char* name, const Tensor& t, int fields) {
    be.require_here(op, name, t);
    if (t.dtype() != DType::f64 || t.numel() < fields)
        fail(op, std::string(name) + " " + desc(t) + " must be f64 with at least " + std::to_string(fields) +
                     " elements");
}

void mse_dims(const Tensor& pred, std::int64_t& rows, std::int64_t& cols) {
    const std::int64_t n = pred.numel();
    rows = pred.ndim() >= 1 ? pred.dim(0) : 1;
    cols = rows ? n / rows : 0;
}

}  // namespace

LossResult CudaBackend::softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                              Tensor& dlogits, float grad_scale) {
    const char* op = "softmax_cross_entropy";
    check_xent(op, *this, logits, labels, label_smoothing, dlogits);
    auto lock = op_lock();
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), N, K, label_smoothing,
                                dlogits.defined() ? dlogits.raw() : nullptr, grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    if (r.bad_count != 0)  // checked before dlogits was written (as the CPU): nothing was
        fail(op, "label " + std::to_string(r.bad_label) + " in row " + std::to_string(r.first_bad) + " is outside [0, " +
                     std::to_string(K) + ") for logits " + desc(logits));
    LossResult res;
    res.loss = N ? r.sum / double(N) : 0.0;
    res.correct = r.count;
    return res;
}

LossResult CudaBackend::mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) {
    check_mse("mse_loss", *this, pred, target, dpred);
    auto lock = op_lock();
    std::int64_t rows, cols;
    mse_dims(pred, rows, cols);
    cuda::mse_loss(pred.raw(), target.raw(), pred.dtype(), rows, cols, dpred.defined() ? dpred.raw() : nullptr,
                   grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    const std::int64_t n = pred.numel();
    LossResult res;
    res.loss = n ? r.sum / double(n) : 0.0;
    res.correct = r.count;
    return res;
}

void CudaBackend::softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                             Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                             double weight) {
    const char* op = "softmax_cross_entropy_into";
    check_xent(op, *this, logits, labels, label_smoothing, dlogits);
    check_fields(op, *this, "stats", stats, kStepStatsFields);
    if (control.defined()) check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), logits.dim(0),
                                logits.dim(1), label_smoothing, dlogits.defined() ? dlogits.raw() : nullptr,
                                grad_scale, out, scratch(), compute_);
}

void CudaBackend::mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                                const Tensor& control, Tensor& stats, double weight) {
    const char* op = "mse_loss_into";
    check_mse(op, *this, pred, target, dpred);
    check_fields(op, *this, "stats", stats, kStepStatsFields);
    if (control.defined()) check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    std::int64_t rows, cols;
    mse_dims(pred, rows, cols);
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::mse_loss(pred.raw(), target.raw(), pred.dtype(), rows, cols, dpred.defined() ? dpred.raw() : nullptr,
                   grad_scale, out, scratch(), compute_);
}

// --- reductions ----------------------------------------------------------------------------------

double CudaBackend::sum_squares(const Tensor& x) {
    require_here("sum_squares", "x", x);
    require_gpu_float("sum_squares", "x", x);
    auto lock = op_lock();
    cuda::sum_squares(x.raw(), x.dtype(), x.numel(), scratch(), compute_);
    return fetch_result().sum;
}

bool CudaBackend::all_finite(const Tensor& x) {
    require_here("all_finite", "x", x);
    if (!dtype_is_float(x.dtype())) return true;
    require_gpu_float("all_finite", "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), scratch().result(), nullptr, compute_);
    return fetch_result().flag == 0;
}

void CudaBackend::all_finite_into(const Tensor& x, Tensor& control) {
    const char* op = "all_finite_into";
    require_here(op, "x", x);
    check_fields(op, *this, "control", control, kStepControlFields);
    if (!dtype_is_float(x.dtype())) return;
    require_gpu_float(op, "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), nullptr, control.data<double>(), compute_);
}

// --- counters and step control -------------------------------------------------------------------

void CudaBackend::increment(Tensor& counter, std::int64_t by) {
    require_here("increment", "counter", counter);
    if (counter.dtype() != DType::i64 || counter.numel() != 1)
        fail("increment", "counter " + desc(counter) + " must be one i64 element");
    auto lock = op_lock();
    cuda::increment_i64(counter.data<std::int64_t>(), by, compute_);
}

void CudaBackend::step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    check_fields("step_control_end", *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::step_control_end(control.data<double>(), dynamic_loss_scale, growth_interval, compute_);
}

// --- optimizers ----------------------------------------------------------------------------------

namespace {

void check_param(const char* op, const Tensor& param, const Tensor& grad) {
    if (param.dtype() != DType::f32)
        fail(op, "param " + desc(param) + " must be f32 on the GPU (keep f32 master weights for low precision)");
    require_gpu_float(op, "grad", grad);
    if (grad.numel() != param.numel())
        fail(op, "grad " + desc(grad) + " must have as many elements as param " + desc(param));
}

void check_state(const char* op, const char* name, const Tensor& s, const Tensor& param) {
    if (s.numel() != param.numel())
        fail(op, std::string(name) + " " + desc(s) + " must have as many elements as param " + desc(param));
    if (s.dtype() != DType::f32) fail(op, std::string(name) + " " + desc(s) + " must be f32 on the GPU");
}

void check_sgd(const char* op, const CudaBackend& be, const Tensor& param, const Tensor& grad,
               const Tensor& momentum_buf, const SgdArgs& a) {
    be.require_here(op, "param", param);
    be.require_here(op, "grad", grad);
    check_param(op, param, grad);
    if (a.momentum != 0.0f) {
        be.require_here(op, "momentum_buf", momentum_buf);
        check_state(op, "momentum_buf", momentum_buf, param);
    }
    if (a.nesterov && (a.momentum <= 0.0f || a.dampening != 0.0f))
        fail(op, "nesterov momentum requires momentum > 0 and dampening = 0");
}

void check_adam(const char* op, const CudaBackend& be, const Tensor& param, const Tensor& grad, const Tensor& m,
                const Tensor& v) {
    be.require_here(op, "param", param);
    be.require_here(op, "grad", grad);
    be.require_here(op, "m", m);
    be.require_here(op, "v", v);
    check_param(op, param, grad);
    check_state(op, "m", m, param);
    check_state(op, "v", v, param);
}

}  // namespace

void CudaBackend::sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) {
    check_sgd("sgd_update", *this, param, grad, momentum_buf, a);
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a, nullptr, compute_);
}

void CudaBackend::sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                                 const Tensor& control) {
    const char* op = "sgd_update_ctl";
    check_sgd(op, *this, param, grad, momentum_buf, a);
    check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a,
                     control.data<double>(), compute_);
}

void CudaBackend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) {
    const char* op = "adam_update";
    check_adam(op, *this, param, grad, m, v);
    if (a.step < 1) fail(op, "step " + std::to_string(a.step) + " must be >= 1 (it is 1-based)");
    auto lock = op_lock();
    // As torch.optim.Adam (single-tensor path): bias corrections in double, then per element.
    const double bc1 = 1.0 - std::pow(double(a.beta1), double(a.step));
    const double bc2 = 1.0 - std::pow(double(a.beta2), double(a.step));
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, double(a.lr) / bc1, std::sqrt(bc2), nullptr, compute_);
}

void CudaBackend::adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                                  const Tensor& control) {
    const char* op = "adam_update_ctl";
    check_adam(op, *this, param, grad, m, v);
    check_fields(op, *this, "control", control, kStepControlFields);
    auto lock = op_lock();
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, 0.0, 1.0, control.data<double>(), compute_);
}

}  // namespace hr
