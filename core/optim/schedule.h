#pragma once
#include <cstdint>
#include <string>

namespace hr {

struct LrSchedule {
    std::string kind = "constant";  // constant | step | cosine
    std::int64_t step_size = 1000;  // step: multiply by gamma every step_size steps (after warm-up)
    double gamma = 0.1;
    double min_lr = 0.0;            // cosine: the floor reached at the last step
    std::int64_t warmup_steps = 0;  // linear warm-up from lr/warmup_steps to lr, any kind
};

// Learning rate for `step` (0-based) of `total_steps`, base rate `lr`.
// constant: lr. step: lr * gamma^floor((step - warmup) / step_size). cosine: min_lr + (lr - min_lr) *
// (1 + cos(pi * (step - warmup) / (total - warmup))) / 2. During warm-up (step < warmup_steps):
// lr * (step + 1) / warmup_steps.
double learning_rate_at(const LrSchedule& s, double lr, std::int64_t step, std::int64_t total_steps);
void validate_schedule(const LrSchedule& s);  // InputError naming the field

}  // namespace hr
