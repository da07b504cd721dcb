// Every op of backend.h, checked once above the backends (ggml's way): the op's arguments against its
// contract (op_checks.h, transformer_checks.h) and the backend's tensor_rules(), then the backend's do_
// op. So the CPU and the CUDA backend refuse a bad call the same way, with one message, and neither
// checks it again; tests/unit/test_op_checks.cpp calls each op with a bad argument.
#include "backend/backend.h"
#include "backend/op_checks.h"
#include "backend/transformer_checks.h"

namespace hr {

void Backend::fill(Tensor& t, double value) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_fill(r, t);
    do_fill(t, value);
}

void Backend::copy(const Tensor& src, Tensor& dst) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_copy(r, src, dst);
    do_copy(src, dst);
}

void Backend::copy_from_host(const void* src, Tensor& dst) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_from_host("copy_from_host", r, src, dst);
    do_copy_from_host(src, dst);
}

void Backend::copy_to_host(const Tensor& src, void* dst) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_to_host("copy_to_host", r, src, dst);
    do_copy_to_host(src, dst);
}

void Backend::add(const Tensor& a, const Tensor& b, Tensor& out) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_add(r, a, b, out);
    do_add(a, b, out);
}

void Backend::axpy(float alpha, const Tensor& x, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_axpy(r, x, y);
    do_axpy(alpha, x, y);
}

void Backend::scale(Tensor& x, float alpha) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_scale(r, x);
    do_scale(x, alpha);
}

void Backend::gemm(bool trans_a, bool trans_b, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_gemm(r, trans_a, trans_b, a, b, c);
    do_gemm(trans_a, trans_b, alpha, a, b, beta, c);
}

void Backend::add_bias(Tensor& y, const Tensor& bias) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_bias("add_bias", "y", "bias", r, y, bias);
    do_add_bias(y, bias);
}

void Backend::bias_grad(const Tensor& dy, Tensor& dbias) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_bias("bias_grad", "dy", "dbias", r, dy, dbias);
    do_bias_grad(dy, dbias);
}

std::size_t Backend::conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                            DType dtype) const {
    ops::check_conv2d_shapes(x, w, y, p, dtype);
    return do_conv2d_workspace_bytes(x, w, y, p, dtype);
}

void Backend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const Conv2dParams& p,
                             Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_conv2d_forward(r, x, w, bias, y, p);
    do_conv2d_forward(x, w, bias, y, p, workspace);
}

void Backend::conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, const Conv2dParams& p,
                                   Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_conv2d_backward_data("conv2d_backward_data", r, dy, w, dx, p);
    do_conv2d_backward_data(dy, w, dx, p, workspace);
}

void Backend::conv2d_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                                     const Conv2dParams& p, Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_conv2d_backward_filter("conv2d_backward_filter", r, x, dy, dw, dbias, p);
    do_conv2d_backward_filter(x, dy, dw, dbias, p, workspace);
}

void Backend::conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx, Tensor& dw, Tensor& dbias,
                              const Conv2dParams& p, Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    if (dx.defined()) ops::check_conv2d_backward_data("conv2d_backward", r, dy, w, dx, p);
    ops::check_conv2d_backward_filter("conv2d_backward", r, x, dy, dw, dbias, p);
    do_conv2d_backward(x, dy, w, dx, dw, dbias, p, workspace);
}

void Backend::maxpool2d_forward(const Tensor& x, Tensor& y, Tensor& indices, const Pool2dParams& p) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_maxpool2d_forward(r, x, y, indices, p);
    do_maxpool2d_forward(x, y, indices, p);
}

void Backend::maxpool2d_backward(const Tensor& dy, const Tensor& indices, Tensor& dx) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_maxpool2d_backward(r, dy, indices, dx, nullptr);
    do_maxpool2d_backward(dy, indices, dx);
}

void Backend::maxpool2d_backward_windows(const Tensor& dy, const Tensor& indices, Tensor& dx, const Pool2dParams& p) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_maxpool2d_backward(r, dy, indices, dx, &p);
    do_maxpool2d_backward_windows(dy, indices, dx, p);
}

void Backend::avgpool2d_forward(const Tensor& x, Tensor& y, const Pool2dParams& p) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_avgpool2d_forward(r, x, y, p);
    do_avgpool2d_forward(x, y, p);
}

void Backend::avgpool2d_backward(const Tensor& dy, Tensor& dx, const Pool2dParams& p) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_avgpool2d_backward(r, dy, dx, p);
    do_avgpool2d_backward(dy, dx, p);
}

void Backend::activation_forward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_activation_forward(r, x, y);
    do_activation_forward(kind, alpha, x, y);
}

void Backend::activation_backward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y, const Tensor& dy,
                                  Tensor& dx) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_activation_backward(r, kind, x, y, dy, dx);
    do_activation_backward(kind, alpha, x, y, dy, dx);
}

void Backend::dropout_forward(const Tensor& x, Tensor& y, Tensor& mask, float p, std::uint64_t seed,
                              std::uint64_t offset) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_dropout_forward(r, x, y, mask, p);
    do_dropout_forward(x, y, mask, p, seed, offset);
}

