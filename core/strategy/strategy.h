#pragma once
// Memory strategies (docs/design.md decision 5): precision, activation checkpointing, gradient
// accumulation, optimizer offload and sharding over ranks (strategy/sharding.h). StrategyConfig is what a user asks for; ResolvedStrategy is the
// checked, concrete form the trainer and the planner both use, so they reason about the same thing.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "nn/model_spec.h"

namespace hr {

// How the ranks of a run share the training state (docs/distributed.md):
// none   one process, nothing shared
// dp     data parallel: every rank holds everything; gradients are all-reduced
// zero1  optimizer state and master weights sharded over the ranks
// zero2  gradients sharded too
// zero3  parameters sharded too (each unit gathered before its forward and its backward)
enum class ShardStage { none, dp, zero1, zero2, zero3 };
const char* shard_stage_name(ShardStage s);       // "none", "dp", "zero1", ...
ShardStage parse_shard_stage(const std::string& text);  // InputError naming --shard

struct StrategyConfig {
    std::string precision = "fp32";      // fp32 | tf32 | bf16 | fp16
    // none | all | every:K | list:I,J,... | auto, or attention (selective recompute of the attention
    // core in every attention layer), which composes with a block set: attention+every:2, attention+all
    std::string checkpoint = "none";
    std::int64_t micro_batch = 0;        // 0: the whole batch at once
    std::int64_t accumulate = 1;         // gradient accumulation steps
    bool offload_optimizer = false;      // optimizer state + master weights in host memory
    // parameters and gradients in host memory too, each unit brought to the device one unit ahead
    // (ZeRO-Infinity style; zero3 only, implies offload_optimizer: strategy/sharding.h)
    bool offload_parameters = false;
    // fp16 dynamic loss scaling
    double loss_scale_init = 65536.0;
    std::int64_t loss_scale_growth_interval = 2000;
    // sharding over ranks (the world size and the rank come with resolve_strategy)
    std::string shard = "none";               // none | dp | zero1 | zero2 | zero3
    std::vector<std::int64_t> rank_batch;     // samples per rank and step (sum = batch); empty: even split
    // Tensor-parallel head (strategy/tp_head.h): the last layer's output columns split over this many
    // ranks (every rank of the run; 1: off). The body runs whole on every rank, on the whole batch.
    int tp_head = 1;
    // Pipeline parallel (strategy/pipeline.h): the top-level layers in this many stages, one per rank (every
    // rank of the run; 1: off), split by pipeline_split's layer counts (empty: balanced by estimated time).
    int pipeline = 1;
    std::vector<int> pipeline_split;
    // LoRA (nn/model.h ModelOptions::lora_rank): adapters of this rank on every linear layer, the rest of the
    // model frozen (0: off); alpha 0 means the rank
    int lora_rank = 0;
    double lora_alpha = 0;
    // peft's lora_dropout: while training, each adapter's input is dropout(x) with this probability, in [0, 1)
    // (0: none; nn/model.h ModelOptions::lora_dropout). Needs lora_rank.
    double lora_dropout = 0;
    // peft's target_modules for a LLaMA-family model: a comma list of q_proj, k_proj, v_proj, o_proj,
    // gate_proj, up_proj, down_proj (empty: q_proj,v_proj, peft's default for the family)
    std::string lora_targets;
    // QLoRA (ModelOptions::lora_base_bits): "int8", "int4" or "nf4" stores the frozen weight of every
    // projection of the base quantised (adapted or not, as bitsandbytes' load_in_4bit quantises every linear
    // layer but the head) while the adapters train; "none" keeps them in the compute dtype. Needs lora_rank.
    std::string quantize_base = "none";
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
    bool offload_optimizer = false;      // (true too with offload_parameters)
    bool offload_parameters = false;
    double loss_scale_init = 65536.0;
    std::int64_t loss_scale_growth_interval = 2000;
    // Sharding. batch above is the global batch (all ranks); micro_batch and accumulate are this rank's
    // micro-batch (buffer size) and the number of micro-batches, which is the same on every rank.
    ShardStage shard = ShardStage::none;
    int world_size = 1;
    int rank = 0;
    std::vector<std::int64_t> rank_batches;  // samples of each rank per step (world_size entries)
    std::int64_t rank_batch = 64;            // this rank's share of the batch
    std::int64_t sample_offset = 0;          // where this rank's share starts in the global batch
    // Rows each rank evaluates per forward: the smallest rank's micro-batch, so that evaluation makes
    // the same forwards (and zero3 the same gathers) on every rank even when the shares are uneven.
    // One process: micro_batch.
    std::int64_t eval_micro_batch = 64;
    // Tensor-parallel head over tp_head ranks (1: off). Its ranks see the same rows: the batch is not
    // split among them, so the ranks that hold different data are data_world() (1 with a split head on
    // all the ranks). With more ranks than that (T x D), rank r holds head part r / D of data-parallel
    // replica r % D.
    int tp_head = 1;
    // Pipeline stages over the run's ranks (1: off); rank s runs stage s, layers [stage_first[s],
    // stage_first[s + 1]). Its ranks see the same rows, like a split head's.
    // With more ranks than stages (K x D), rank r runs stage r / D of data-parallel replica r % D.
    int pipeline = 1;
    std::vector<int> stage_first;
    int lora_rank = 0;         // LoRA adapters (0: off), scale lora_alpha / lora_rank
    double lora_alpha = 0;
    double lora_dropout = 0;   // ModelOptions::lora_dropout (0: none)
    int lora_targets = 0;      // ModelOptions::lora_targets (0: the family's default)
    int lora_base_bits = 0;    // QLoRA: every base projection's frozen weight in 8 or 4 bits (0: not quantised)
    // Rank r of K stages x T split-head ranks x D replicas is (stage x T + head part) x D + replica: K x D,
    // T x D as above; K x T (D = 1): stage r / T, part r % T of the last stage's head (strategy/rank_layout.h).
    int data_world() const { return world_size / (std::max(1, tp_head) * std::max(1, pipeline)); }
    int data_rank() const { return data_world() > 1 ? rank % data_world() : 0; }
    int stage() const { return pipeline > 1 ? rank / (world_size / pipeline) : 0; }
    int tp_rank() const { return tp_head > 1 ? (rank / data_world()) % tp_head : 0; }  // which part of the head
    // Whether this rank's step and evaluation figures count in sums over the run's ranks: of a split head's
    // ranks, which compute the same figures, the first (pipelines: the last stage, said where they sum).
    bool counts_figures() const { return tp_rank() == 0; }

