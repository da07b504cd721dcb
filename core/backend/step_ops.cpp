// The reference implementations of backend.h's ordering, counter and step-control ops, in terms of
// the other ops and host copies. They are what the CPU backend uses (its ops finish when they return,
// so a "device" scalar is a host read away) and what a GPU backend's kernels must agree with.
#include <array>
#include <cmath>
#include <cstdlib>
#include <new>
#include <vector>

#include "backend/backend.h"
#include "backend/update_rules.h"
#include "base/error.h"

namespace hr {

namespace {

using Control = std::array<double, kStepControlFields>;
using Stats = std::array<double, kStepStatsFields>;

Control read_control(Backend& b, const Tensor& control) {
    Control c{};
    c[kCtlLossScale] = 1.0;
    if (!control.defined()) return c;
    b.copy_to_host(control.view(0, {kStepControlFields}), c.data());
    return c;
}

Stats read_stats(Backend& b, const Tensor& stats) {
    Stats s{};
    b.copy_to_host(stats.view(0, {kStepStatsFields}), s.data());
    return s;
}

void write_stats(Backend& b, Tensor& stats, const Stats& s) {
    Tensor v = stats.view(0, {kStepStatsFields});
    b.copy_from_host(s.data(), v);
}

// Counts labels outside [0, K); the first one's value and row go to first_label / first_row.
std::int64_t bad_labels(Backend& b, const Tensor& labels, std::int64_t K, std::int64_t& first_label,
                        std::int64_t& first_row) {
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

void Backend::do_increment(Tensor& counter, std::int64_t by) {
    std::int64_t v = 0;
    copy_to_host(counter, &v);
    v += by;
    copy_from_host(&v, counter);
}

void Backend::do_softmax_cross_entropy_into(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                         Tensor& dlogits, float grad_scale, const Tensor& control, Tensor& stats,
                                         double weight) {
    const Control c = read_control(*this, control);
    Stats s = read_stats(*this, stats);
    std::int64_t label = 0, row = 0;
    const std::int64_t bad = bad_labels(*this, labels, logits.dim(1), label, row);
    if (bad > 0) {  // validated first: dlogits is not written
        if (s[kStatBadLabels] == 0) {
            s[kStatBadLabel] = static_cast<double>(label);
            s[kStatBadRow] = static_cast<double>(row);
        }
        s[kStatBadLabels] += static_cast<double>(bad);
        write_stats(*this, stats, s);
        return;
    }
    const LossResult r = softmax_cross_entropy(logits, labels, label_smoothing, dlogits,
                                               static_cast<float>(grad_scale * c[kCtlLossScale]));
    s[kStatLoss] += weight * r.loss;
    s[kStatCorrect] += static_cast<double>(r.correct);
    write_stats(*this, stats, s);
}

void Backend::do_mse_loss_into(const Tensor& pred, const Tensor& target, Tensor& dpred, float grad_scale,
                            const Tensor& control, Tensor& stats, double weight) {
    const Control c = read_control(*this, control);
    Stats s = read_stats(*this, stats);
    const LossResult r = mse_loss(pred, target, dpred, static_cast<float>(grad_scale * c[kCtlLossScale]));
    s[kStatLoss] += weight * r.loss;
    s[kStatCorrect] += static_cast<double>(r.correct);
    write_stats(*this, stats, s);
}

void Backend::do_all_finite_into(const Tensor& x, Tensor& control) {
    if (all_finite(x)) return;
    const double one = 1.0;
    Tensor flag = control.view(kCtlFoundInf, {1});
    copy_from_host(&one, flag);
}

void Backend::do_sgd_update_ctl(Tensor& param, const Tensor& grad, Tensor& momentum_buf, const SgdArgs& a,
                             const Tensor& control) {
    const Control c = read_control(*this, control);
    if (c[kCtlFoundInf] != 0.0) return;
    SgdArgs b = a;
    b.lr = static_cast<float>(c[kCtlLr]);
    b.first_step = c[kCtlOptStep] == 0.0;
    b.grad_scale = a.grad_scale * static_cast<float>(1.0 / c[kCtlLossScale]);
    sgd_update(param, grad, momentum_buf, b);
}

void Backend::do_adam_update_ctl(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamArgs& a,
                              const Tensor& control) {
    const Control c = read_control(*this, control);
    if (c[kCtlFoundInf] != 0.0) return;
    AdamArgs b = a;
    b.lr = static_cast<float>(c[kCtlLr]);
    b.step = static_cast<std::int64_t>(c[kCtlOptStep]) + 1;
    b.grad_scale = a.grad_scale * static_cast<float>(1.0 / c[kCtlLossScale]);
    adam_update(param, grad, m, v, b);
}

void Backend::do_step_control_end(Tensor& control, bool dynamic_loss_scale, std::int64_t growth_interval) {
    Control c = read_control(*this, control);
    const bool overflowed = c[kCtlFoundInf] != 0.0;
    c[overflowed ? kCtlSkipped : kCtlOptStep] += 1;
    if (dynamic_loss_scale) update_loss_scale(overflowed, c[kCtlLossScale], c[kCtlGoodSteps], growth_interval);
    Tensor v = control.view(0, {kStepControlFields});
    copy_from_host(c.data(), v);
}

}  // namespace hr
