#pragma once
// The planner's request for a run's settings (train/config.h): what the window's plan, `headroom plan`,
// the out-of-memory advice and `--checkpoint auto` all ask the planner (plan/planner.h).
#include <cstdint>
#include <vector>

#include "plan/planner.h"

namespace hr {

struct TrainConfig;

// The request for a run's config (model, batch, optimizer, strategies, device, memory limit as the
// budget). Sample counts size the data loader's buffers: pass a finished run's counts, or 0 to use the
// config's train/test limits. With several ranks (launched by mpirun), the request is for this run's
// world size.
PlanRequest plan_request(const TrainConfig& config, std::int64_t train_samples = 0, std::int64_t test_samples = 0);
// `--checkpoint auto` without a budget: the planner's choice for the device's memory.
std::vector<int> choose_auto_checkpoint(const TrainConfig& config);

}  // namespace hr
