#include "plan/plan_request.h"

#include <algorithm>

#include "data/dataset.h"
#include "data/text_data.h"
#include "train/config.h"
#include "train/device.h"
#include "dist/communicator.h"
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
    // the data set's RAM (and, when not given, its sample counts for the loader's buffers) as the probe finds
    // them: file headers and sizes, a table read once
    if (!c.data.empty() && !is_token_data(c.data)) {
        const DatasetInfo d = probe_dataset(c.data, c.target);
        if (d.available && d.train_count > 0 && d.test_count >= 0) {
            auto kept = [](std::int64_t n, std::int64_t limit) { return limit > 0 ? std::min(n, limit) : n; };
            const std::int64_t train = kept(d.train_count, c.train_limit), test = kept(d.test_count, c.test_limit);
            const double per_sample = double(d.bytes) / double(d.train_count + d.test_count);
            r.dataset_bytes = static_cast<std::size_t>(per_sample * double(train + test) + 0.5);
            if (!train_samples) r.train_samples = train;
            if (!test_samples) r.test_samples = test;
        }
    }
    r.budget = c.memory_limit;
    r.world_size = world_size_of_run();
    // each rank's share of the cores, as the run gives it (a convolution's workspace is per thread)
    r.threads = rank_threads(c.threads, r.world_size, c.device, rank_environment());
    return r;
}

std::vector<int> choose_auto_checkpoint(const TrainConfig& c) {
    return predict_memory(plan_request(c)).strategy.checkpoint_blocks;
}

}  // namespace hr
