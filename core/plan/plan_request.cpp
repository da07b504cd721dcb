#include "plan/plan_request.h"

#include "train/config.h"
#include "train/device.h"
#include "train/ranks.h"

namespace hr {

PlanRequest plan_request(const TrainConfig& c, std::int64_t train_samples, std::int64_t test_samples) {
    PlanRequest r;
    r.spec = c.model;
    r.batch = c.batch;
    r.seq = c.seq;
    r.strategy = c.strategy;
    r.optimizer = c.optimizer;
    r.device = resolve_device(c.device);
    r.threads = c.threads;
    r.train_samples = train_samples ? train_samples : c.train_limit;
    r.test_samples = test_samples ? test_samples : c.test_limit;
    r.budget = c.memory_limit;
    r.world_size = world_size_of_run();
    return r;
}

std::vector<int> choose_auto_checkpoint(const TrainConfig& c) {
    return predict_memory(plan_request(c)).strategy.checkpoint_blocks;
}

}  // namespace hr
