#include "optim/schedule.h"

#include <cmath>

#include "base/error.h"

namespace hr {

double learning_rate_at(const LrSchedule& s, double lr, std::int64_t step, std::int64_t total_steps) {
    if (s.warmup_steps > 0 && step < s.warmup_steps)
        return lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
    const std::int64_t t = step - s.warmup_steps;
    if (s.kind == "step") {
        return lr * std::pow(s.gamma, static_cast<double>(t / std::max<std::int64_t>(1, s.step_size)));
    }
    if (s.kind == "cosine") {
        const std::int64_t span = std::max<std::int64_t>(1, total_steps - s.warmup_steps);
        const double frac = std::min(1.0, static_cast<double>(t) / static_cast<double>(span));
        return s.min_lr + (lr - s.min_lr) * 0.5 * (1.0 + std::cos(M_PI * frac));
    }
    return lr;
}

void validate_schedule(const LrSchedule& s) {
    if (s.kind != "constant" && s.kind != "step" && s.kind != "cosine")
        throw InputError("unknown LR schedule '" + s.kind + "'; use constant, step or cosine");
    if (s.step_size < 1) throw InputError("LR schedule step size must be at least 1");
    if (!(s.gamma > 0 && s.gamma <= 1)) throw InputError("LR schedule gamma must be in (0, 1]");
    if (s.warmup_steps < 0) throw InputError("warm-up steps must be 0 or more");
    if (s.min_lr < 0) throw InputError("minimum learning rate must be 0 or more");
}

}  // namespace hr
