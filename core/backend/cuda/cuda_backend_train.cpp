// CudaBackend: batch norm, losses, reductions, the step-control ops and the optimizers (see cuda_backend.cpp).
#include "backend/cuda/cuda_backend_detail.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "backend/update_rules.h"

namespace hr {

using ops::bn_dims;
using ops::desc;
using ops::fail;
using namespace cuda_detail;

// --- batch norm ----------------------------------------------------------------------------------

void CudaBackend::do_batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                             Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                             Tensor& running_var, float momentum, float eps) {
    std::int64_t N, C, S;
    bn_dims("batchnorm_forward_train", x, N, C, S);
    auto lock = op_lock();
    cuda::batchnorm_forward_train(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(save_mean),
                                  vec(save_invstd), vec(running_mean), vec(running_var), momentum, eps, scratch(), compute_);
}

void CudaBackend::do_batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                             const Tensor& running_mean, const Tensor& running_var, float eps,
                                             Tensor& y) {
    std::int64_t N, C, S;
    bn_dims("batchnorm_forward_infer", x, N, C, S);
    auto lock = op_lock();
    cuda::batchnorm_forward_infer(x.raw(), y.raw(), x.dtype(), N, C, S, vec(gamma), vec(beta), vec(running_mean),
                                  vec(running_var), eps, scratch(), compute_);
}

void CudaBackend::do_batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                        const Tensor& save_mean, const Tensor& save_invstd, Tensor& dx,
                                        Tensor& dgamma, Tensor& dbeta) {
    std::int64_t N, C, S;
    bn_dims("batchnorm_backward", x, N, C, S);
    auto lock = op_lock();
    cuda::batchnorm_backward(x.raw(), dy.raw(), dx.raw(), x.dtype(), N, C, S, vec(gamma), vec(save_mean),
                             vec(save_invstd), vec(dgamma), vec(dbeta), scratch(), compute_);
}

// --- losses --------------------------------------------------------------------------------------

namespace {

void mse_dims(const Tensor& pred, std::int64_t& rows, std::int64_t& cols) {
    const std::int64_t n = pred.numel();
    rows = pred.ndim() >= 1 ? pred.dim(0) : 1;
    cols = rows ? n / rows : 0;
}

}  // namespace

LossResult CudaBackend::do_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                                 Tensor& dlogits, float grad_scale) {
    auto lock = op_lock();
    const std::int64_t N = logits.dim(0), K = logits.dim(1);
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), N, K, label_smoothing,
                                dlogits.defined() ? dlogits.raw() : nullptr, grad_scale, {}, scratch(), compute_);
    const cuda::ReduceResult r = fetch_result();
    if (r.bad_count != 0)  // checked before dlogits was written (as the CPU): nothing was
        fail("softmax_cross_entropy", "label " + std::to_string(r.bad_label) + " in row " + std::to_string(r.first_bad) +
                                          " is outside [0, " + std::to_string(K) + ") for logits " + desc(logits));
    LossResult res;
    res.loss = N ? r.sum / double(N) : 0.0;
    res.correct = r.count;
    return res;
}

LossResult CudaBackend::do_mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) {
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

void CudaBackend::do_softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                                Tensor& dlogits, float grad_scale, const Tensor& control,
                                                Tensor& stats, double weight) {
    auto lock = op_lock();
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::softmax_cross_entropy(logits.raw(), logits.dtype(), labels.data<std::int64_t>(), logits.dim(0),
                                logits.dim(1), label_smoothing, dlogits.defined() ? dlogits.raw() : nullptr,
                                grad_scale, out, scratch(), compute_);
}

void CudaBackend::do_mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                                   const Tensor& control, Tensor& stats, double weight) {
    auto lock = op_lock();
    std::int64_t rows, cols;
    mse_dims(pred, rows, cols);
    cuda::LossOut out{stats.data<double>(), control.defined() ? control.data<double>() : nullptr, weight};
    cuda::mse_loss(pred.raw(), target.raw(), pred.dtype(), rows, cols, dpred.defined() ? dpred.raw() : nullptr,
                   grad_scale, out, scratch(), compute_);
}

// --- reductions ----------------------------------------------------------------------------------

double CudaBackend::do_sum_squares(const Tensor& x) {
    auto lock = op_lock();
    cuda::sum_squares(x.raw(), x.dtype(), x.numel(), scratch(), compute_);
    return fetch_result().sum;
}

// An integer tensor is finite; f64 the GPU does not compute in.
bool CudaBackend::do_all_finite(const Tensor& x) {
    if (!dtype_is_float(x.dtype())) return true;
    require_gpu_float("all_finite", "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), scratch().result(), nullptr, compute_);
    return fetch_result().flag == 0;
}

void CudaBackend::do_all_finite_into(const Tensor& x, Tensor& control) {
    if (!dtype_is_float(x.dtype())) return;
    require_gpu_float("all_finite_into", "x", x);
    auto lock = op_lock();
    cuda::all_finite(x.raw(), x.dtype(), x.numel(), nullptr, control.data<double>(), compute_);
}

// --- counters and step control -------------------------------------------------------------------

void CudaBackend::do_increment(Tensor& counter, std::int64_t by) {
    auto lock = op_lock();
    cuda::increment_i64(counter.data<std::int64_t>(), by, compute_);
}

void CudaBackend::do_step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    auto lock = op_lock();
    cuda::step_control_end(control.data<double>(), dynamic_loss_scale, growth_interval, compute_);
}

// --- optimizers (param and state f32 on the GPU: its rules refuse f64) ----------------------------

void CudaBackend::do_sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) {
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a, nullptr, compute_);
}

void CudaBackend::do_sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                                    const Tensor& control) {
    auto lock = op_lock();
    cuda::sgd_update(param.data<float>(), grad.raw(), grad.dtype(),
                     a.momentum != 0.0f ? momentum_buf.data<float>() : nullptr, param.numel(), a,
                     control.data<double>(), compute_);
}

void CudaBackend::do_adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) {
    auto lock = op_lock();
    // As torch.optim.Adam (single-tensor path): bias corrections in double (backend/update_rules.h), then per element.
    const AdamBiasCorrection bc = adam_bias_correction(a.lr, a.beta1, a.beta2, double(a.step));
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, bc.step_size, bc.bc2_sqrt, nullptr, compute_);
}

void CudaBackend::do_adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                                     const Tensor& control) {
    auto lock = op_lock();
    cuda::adam_update(param.data<float>(), grad.raw(), grad.dtype(), m.data<float>(), v.data<float>(), param.numel(),
                      a, 0.0, 1.0, control.data<double>(), compute_);
}

}  // namespace hr
