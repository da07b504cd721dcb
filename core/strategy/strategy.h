#pragma once
// Memory strategies (DESIGN.md decision 5): precision, activation checkpointing, gradient
// accumulation and optimizer offload. StrategyConfig is what a user asks for; ResolvedStrategy is the
// checked, concrete form the trainer and the planner both use, so they reason about the same thing.
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "nn/model_spec.h"

namespace hr {

struct StrategyConfig {
    std::string precision = "fp32";      // fp32 | tf32 | bf16 | fp16
    // none | all | every:K | list:I,J,... | auto, or attention (selective recompute of the attention
    // core in every attention layer), which composes with a block set: attention+every:2, attention+all
    std::string checkpoint = "none";
    std::int64_t micro_batch = 0;        // 0: the whole batch at once
    std::int64_t accumulate = 1;         // gradient accumulation steps
    bool offload_optimizer = false;      // optimizer state + master weights in host memory
    // fp16 dynamic loss scaling
    double loss_scale_init = 65536.0;
    std::int64_t loss_scale_growth_interval = 2000;
};

struct ResolvedStrategy {
    std::string precision = "fp32";
    DType compute_dtype = DType::f32;    // parameters, gradients and activations on the device
    bool master_weights = false;         // an f32 copy the optimizer updates (bf16/fp16)
    bool loss_scaling = false;           // fp16: dynamic loss scaling
    bool tf32 = false;                   // GPU matmuls in TF32 (no effect on the CPU)
    std::vector<int> checkpoint_blocks;  // indices into checkpoint_blocks(spec)
    bool recompute_attention = false;    // selective: attention layers recompute their core in backward
    std::int64_t batch = 64;             // samples per optimizer step
    std::int64_t micro_batch = 64;       // samples per forward/backward
    std::int64_t accumulate = 1;         // micro-batches per optimizer step
    bool offload_optimizer = false;
    double loss_scale_init = 65536.0;
    std::int64_t loss_scale_growth_interval = 2000;

    std::string describe() const;  // "bf16 + checkpoint 3/5 blocks + micro-batch 16 x 4 + offload"
};

// Checks and resolves a strategy for a model and batch. `auto` checkpointing resolves to `none`
// here; the planner replaces it with its choice (plan/planner.h). Throws InputError naming the flag.
ResolvedStrategy resolve_strategy(const StrategyConfig& s, const ModelSpec& spec, std::int64_t batch);
// Parses none | all | every:K | list:I,J (block indices) into the block list; an "attention" or
// "attention+..." prefix is left to split_checkpoint.
std::vector<int> parse_checkpoint(const std::string& text, int block_count);
// Splits "attention+every:2" into (true, "every:2"); "attention" into (true, "none"); others (false, text).
std::pair<bool, std::string> split_checkpoint(const std::string& text);
// The flags of `headroom train` that select this strategy ("--precision bf16 --checkpoint all ...").
std::string strategy_flags(const StrategyConfig& s);

}  // namespace hr