    bool sharded() const { return shard >= ShardStage::zero1; }
    // This rank's micro-batches as (first row within its share, rows). One process: micro_batch rows
    // each, the last one smaller. Several ranks: `accumulate` pieces on every rank, as even as possible.
    std::vector<std::pair<std::int64_t, std::int64_t>> micro_batches() const;

    std::string describe() const;  // "bf16 + checkpoint 3/5 blocks + micro-batch 16 x 4 + offload"
};

// Checks and resolves a strategy for a model and (global) batch, for rank `rank` of `world_size`.
// `auto` checkpointing resolves to `none` here; the planner replaces it with its choice
// (plan/planner.h). Throws InputError naming the flag.
ResolvedStrategy resolve_strategy(const StrategyConfig& s, const ModelSpec& spec, std::int64_t batch,
                                  int world_size = 1, int rank = 0);
// Parses none | all | every:K | list:I,J (block indices) into the block list; an "attention" or
// "attention+..." prefix is left to split_checkpoint.
std::vector<int> parse_checkpoint(const std::string& text, int block_count);
// Splits "attention+every:2" into (true, "every:2"); "attention" into (true, "none"); others (false, text).
std::pair<bool, std::string> split_checkpoint(const std::string& text);
// The flags of `headroom train` that select this strategy ("--precision bf16 --checkpoint all ...").
std::string strategy_flags(const StrategyConfig& s);

}  // namespace hr
