#include "optim/optimizer.h"

#include <cmath>

#include "base/error.h"

namespace hr {

void validate_optimizer(const OptimizerConfig& c) {
    if (c.kind != "sgd" && c.kind != "adam" && c.kind != "adamw")
        throw InputError("unknown optimizer '" + c.kind + "'; use sgd, adam or adamw");
    if (!(c.lr > 0) || !std::isfinite(c.lr)) throw InputError("learning rate must be a positive number (--lr)");
    if (c.momentum < 0 || c.momentum >= 1) throw InputError("momentum must be in [0, 1) (--momentum)");
    if (c.weight_decay < 0) throw InputError("weight decay must be 0 or more (--weight-decay)");
    if (c.nesterov && (c.momentum <= 0 || c.dampening != 0))
        throw InputError("Nesterov momentum needs momentum > 0 and dampening 0");
    if (c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1)
        throw InputError("Adam betas must be in [0, 1)");
    if (!(c.eps > 0)) throw InputError("Adam eps must be positive");
    if (c.decay_scope != "auto" && c.decay_scope != "all" && c.decay_scope != "matrices")
        throw InputError(HR_MSG("optim.decay_scope", "unknown weight-decay scope '%1'; use auto, all or matrices"),
                         {c.decay_scope});
    if (!(c.grad_clip >= 0) || !std::isfinite(c.grad_clip))
        throw InputError(HR_MSG("optim.grad_clip", "gradient clipping must be 0 (off) or a positive norm (--grad-clip)"));
}

int optimizer_states_per_param(const OptimizerConfig& c) {
    if (c.kind == "sgd") return c.momentum > 0 ? 1 : 0;
    return 2;
}

Optimizer::Optimizer(const OptimizerConfig& config, Backend& backend, std::int64_t param_count, DType dtype)
    : Optimizer(config, backend, backend.allocator(), param_count, dtype) {}

Optimizer::Optimizer(const OptimizerConfig& config, Backend& backend, Allocator& state_alloc,
                     std::int64_t param_count, DType dtype)
    : config_(config), backend_(backend) {
    validate_optimizer(config_);
    const DType sdt = dtype == DType::f64 ? DType::f64 : DType::f32;
    const int n = optimizer_states_per_param(config_);
    if (n >= 1) m_ = Tensor::empty(state_alloc, {param_count}, sdt, MemCategory::optimizer_state);
    if (n >= 2) v_ = Tensor::empty(state_alloc, {param_count}, sdt, MemCategory::optimizer_state);
}

void Optimizer::step(Tensor& params, const Tensor& grads, double lr, float grad_scale) {
    ++steps_;
    update_piece(params, grads, 0, 0, lr, grad_scale);
}

void Optimizer::step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads, double lr,
                     float grad_scale, const std::vector<std::int64_t>& flat_offsets) {
    if (params.size() != grads.size()) throw Error("internal: optimizer pieces of params and grads differ in number");
    if (!flat_offsets.empty() && flat_offsets.size() != params.size())
        throw Error("internal: optimizer pieces and their flat offsets differ in number");
    std::int64_t at = 0;
    for (const Tensor& p : params) at += p.numel();
    const Tensor& state = m_.defined() ? m_ : v_;
    if (state.defined() && at != state.numel())
        throw Error("internal: optimizer pieces hold " + std::to_string(at) + " values, the state " +
                    std::to_string(state.numel()));
    ++steps_;
    at = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const std::int64_t n = params[i].numel();
        Tensor pf = params[i].reshape({n}), gf = grads[i].reshape({n});
        update_piece(pf, gf, at, flat_offsets.empty() ? at : flat_offsets[i], lr, grad_scale);
        at += n;
    }
}

