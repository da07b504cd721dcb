#pragma once
// The memory planner (docs/design.md decision 3). It predicts, for a model, batch, strategy set and device,
// the bytes per ledger category and per layer, by building the run's TrainingState on counting
// allocators: the same code that allocates for real, so prediction and measurement agree by
// construction. It also estimates step cost (forward + backward + recompute FLOPs, offload traffic) and
// searches the strategies for the configuration that fits a budget with the best predicted throughput.
// With several ranks it builds each rank's TrainingState (world size, rank, sharding stage, that rank's
// batch), so it predicts every rank's ledger exactly, for any world size, without the devices (what-if:
// "8 GPUs, zero3").
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/message.h"
#include "memory/category.h"
#include "memory/step_timeline.h"
#include "optim/optimizer.h"
#include "plan/device_description.h"
#include "strategy/strategy.h"

namespace hr {

struct PlanRequest {
    ModelSpec spec;
    std::int64_t batch = 64;
    StrategyConfig strategy;
    OptimizerConfig optimizer;
    // "cpu", "cuda:N", or a GPU model to plan for without having it (plan/device_description.h:
    // h100, h200, a100, a100-40gb, rtx4090, l40s, l4; cuda:N that is not here plans as an h100).
    std::string device = "cpu";
    int threads = 0;
    std::int64_t seq = 0;            // language models: tokens per sequence (0: the model's "input" [T])
    std::int64_t train_samples = 0;  // for the data loader's prefetch buffers (0: a large dataset)
    std::int64_t test_samples = 0;
    std::size_t dataset_bytes = 0;   // the data set's RAM on the host (both splits; outside the ledger)
    std::size_t budget = 0;          // checkpoint auto: fit this many bytes (0: the device's free memory)
    std::optional<DeviceRates> rates;  // the step-time rates to use (default: the device's, device_calibration.h)
    // Ranks: strategy.shard is the stage and strategy.rank_batch the per-rank batches (empty: even split).
    int world_size = 1;
    int rank = -1;                   // the rank `MemoryPlan::device` describes; -1: the rank that needs the most
};

// One rank's prediction (each rank's loader prefetches its own share of the batch).
struct RankPlan {
    int rank = 0;
    std::int64_t batch = 0;          // its share of the global batch
    std::int64_t micro_batch = 0;
    CategoryBytes device{};
    std::size_t device_total = 0;
    CategoryBytes host{};
    std::size_t host_total = 0;
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
    double recompute_flops = 0;        // per micro-batch: what checkpointing its block repeats of it (a
                                       // forward; less for a kept output, nothing for the block whose
                                       // tensors the arena still holds: Model::recompute_work)
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
    double offload_seconds = 0;        // that traffic over the host link's rate (rates_source: measured or nominal)
    double host_link = 0;              // the host link's rate used, bytes/s
    // ranks
    int world_size = 1;
    int rank = 0;                      // the rank device/host above describe
    std::vector<RankPlan> ranks;       // every rank's prediction (one entry for one process)
    std::int64_t flat_elements = 0;    // P: the flat parameter layout, padded (per unit to N x 256 B when sharded)
    std::int64_t shard_elements = 0;   // S: what each rank updates (P when not sharded)
    std::int64_t padding_elements = 0; // of P, the alignment and unit padding
    double communication_bytes = 0;    // payload each rank hands its communicator per step
    double communication_seconds = 0;  // estimate, without overlap (part of predicted_step_seconds)
    double predicted_step_seconds = 0; // an estimate from the device's rates (rates_source), never a measurement
    double relative_step_time = 1;     // against the same model and batch in fp32 without strategies
    std::string rates_source;          // where those rates come from ("measured on ...", "nominal ...")
    // What the driver will see (GPU): the caching allocator's segments (device_total plus its rounding,
    // simulated exactly) and the process overhead outside the ledger (CUDA context, cuBLAS/cuDNN
    // handles). On the CPU device_reserved = device_total and device_overhead = 0.
    std::size_t device_reserved = 0;
    std::size_t device_overhead = 0;
    // of device_overhead: NCCL's own buffers and kernels on each GPU rank (several GPU ranks only;
    // plan/device_description.h communication_overhead: measured by an earlier run, else estimated)
    std::size_t communication_overhead = 0;
    bool communication_overhead_measured = false;
    std::string communication_overhead_source;
    std::size_t process_total = 0;     // device_reserved + device_overhead
    std::string device_name;           // "NVIDIA H200", ...
    bool device_defaults = false;      // planned from the table for a GPU that is not here
    Message device_note;               // where the device figures come from, for a person (translatable)
    std::size_t dataset_bytes = 0;     // the data set in host RAM (PlanRequest::dataset_bytes; 0: unknown)
    // pipeline stages (strategy/pipeline.h): the layers of each stage (ranks[] has each stage's memory), the
    // bubble of the 1F1B schedule with the plan's micro-batches, and the splits that balance the estimated
    // time and the memory (--pipeline-split's form, "3,2")
    std::vector<int> stage_layers;
    double pipeline_bubble = 0;
    std::string split_by_time, split_by_memory;
    // one step's memory timeline on the rank device/host describe (memory/step_timeline.h; issue 47): its
    // phases walked on the dry-run state, from device[] with activations at zero (pipeline stages: this
    // rank's stage and its 1F1B schedule).
    StepTimeline timeline;
};

// The bytes a plan must fit in: device_total on the CPU; on a GPU process_total plus a 5 % margin
// (kGpuFitMargin), so a plan that fits does not run out of memory (issue 11, memory truth).
constexpr double kGpuFitMargin = 0.05;
std::size_t plan_fit_bytes(const MemoryPlan& plan);

MemoryPlan predict_memory(const PlanRequest& request);
nlohmann::json plan_to_json(const MemoryPlan& plan);

struct PlanCandidate {
    StrategyConfig strategy;
    MemoryPlan plan;
    bool fits = false;
    bool pareto = false;    // fits, and no other fitting candidate is both no larger and no slower
    int dominated_by = -1;  // fits but not on the front: the first candidate that is no larger, no slower
    std::string reason;     // why it was rejected, or why it ranks where it does
};

struct PlanSearch {
    std::size_t budget = 0;
    std::vector<PlanCandidate> candidates;  // fitting ones first, fastest first; then the rejected ones
    int best = -1;                          // index into candidates, -1 when nothing fits
    // When nothing fits: the fewest ranks (2 to 64) on which zero3 with every memory strategy (bf16,
    // checkpointing all, offload, and the largest micro-batch of the rank batch, /2, /4 or /8) fits each
    // rank's budget, and the sentence that says so for a person ("needs 4 GPUs: with --ranks 4 ...",
    // plan.needs_gpus / plan.needs_ranks; args: the ranks, the flags, each rank's bytes, the budget);
    // 0 and an empty message otherwise.
    int ranks_needed = 0;
    Message ranks_reason;
    int duplicates = 0;                     // combinations left out: they add nothing to an earlier one
};

// Tries precision (fp32, bf16), checkpoint sets (none, every other block, all), micro-batches (the
// batch, /2, /4, /8 with accumulation) and optimizer offload; with several ranks also the sharding
// stages (dp, zero1, zero2, zero3). A candidate fits when every rank fits the budget. A combination
// that adds nothing to an earlier one is left out: the same prediction (every:2 and all picking the same
// blocks), or offload that moves nothing off the device (SGD without momentum in fp32). The fitting
// candidates on the Pareto front of device memory and predicted step time are marked (ties: the first
// in the ranking).
// `only`, when given, picks the combinations to predict before any is (the rest are neither predicted nor
// listed): a view of this one enumeration for a caller that needs a few of its rows (the fine-tuning table).
PlanSearch search_plans(const PlanRequest& base, std::size_t budget_bytes,
                        const std::function<bool(const StrategyConfig&)>& only = {});

// Free memory of a device: MemAvailable for "cpu", cudaMemGetInfo for a present GPU, the table's
// capacity for a GPU planned for without having it; InputError for an unknown device.
std::size_t device_free_bytes(const std::string& device);
std::size_t device_total_bytes(const std::string& device);
// "4GiB", "512MiB", "1.5GB", "1000000" -> bytes; InputError otherwise.
std::size_t parse_bytes(const std::string& text);

}  // namespace hr