void Backend::dropout_backward(const Tensor& dy, const Tensor& mask, float p, Tensor& dx) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_dropout_backward(r, dy, mask, dx);
    do_dropout_backward(dy, mask, p, dx);
}

void Backend::batchnorm_forward_train(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                      Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean, Tensor& running_var,
                                      float momentum, float eps) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_batchnorm_forward_train("batchnorm_forward_train", r, x, gamma, beta, y, save_mean, save_invstd,
                                       running_mean, running_var);
    do_batchnorm_forward_train(x, gamma, beta, y, save_mean, save_invstd, running_mean, running_var, momentum, eps);
}

void Backend::batchnorm_forward_infer(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                      const Tensor& running_mean, const Tensor& running_var, float eps, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_batchnorm_forward_infer(r, x, gamma, beta, running_mean, running_var, y);
    do_batchnorm_forward_infer(x, gamma, beta, running_mean, running_var, eps, y);
}

void Backend::batchnorm_forward_recompute(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor& y,
                                          Tensor& save_mean, Tensor& save_invstd, Tensor& running_mean,
                                          Tensor& running_var, float eps) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_batchnorm_forward_train("batchnorm_forward_recompute", r, x, gamma, beta, y, save_mean, save_invstd,
                                       running_mean, running_var);
    do_batchnorm_forward_recompute(x, gamma, beta, y, save_mean, save_invstd, running_mean, running_var, eps);
}

void Backend::batchnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& save_mean,
                                 const Tensor& save_invstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_batchnorm_backward(r, x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
    do_batchnorm_backward(x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
}

LossResult Backend::softmax_cross_entropy(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                          Tensor& dlogits, float grad_scale) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_softmax_cross_entropy("softmax_cross_entropy", r, logits, labels, label_smoothing, dlogits);
    return do_softmax_cross_entropy(logits, labels, label_smoothing, dlogits, grad_scale);
}

LossResult Backend::mse_loss(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_mse_loss("mse_loss", r, pred, target, dpred);
    return do_mse_loss(pred, target, dpred, grad_scale);
}

void Backend::embedding_forward(const Tensor& ids, const Tensor& table, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_embedding_forward(r, ids, table, y);
    do_embedding_forward(ids, table, y);
}

void Backend::embedding_backward(const Tensor& ids, const Tensor& dy, Tensor& dtable) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_embedding_backward(r, ids, dy, dtable);
    do_embedding_backward(ids, dy, dtable);
}

void Backend::layernorm_forward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps, Tensor& y,
                                Tensor& mean, Tensor& rstd) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_layernorm_forward(r, x, gamma, beta, y, mean, rstd);
    do_layernorm_forward(x, gamma, beta, eps, y, mean, rstd);
}

void Backend::layernorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& mean,
                                 const Tensor& rstd, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_layernorm_backward(r, x, dy, gamma, mean, rstd, dx, dgamma, dbeta);
    do_layernorm_backward(x, dy, gamma, mean, rstd, dx, dgamma, dbeta);
}

void Backend::gelu_tanh_forward(const Tensor& x, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_gelu_forward(r, x, y);
    do_gelu_tanh_forward(x, y);
}

void Backend::gelu_tanh_backward(const Tensor& x, const Tensor& dy, Tensor& dx) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_gelu_backward(r, x, dy, dx);
    do_gelu_tanh_backward(x, dy, dx);
}

void Backend::attention_forward(const Tensor& qkv, Tensor& out, Tensor& lse, const AttentionParams& p,
                                Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_attention("attention_forward", r, qkv, out, lse, p);
    do_attention_forward(qkv, out, lse, p, workspace);
}

void Backend::attention_backward(const Tensor& qkv, const Tensor& out, const Tensor& lse, const Tensor& dout,
                                 Tensor& dqkv, const AttentionParams& p, Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_attention_backward(r, qkv, out, lse, dout, dqkv, p);
    do_attention_backward(qkv, out, lse, dout, dqkv, p, workspace);
}

void Backend::rmsnorm_forward(const Tensor& x, const Tensor& gamma, float eps, Tensor& y, Tensor& rstd) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_rmsnorm_forward(r, x, gamma, y, rstd);
    do_rmsnorm_forward(x, gamma, eps, y, rstd);
}

void Backend::rmsnorm_backward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& rstd, Tensor& dx,
                               Tensor& dgamma) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_rmsnorm_backward(r, x, dy, gamma, rstd, dx, dgamma);
    do_rmsnorm_backward(x, dy, gamma, rstd, dx, dgamma);
}

void Backend::rope_apply(Tensor& x, int heads, const RopeParams& p, bool inverse) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_rope(r, x, heads, p);
    do_rope_apply(x, heads, p, inverse);
}

void Backend::swiglu_forward(const Tensor& gate, const Tensor& up, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_swiglu("swiglu_forward", r, gate, up, y, Tensor());
    do_swiglu_forward(gate, up, y);
}