void Optimizer::update_piece(Tensor& p, const Tensor& g, std::int64_t state_at, std::int64_t flat_at, double lr,
                             float grad_scale) {
    const std::int64_t n = p.numel();
    auto state = [&](const Tensor& t, std::int64_t off, std::int64_t len) {
        return t.defined() ? t.view(state_at + off, {len}) : Tensor();
    };
    if (!(config_.weight_decay > 0 && segments_.size() > 1)) {
        if (state_at == 0 && (!m_.defined() || m_.numel() == n)) {
            update(p, g, m_, v_, lr, grad_scale);
        } else {
            Tensor m = state(m_, 0, n), v = state(v_, 0, n);
            update(p, g, m, v, lr, grad_scale);
        }
        return;
    }
    // weight decay on some tensors only: one update per run of the flat buffer (same arithmetic); a
    // piece (a rank's shard of a unit) takes the runs that overlap its flat range [flat_at, flat_at + n)
    const OptimizerConfig keep = config_;
    for (const Segment& s : segments_) {
        const std::int64_t b = std::max(s.begin, flat_at), e = std::min(s.end, flat_at + n);
        if (e <= b) continue;
        const std::int64_t off = b - flat_at, len = e - b;
        Tensor pp = p.view(off, {len});
        Tensor gg = g.view(off, {len});
        Tensor m = state(m_, off, len), v = state(v_, off, len);
        config_.weight_decay = s.decay ? keep.weight_decay : 0.0;
        update(pp, gg, m, v, lr, grad_scale);
    }
    config_ = keep;
}

void Optimizer::update(Tensor& params, const Tensor& grads, Tensor& m, Tensor& v, double lr, float grad_scale) {
    if (config_.kind == "sgd") {
        SgdArgs a;
        a.lr = static_cast<float>(lr);
        a.momentum = static_cast<float>(config_.momentum);
        a.dampening = static_cast<float>(config_.dampening);
        a.nesterov = config_.nesterov;
        a.weight_decay = static_cast<float>(config_.weight_decay);
        a.first_step = steps_ == 1;
        a.grad_scale = grad_scale;
        backend_.sgd_update(params, grads, m, a);
    } else {
        AdamArgs a;
        a.lr = static_cast<float>(lr);
        a.beta1 = static_cast<float>(config_.beta1);
        a.beta2 = static_cast<float>(config_.beta2);
        a.eps = static_cast<float>(config_.eps);
        a.weight_decay = static_cast<float>(config_.weight_decay);
        a.decoupled_weight_decay = config_.kind == "adamw";
        a.step = steps_;
        a.grad_scale = grad_scale;
        backend_.adam_update(params, grads, m, v, a);
    }
}

void Optimizer::step_ctl(Tensor& params, const Tensor& grads, const Tensor& control, float grad_scale) {
    if (config_.kind == "sgd") {
        SgdArgs a;
        a.momentum = static_cast<float>(config_.momentum);
        a.dampening = static_cast<float>(config_.dampening);
        a.nesterov = config_.nesterov;
        a.weight_decay = static_cast<float>(config_.weight_decay);
        a.grad_scale = grad_scale;
        backend_.sgd_update_ctl(params, grads, m_, a, control);
    } else {
        AdamArgs a;
        a.beta1 = static_cast<float>(config_.beta1);
        a.beta2 = static_cast<float>(config_.beta2);
        a.eps = static_cast<float>(config_.eps);
        a.weight_decay = static_cast<float>(config_.weight_decay);
        a.decoupled_weight_decay = config_.kind == "adamw";
        a.grad_scale = grad_scale;
        backend_.adam_update_ctl(params, grads, m_, v_, a, control);
    }
}

std::vector<std::pair<std::string, Tensor>> Optimizer::state() const {
    std::vector<std::pair<std::string, Tensor>> s;
    if (config_.kind == "sgd") {
        if (m_.defined()) s.push_back({"momentum_buffer", m_});
    } else {
        s.push_back({"exp_avg", m_});
        s.push_back({"exp_avg_sq", v_});
    }
    return s;
}

}  // namespace hr
