#pragma once
// The memory planner (DESIGN.md decision 3). It predicts, for a model, batch, strategy set and device,
// the bytes per ledger category and per layer, by building the run's TrainingState on counting
// allocators: the same code that allocates for real, so prediction and measurement agree by
// construction. It also estimates step cost (forward + backward + recompute FLOPs, offload traffic) and
// searches the strategies for the configuration that fits a budget with the best predicted throughput.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "memory/category.h"
#include "optim/optimizer.h"
#include "strategy/strategy.h"

namespace hr {

struct PlanRequest {
    ModelSpec spec;
    std::int64_t batch = 64;
    StrategyConfig strategy;
    OptimizerConfig optimizer;
    std::string device = "cpu";
    int threads = 0;
    std::int64_t seq = 0;            // language models: tokens per sequence (0: the model's "input" [T])
    std::int64_t train_samples = 0;  // for the data loader's prefetch buffers (0: a large dataset)
    std::int64_t test_samples = 0;
    std::size_t budget = 0;          // checkpoint auto: fit this many bytes (0: the device's free memory)
};

struct LayerPlan {
    int index = -1;
    std::string path, type, label;
    int block = -1;                    // checkpoint block of its top-level layer
    bool checkpointed = false;
    std::size_t activation_bytes = 0;  // kept for backward at this micro-batch (0 when checkpointed: in the arena)
    std::size_t parameter_bytes = 0;
    double forward_flops = 0;          // per micro-batch
    double backward_flops = 0;         // per micro-batch
    double selective_flops = 0;        // per micro-batch: what --checkpoint attention recomputes
};

struct MemoryPlan {
    ResolvedStrategy strategy;
    CategoryBytes device{};            // the training device (RAM for the CPU)
    std::size_t device_total = 0;
    CategoryBytes host{};              // host memory of offloaded state
    std::size_t host_total = 0;
    std::size_t recompute_arena = 0;   // part of device activations shared by checkpointed blocks
    std::vector<LayerPlan> layers;
    std::string peak_phase;            // when the peak is reached
    double forward_flops = 0;          // per optimizer step, all micro-batches
    double backward_flops = 0;
    double recompute_flops = 0;
    double offload_bytes = 0;          // host<->device traffic per step
    double predicted_step_seconds = 0; // rough absolute estimate for the device
    double relative_step_time = 1;     // against the same model and batch in fp32 without strategies
};

MemoryPlan predict_memory(const PlanRequest& request);
nlohmann::json plan_to_json(const MemoryPlan& plan);

struct PlanCandidate {
    StrategyConfig strategy;
    MemoryPlan plan;
    bool fits = false;
    std::string reason;  // why it was rejected, or why it ranks where it does
};

struct PlanSearch {
    std::size_t budget = 0;
    std::vector<PlanCandidate> candidates;  // fitting ones first, fastest first; then the rejected ones
    int best = -1;                          // index into candidates, -1 when nothing fits
};

// Tries precision (fp32, bf16), checkpoint sets (none, every other block, all), micro-batches (the
// batch, /2, /4, /8 with accumulation) and optimizer offload.
PlanSearch search_plans(const PlanRequest& base, std::size_t budget_bytes);

// Free memory of a device: MemAvailable for "cpu"; throws InputError for devices not present.
std::size_t device_free_bytes(const std::string& device);
std::size_t device_total_bytes(const std::string& device);
// "4GiB", "512MiB", "1.5GB", "1000000" -> bytes; InputError otherwise.
std::size_t parse_bytes(const std::string& text);

}  // namespace hr