void Backend::swiglu_backward(const Tensor& gate, const Tensor& up, const Tensor& dy, Tensor& dgate, Tensor& dup) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_swiglu("swiglu_backward", r, gate, up, dgate, dup);
    ops::check_swiglu("swiglu_backward", r, gate, dy, Tensor(), Tensor());
    do_swiglu_backward(gate, up, dy, dgate, dup);
}

void Backend::rope_apply_at(Tensor& x, int heads, const RopeParams& p, std::int64_t first) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_rope(r, x, heads, p);
    if (first < 0) throw Error("rope_apply_at: the first position " + std::to_string(first) + " is negative");
    do_rope_apply_at(x, heads, p, first);
}

void Backend::attention_cached(const Tensor& qkv, Tensor& k_cache, Tensor& v_cache, std::int64_t pos,
                               const AttentionParams& p, Tensor& out, Tensor& workspace) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_attention_cached(r, qkv, k_cache, v_cache, pos, p, out);
    do_attention_cached(qkv, k_cache, v_cache, pos, p, out, workspace);
}

LossResult Backend::cross_entropy_inplace(Tensor& logits, const Tensor& targets, bool want_grad, float grad_scale) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_cross_entropy(r, logits, targets);
    return do_cross_entropy_inplace(logits, targets, want_grad, grad_scale);
}

void Backend::copy_rows(const Tensor& src, std::int64_t src_row, Tensor& dst, std::int64_t dst_row, std::int64_t rows) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_copy_rows(r, src, src_row, dst, dst_row, rows);
    do_copy_rows(src, src_row, dst, dst_row, rows);
}

void Backend::transpose_last2(const Tensor& x, Tensor& y) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_transpose_last2(r, x, y);
    do_transpose_last2(x, y);
}

void Backend::dequantize(const Tensor& packed, int bits, std::int64_t group, Tensor& w) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_dequantize(r, packed, bits, group, w);
    do_dequantize(packed, bits, group, w);
}

double Backend::sum_squares(const Tensor& x) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_reduce("sum_squares", r, x, true);
    return do_sum_squares(x);
}

bool Backend::all_finite(const Tensor& x) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_reduce("all_finite", r, x, false);
    return do_all_finite(x);
}

void Backend::sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_sgd_update("sgd_update", r, param, grad, momentum_buf, a);
    do_sgd_update(param, grad, momentum_buf, a);
}

void Backend::adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_adam_update("adam_update", r, param, grad, m, v, a, true);
    do_adam_update(param, grad, m, v, a);
}

std::shared_ptr<Backend::Fence> Backend::upload_async(const void* src, Tensor& dst, const Fence* reads_done) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_from_host("upload_async", r, src, dst);
    return do_upload_async(src, dst, reads_done);
}

std::shared_ptr<Backend::Fence> Backend::copy_to_host_async(const Tensor& src, void* dst) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_to_host("copy_to_host_async", r, src, dst);
    return do_copy_to_host_async(src, dst);
}

void Backend::increment(Tensor& counter, std::int64_t by) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_increment(r, counter);
    do_increment(counter, by);
}

void Backend::softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                         Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                         double weight) {
    const ops::TensorRules& r = tensor_rules();
    const char* op = "softmax_cross_entropy_into";
    ops::check_softmax_cross_entropy(op, r, logits, labels, label_smoothing, dlogits);
    ops::check_fields(op, r, "stats", stats, kStepStatsFields);
    if (control.defined()) ops::check_fields(op, r, "control", control, kStepControlFields);
    do_softmax_cross_entropy_into(logits, labels, label_smoothing, dlogits, grad_scale, control, stats, weight);
}

void Backend::mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                            const Tensor& control, Tensor& stats, double weight) {
    const ops::TensorRules& r = tensor_rules();
    const char* op = "mse_loss_into";
    ops::check_mse_loss(op, r, pred, target, dpred);
    ops::check_fields(op, r, "stats", stats, kStepStatsFields);
    if (control.defined()) ops::check_fields(op, r, "control", control, kStepControlFields);
    do_mse_loss_into(pred, target, dpred, grad_scale, control, stats, weight);
}

void Backend::all_finite_into(const Tensor& x, Tensor& control) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_reduce("all_finite_into", r, x, false);
    ops::check_fields("all_finite_into", r, "control", control, kStepControlFields);
    do_all_finite_into(x, control);
}

void Backend::sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                             const Tensor& control) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_sgd_update("sgd_update_ctl", r, param, grad, momentum_buf, a);
    ops::check_fields("sgd_update_ctl", r, "control", control, kStepControlFields);
    do_sgd_update_ctl(param, grad, momentum_buf, a, control);
}

void Backend::adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                              const Tensor& control) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_adam_update("adam_update_ctl", r, param, grad, m, v, a, false);
    ops::check_fields("adam_update_ctl", r, "control", control, kStepControlFields);
    do_adam_update_ctl(param, grad, m, v, a, control);
}

void Backend::step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    const ops::TensorRules& r = tensor_rules();
    ops::check_fields("step_control_end", r, "control", control, kStepControlFields);
    do_step_control_end(control, dynamic_loss_scale, growth_interval);
}

}  // namespace hr
