// The reference implementations of backend.h's ordering, counter and step-control ops, in terms of
// the other ops and host copies. They are what the CPU backend uses (its ops finish when they return,
// so a "device" scalar is a host read away) and what a GPU backend's kernels must agree with.
#include <array>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "backend/backend.h"
#include "base/error.h"

namespace hr {

namespace {

std::string desc_of(const Tensor& t) {
    return t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t.shape()) : "undefined";
}

void require_f64_fields(const char* op, const char* name, const Tensor& t, int fields) {
    if (!t.defined() || t.dtype() != DType::f64 || t.numel() < fields)
        throw Error(std::string(op) + ": " + name + " must be an f64 tensor of at least " + std::to_string(fields) +
                    " elements, got " + desc_of(t));
}

using Control = std::array<double, kStepControlFields>;
using Stats = std::array<double, kStepStatsFields>;

Control read_control(Backend& b, const char* op, const Tensor& control) {
    Control c{};
    c[kCtlLossScale] = 1.0;
    if (!control.defined()) return c;
    require_f64_fields(op, "control", control, kStepControlFields);
    b.copy_to_host(control.view(0, {kStepControlFields}), c.data());
    return c;
}

Stats read_stats(Backend& b, const char* op, const Tensor& stats) {
    require_f64_fields(op, "stats", stats, kStepStatsFields);
    Stats s{};
    b.copy_to_host(stats.view(0, {kStepStatsFields}), s.data());
    return s;
}

void write_stats(Backend& b, Tensor& stats, const Stats& s) {
    Tensor v = stats.view(0, {kStepStatsFields});
    b.copy_from_host(s.data(), v);
}

// Counts labels outside [0, K); the first one's value and row go to first_label / first_row.
std::int64_t bad_labels(Backend& b, const char* op, const Tensor& labels, std::int64_t K, std::int64_t& first_label,
                        std::int64_t& first_row) {
    if (!labels.defined() || labels.dtype() != DType::i64)
        throw Error(std::string(op) + ": labels must be i64, got " + desc_of(labels));
    std::vector<std::int64_t> host(static_cast<std::size_t>(labels.numel()));
    b.copy_to_host(labels, host.data());
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < host.size(); ++i)
        if (host[i] < 0 || host[i] >= K) {
            if (bad++ == 0) {
                first_label = host[i];
                first_row = static_cast<std::int64_t>(i);
            }
        }
    return bad;
}

}  // namespace

std::shared_ptr<void> Backend::host_buffer(std::size_t bytes) {
    void* p = std::calloc(bytes ? bytes : 1, 1);
    if (!p) throw std::bad_alloc();
    return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

void Backend::increment(Tensor& counter, std::int64_t by) {
    if (!counter.defined() || counter.dtype() != DType::i64 || counter.numel() != 1)
        throw Error("increment: counter must be one i64 element, got " + desc_of(counter));
    std::int64_t v = 0;
    copy_to_host(counter, &v);
    v += by;
    copy_from_host(&v, counter);
}

void Backend::softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                         Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                         double weight) {
    const char* op = "softmax_cross_entropy_into";
    const Control c = read_control(*this, op, control);
    Stats s = read_stats(*this, op, stats);
    if (logits.defined() && logits.ndim() == 2 && labels.defined() && labels.numel() == logits.dim(0)) {
        std::int64_t label = 0, row = 0;
        const std::int64_t bad = bad_labels(*this, op, labels, logits.dim(1), label, row);
        if (bad > 0) {  // validated first: dlogits is not written
            if (s[kStatBadLabels] == 0) {
                s[kStatBadLabel] = static_cast<double>(label);
                s[kStatBadRow] = static_cast<double>(row);
            }
            s[kStatBadLabels] += static_cast<double>(bad);
            write_stats(*this, stats, s);
            return;
        }
    }
    // (other shape errors are the plain op's to report)
    const LossResult r = softmax_cross_entropy(logits, labels, label_smoothing, dlogits,
                                               static_cast<float>(grad_scale * c[kCtlLossScale]));
    s[kStatLoss] += weight * r.loss;
    s[kStatCorrect] += static_cast<double>(r.correct);
    write_stats(*this, stats, s);
}

void Backend::mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                            const Tensor& control, Tensor& stats, double weight) {
    const char* op = "mse_loss_into";
    const Control c = read_control(*this, op, control);
    Stats s = read_stats(*this, op, stats);
    const LossResult r = mse_loss(pred, target, dpred, static_cast<float>(grad_scale * c[kCtlLossScale]));
    s[kStatLoss] += weight * r.loss;
    s[kStatCorrect] += static_cast<double>(r.correct);
    write_stats(*this, stats, s);
}

void Backend::all_finite_into(const Tensor& x, Tensor& control) {
    require_f64_fields("all_finite_into", "control", control, kStepControlFields);
    if (all_finite(x)) return;
    const double one = 1.0;
    Tensor flag = control.view(kCtlFoundInf, {1});
    copy_from_host(&one, flag);
}

void Backend::sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                             const Tensor& control) {
    require_f64_fields("sgd_update_ctl", "control", control, kStepControlFields);
    const Control c = read_control(*this, "sgd_update_ctl", control);
    if (c[kCtlFoundInf] != 0.0) return;
    SgdArgs b = a;
    b.lr = static_cast<float>(c[kCtlLr]);
    b.first_step = c[kCtlOptStep] == 0.0;
    b.grad_scale = a.grad_scale * static_cast<float>(1.0 / c[kCtlLossScale]);
    sgd_update(param, grad, momentum_buf, b);
}

void Backend::adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                              const Tensor& control) {
    require_f64_fields("adam_update_ctl", "control", control, kStepControlFields);
    const Control c = read_control(*this, "adam_update_ctl", control);
    if (c[kCtlFoundInf] != 0.0) return;
    AdamArgs b = a;
    b.lr = static_cast<float>(c[kCtlLr]);
    b.step = static_cast<std::int64_t>(c[kCtlOptStep]) + 1;
    b.grad_scale = a.grad_scale * static_cast<float>(1.0 / c[kCtlLossScale]);
    adam_update(param, grad, m, v, b);
}

void Backend::step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    require_f64_fields("step_control_end", "control", control, kStepControlFields);
    Control c = read_control(*this, "step_control_end", control);
    if (c[kCtlFoundInf] != 0.0) {
        c[kCtlSkipped] += 1;
        if (dynamic_loss_scale) {
            c[kCtlLossScale] = std::max(1.0, c[kCtlLossScale] / 2);
            c[kCtlGoodSteps] = 0;
        }
    } else {
        c[kCtlOptStep] += 1;
        if (dynamic_loss_scale && (c[kCtlGoodSteps] += 1) >= static_cast<double>(growth_interval)) {
            c[kCtlLossScale] *= 2;
            c[kCtlGoodSteps] = 0;
        }
    }
    Tensor v = control.view(0, {kStepControlFields});
    copy_from_host(c.data(), v);
}

}  // namespace hr
