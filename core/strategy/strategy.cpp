#include "nn/lora_targets.h"
#include "strategy/strategy.h"
#include "strategy/rank_layout.h"

#include <cstdio>

#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "strategy/pipeline.h"
#include "strategy/tp_head.h"
#include "nn/compression.h"

namespace hr {

const char* shard_stage_name(ShardStage s) {
    switch (s) {
        case ShardStage::none: return "none";
        case ShardStage::dp: return "dp";
        case ShardStage::zero1: return "zero1";
        case ShardStage::zero2: return "zero2";
        case ShardStage::zero3: return "zero3";
    }
    return "none";
}

ShardStage parse_shard_stage(const std::string& t) {
    for (ShardStage s : {ShardStage::none, ShardStage::dp, ShardStage::zero1, ShardStage::zero2, ShardStage::zero3})
        if (t == shard_stage_name(s)) return s;
    throw InputError(HR_MSG("strategy.bad_shard", "unknown sharding '%1'; use none, dp, zero1, zero2 or zero3 (--shard)"),
                     {t});
}

std::vector<std::pair<std::int64_t, std::int64_t>> ResolvedStrategy::micro_batches() const {
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    if (data_world() == 1) {
        for (std::int64_t r0 = 0; r0 < rank_batch; r0 += micro_batch)
            out.push_back({r0, std::min(micro_batch, rank_batch - r0)});
        return out;
    }
    const std::int64_t base = rank_batch / accumulate, extra = rank_batch % accumulate;
    std::int64_t r0 = 0;
    for (std::int64_t k = 0; k < accumulate; ++k) {
        const std::int64_t n = base + (k < extra ? 1 : 0);
        out.push_back({r0, n});
        r0 += n;
    }
    return out;
}

std::string ResolvedStrategy::describe() const {
    std::string s = precision;
    if (!checkpoint_blocks.empty()) s += " + checkpoint " + std::to_string(checkpoint_blocks.size()) + " blocks";
    if (recompute_attention) s += " + attention recompute";
    if (accumulate > 1)
        s += " + micro-batch " + std::to_string(micro_batch) + " x " + std::to_string(accumulate);
    if (lora_rank > 0) {
        char a[32];
        std::snprintf(a, sizeof a, "%g", lora_alpha);
        s += " + LoRA rank " + std::to_string(lora_rank) + " (alpha " + a;
        if (lora_dropout > 0) {
            std::snprintf(a, sizeof a, "%g", lora_dropout);
            s += std::string(", dropout ") + a;
        }
        s += ")";
        if (lora_base_bits > 0) s += std::string(" on an ") + quantize_name(lora_base_bits) + " base";
    }
    if (offload_parameters)
        s += " + parameter offload";
    else if (offload_optimizer)
        s += " + optimizer offload";
    if (pipeline > 1) {
        s += " + pipeline of " + std::to_string(pipeline) + " stages (";
        for (int k = 0; k < pipeline; ++k)
            s += (k ? "," : "") + std::to_string(stage_first[static_cast<std::size_t>(k) + 1] - stage_first[static_cast<std::size_t>(k)]);
        s += " layers)";
        if (tp_head > 1) s += " + the last stage's head split over " + std::to_string(tp_head) + " ranks";
        else if (world_size > pipeline)
            s += " x " + std::to_string(world_size / pipeline) + " dp replicas" + (sharded() ? " (zero1)" : "");
    } else if (tp_head > 1) {
        s += " + head split over " + std::to_string(tp_head) + " ranks";
        if (world_size > tp_head)
            s += " x " + std::to_string(world_size / tp_head) + " dp replicas" + (sharded() ? " (zero1)" : "");
    } else if (world_size > 1 || shard != ShardStage::none)
        s += std::string(" + ") + shard_stage_name(shard) + " x " + std::to_string(world_size) + " rank" +
             (world_size == 1 ? "" : "s");
    return s;
}

std::pair<bool, std::string> split_checkpoint(const std::string& text) {
    if (text == "attention") return {true, "none"};
    if (text.rfind("attention+", 0) == 0) return {true, text.substr(10)};
    return {false, text};
}

std::vector<int> parse_checkpoint(const std::string& full, int n) {
    const std::string text = split_checkpoint(full).second;
    std::vector<int> out;
    auto bad = [&](const std::string& why) {
        return InputError("--checkpoint " + text + ": " + why +
                          "; use none, all, every:K, list:I,J,... (block indices 0.." + std::to_string(n - 1) +
                          ", see headroom plan), auto, or attention (selective recompute, also attention+all)");
    };
    if (text == "none" || text == "auto" || text.empty()) return out;
    if (text == "all") {
        for (int i = 0; i < n; ++i) out.push_back(i);
        return out;
    }
    auto parse_int = [&](const std::string& v) {
        try {
            std::size_t pos = 0;
            int x = std::stoi(v, &pos);
            if (pos == v.size()) return x;
        } catch (...) {
        }
        throw bad("'" + v + "' is not a number");
    };
    if (text.rfind("every:", 0) == 0) {
        int k = parse_int(text.substr(6));
        if (k < 1) throw bad("K must be at least 1");
        for (int i = 0; i < n; i += k) out.push_back(i);
        return out;
    }
    if (text.rfind("list:", 0) == 0) {
        std::stringstream ss(text.substr(5));
        std::string item;
        while (std::getline(ss, item, ',')) {
            int i = parse_int(item);
            if (i < 0 || i >= n) throw bad("block " + item + " does not exist");
            out.push_back(i);
        }
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
    throw bad("unknown form");
}

namespace {

// LoRA and QLoRA's settings and their rules, into r (resolve_strategy's part).
void resolve_lora(const StrategyConfig& s, const ModelSpec& spec, ResolvedStrategy& r) {
    // LoRA: adapters on a frozen base, on one process, data-parallel ranks, a ZeRO stage (which shards the
    // adapters' values, gradients and optimizer state: the frozen base is whole on every rank, outside the flat
    // buffers the stages split), pipeline stages (each its layers' base and adapters) or a split head (its
    // rows of the head's base and of B, A whole); not with parameter offload, nor QLoRA on a split head
    if (s.lora_rank < 0 || s.lora_rank > 4096)
        throw InputError(HR_MSG("strategy.lora_rank", "--lora must be between 1 and 4096 (the adapters' rank), got %1"),
                         {std::to_string(s.lora_rank)});
    if (s.lora_rank > 0 && !(s.lora_alpha >= 0 && s.lora_alpha <= 1e6))
        throw InputError(HR_MSG("strategy.lora_alpha", "--lora-alpha must be a number from 0 (the rank) to 1000000"));
    if (s.lora_rank > 0 && s.offload_parameters)
        throw InputError(HR_MSG("strategy.lora_offload",
                                "--lora trains small adapters on a frozen model: it does not combine with "
                                "--offload-params (one process, --shard dp, the ZeRO stages, --pipeline and --tp-head do)"));
    if (!(s.lora_dropout >= 0 && s.lora_dropout < 1))
        throw InputError(HR_MSG("strategy.lora_dropout",
                                "--lora-dropout must be a probability from 0 up to (not including) 1, got %1"),
                         {std::to_string(s.lora_dropout)});
    if (s.lora_dropout > 0 && s.lora_rank <= 0)
        throw InputError(HR_MSG("strategy.lora_dropout_without_lora",
                                "--lora-dropout drops the input of LoRA's adapters: it needs --lora R"));
    r.lora_rank = s.lora_rank;
    r.lora_alpha = s.lora_rank > 0 && s.lora_alpha == 0 ? s.lora_rank : s.lora_alpha;
    r.lora_dropout = s.lora_dropout;
    if (!s.lora_targets.empty()) {
        r.lora_targets = parse_lora_targets(s.lora_targets);
        bool llama = false;
        for (const auto& l : spec.layers) llama = llama || l.type == "llama_block";
        if (s.lora_rank <= 0 || !llama)
            throw InputError(HR_MSG("strategy.lora_targets_where",
                                    "--lora-targets chooses the projections of a LLaMA-family model's blocks that get "
                                    "LoRA adapters; it needs --lora R and a model of llama_block layers (GPT and "
                                    "linear layers adapt all their projections)"));
    }
    // QLoRA: every base projection's frozen weight stored quantised while the adapters train
    if (s.quantize_base == "int8" || s.quantize_base == "int4" || s.quantize_base == "nf4")
        r.lora_base_bits = s.quantize_base == "int8" ? 8 : s.quantize_base == "int4" ? 4 : kQuantNf4;
    else if (!s.quantize_base.empty() && s.quantize_base != "none")
        throw InputError(HR_MSG("strategy.quantize_base", "--quantize-base %1: use int8 (a scale per row), int4 (a "
                                                              "scale per 64 values) or nf4 (QLoRA's 4-bit NormalFloat), "
                                                              "or none"),
                         {s.quantize_base});
    if (r.lora_base_bits > 0 && s.lora_rank <= 0)
        throw InputError(HR_MSG("strategy.quantize_base_lora",
                                "--quantize-base %1 stores LoRA's frozen base quantised while the adapters train; add "
                                "--lora R (for example --lora 8), or use --quantize to evaluate a trained model "
                                "quantised"),
                         {s.quantize_base});
    // (a language model's lm_head has no adapters and stays unpacked: only a linear head is a packed weight)
    if (r.lora_base_bits > 0 && s.tp_head > 1 && !spec.layers.empty() && spec.layers.back().type == "linear")
        throw InputError(HR_MSG("strategy.quantize_base_tp",
                                "--quantize-base %1 with --tp-head %2: a split head's rows of a packed weight are not "
                                "built; train the split head's adapters on an unquantised base (leave --quantize-base "
                                "out), or keep the head whole (leave --tp-head out)"),
                         {s.quantize_base, std::to_string(s.tp_head)});
}

}  // namespace

ResolvedStrategy resolve_strategy(const StrategyConfig& s, const ModelSpec& spec, std::int64_t batch, int world_size,
                                  int rank) {
    ResolvedStrategy r;
    if (world_size < 1 || rank < 0 || rank >= world_size)
        throw Error("internal: rank " + std::to_string(rank) + " of a world of " + std::to_string(world_size));
    r.precision = s.precision;
    if (s.precision == "fp32") {
        r.compute_dtype = DType::f32;
    } else if (s.precision == "tf32") {
        r.compute_dtype = DType::f32;
        r.tf32 = true;
    } else if (s.precision == "bf16") {
        r.compute_dtype = DType::bf16;
        r.master_weights = true;
    } else if (s.precision == "fp16") {
        r.compute_dtype = DType::f16;
        r.master_weights = true;
        r.loss_scaling = true;
    } else {
        throw InputError("unknown precision '" + s.precision + "'; use fp32, tf32, bf16 or fp16 (--precision)");
    }
    if (batch < 1) throw InputError("batch size must be at least 1 (--batch)");
    r.batch = batch;
    // the layout over ranks and its rules (strategy/rank_layout.h); then what each dimension asks of the model:
    // a split head's ranks and pipeline stages' train like one process on the whole batch
    const RankLayout layout = rank_layout(s, world_size);
    const bool tp = layout.split_head > 1, pp = layout.pipeline > 1;
    if (tp) tp_head_outputs(spec, s.tp_head);
    if (pp) {
        const std::string n = std::to_string(s.pipeline);
        if (s.checkpoint != "none")
            throw InputError(HR_MSG("strategy.pipeline_checkpoint",
                                    "--pipeline %1 keeps the activations of the micro-batches in flight; activation "
                                    "checkpointing inside a stage is not built: leave --checkpoint out"),
                             {n});
        r.stage_first = pipeline_split(spec, s.pipeline, s.pipeline_split).first;
        for (int k = 0; k < s.pipeline; ++k) {  // the tied-head check, once for every stage
            PipelineSplit sp;
            sp.first = r.stage_first;
            (void)pipeline_stage_spec(spec, sp, k);
        }
    }
    const bool data_ranks = layout.data > 1;  // (K x D, T x D: per replica)
    if (s.accumulate < 1) throw InputError("accumulation steps must be at least 1 (--accumulate)");
    if (s.micro_batch < 0) throw InputError("micro-batch must be positive (--micro-batch)");
    if (data_ranks) {
        // per rank: below, once the rank batches are known
    } else if (s.micro_batch > 0 && s.accumulate > 1) {
        if (s.micro_batch * s.accumulate != batch)
            throw InputError("--micro-batch " + std::to_string(s.micro_batch) + " x --accumulate " +
                             std::to_string(s.accumulate) + " must equal --batch " + std::to_string(batch) +
                             "; give only one of them");
        r.micro_batch = s.micro_batch;
        r.accumulate = s.accumulate;
    } else if (s.micro_batch > 0) {
        if (s.micro_batch > batch)
            throw InputError("--micro-batch " + std::to_string(s.micro_batch) + " is larger than --batch " +
                             std::to_string(batch));
        r.micro_batch = s.micro_batch;
        r.accumulate = (batch + s.micro_batch - 1) / s.micro_batch;
    } else if (s.accumulate > 1) {
        if (batch % s.accumulate != 0)
            throw InputError("--batch " + std::to_string(batch) + " is not divisible by --accumulate " +
                             std::to_string(s.accumulate) + "; pick a divisor or give --micro-batch");
        r.accumulate = s.accumulate;
        r.micro_batch = batch / s.accumulate;
    } else {
        r.micro_batch = batch;
        r.accumulate = 1;
    }
    const int nblocks = checkpoint_block_count(spec);
    r.checkpoint_blocks = parse_checkpoint(s.checkpoint, nblocks);
    r.recompute_attention = split_checkpoint(s.checkpoint).first;
    r.offload_optimizer = s.offload_optimizer || s.offload_parameters;
    r.offload_parameters = s.offload_parameters;
    r.loss_scale_init = s.loss_scale_init;
    r.loss_scale_growth_interval = s.loss_scale_growth_interval;
    if (r.loss_scaling && !(s.loss_scale_init >= 1)) throw InputError("the initial loss scale must be at least 1");
    if (r.loss_scaling && s.loss_scale_growth_interval < 1)
        throw InputError("the loss-scale growth interval must be at least 1 step");
    // --- ranks -------------------------------------------------------------------------------------
    r.shard = parse_shard_stage(s.shard);
    resolve_lora(s, spec, r);
    if (s.offload_parameters && r.shard != ShardStage::zero3)
        throw InputError(HR_MSG("strategy.offload_parameters_zero3",
                                "--offload-params needs --shard zero3 (parameters are brought to the device unit by "
                                "unit, as zero3 gathers them); add --shard zero3, also on one rank"));
    r.world_size = world_size;
    r.rank = rank;
    r.tp_head = s.tp_head;
    r.pipeline = s.pipeline;
    const int group = layout.pipeline * layout.split_head;  // (K x T: every stage on T ranks)
    if ((pp || tp) && world_size > group) {
        // K stages x D replicas: rank r is stage r / D of replica r % D; the batch is split over the
        // replicas as data parallel over D ranks splits it, every stage of a replica taking its share.
        // A split head's T x D alike: rank r holds head part r / D of replica r % D.
        const int D = world_size / group;
        StrategyConfig dp = s;
        dp.pipeline = 1;
        dp.tp_head = 1;
        dp.pipeline_split.clear();
        dp.checkpoint = "none";
        const ResolvedStrategy share = resolve_strategy(dp, spec, batch, D, rank % D);
        for (int q = 0; q < world_size; ++q) r.rank_batches.push_back(share.rank_batches[static_cast<std::size_t>(q % D)]);
        r.rank_batch = share.rank_batch;
        r.sample_offset = share.sample_offset;
        r.micro_batch = share.micro_batch;
        r.accumulate = share.accumulate;
        r.eval_micro_batch = share.eval_micro_batch;
        return r;
    }
    if (tp || pp) {
        r.rank_batches.assign(static_cast<std::size_t>(world_size), batch);
        r.rank_batch = batch;
        r.sample_offset = 0;
        r.eval_micro_batch = r.micro_batch;
        return r;
    }
    if (!s.rank_batch.empty()) {
        if (static_cast<int>(s.rank_batch.size()) != world_size)
            throw InputError(HR_MSG("strategy.rank_batch_count",
                                    "--rank-batch lists %1 batches for %2 ranks; give one per rank"),
                             {std::to_string(s.rank_batch.size()), std::to_string(world_size)});
        std::int64_t sum = 0;
        for (std::int64_t b : s.rank_batch) {
            if (b < 1) throw InputError(HR_MSG("strategy.rank_batch_small", "every --rank-batch entry must be at least 1"));
            sum += b;
        }
        if (sum != batch)
            throw InputError(HR_MSG("strategy.rank_batch_sum",
                                    "--rank-batch adds up to %1 samples but --batch is %2; make them agree"),
                             {std::to_string(sum), std::to_string(batch)});
        r.rank_batches = s.rank_batch;
    } else {
        if (batch < world_size)
            throw InputError(HR_MSG("strategy.batch_below_ranks",
                                    "--batch %1 is smaller than the %2 ranks; every rank needs a sample"),
                             {std::to_string(batch), std::to_string(world_size)});
        for (int q = 0; q < world_size; ++q) r.rank_batches.push_back(batch / world_size + (q < batch % world_size ? 1 : 0));
    }
    r.rank_batch = r.rank_batches[static_cast<std::size_t>(rank)];
    r.sample_offset = 0;
    for (int q = 0; q < rank; ++q) r.sample_offset += r.rank_batches[static_cast<std::size_t>(q)];
    if (world_size > 1) {
        // the same number of micro-batches on every rank (their collectives pair up), each rank's as even as can be
        std::int64_t largest = 0, smallest = batch;
        for (std::int64_t b : r.rank_batches) {
            largest = std::max(largest, b);
            smallest = std::min(smallest, b);
        }
        std::int64_t acc = s.accumulate;
        if (s.micro_batch > 0 && s.accumulate > 1)
            throw InputError(HR_MSG("strategy.ranks_micro_and_acc",
                                    "with several ranks give --micro-batch or --accumulate, not both"));
        if (s.micro_batch > 0) acc = (largest + s.micro_batch - 1) / s.micro_batch;
        if (acc > smallest)
            throw InputError(HR_MSG("strategy.rank_batch_below_acc",
                                    "a rank's batch of %1 cannot be split into %2 micro-batches; use fewer "
                                    "micro-batches or larger rank batches"),
                             {std::to_string(smallest), std::to_string(acc)});
        r.accumulate = acc;
        r.micro_batch = (r.rank_batch + acc - 1) / acc;
        r.eval_micro_batch = (smallest + acc - 1) / acc;
    } else {
        r.eval_micro_batch = r.micro_batch;
    }
    return r;
}

std::string strategy_flags(const StrategyConfig& s) {
    std::string f;
    if (s.precision != "fp32") f += " --precision " + s.precision;
    if (s.checkpoint != "none") f += " --checkpoint " + s.checkpoint;
    if (s.micro_batch > 0) f += " --micro-batch " + std::to_string(s.micro_batch);
    if (s.accumulate > 1 && s.micro_batch == 0) f += " --accumulate " + std::to_string(s.accumulate);
    if (s.offload_optimizer && !s.offload_parameters) f += " --offload-optimizer";
    if (s.offload_parameters) f += " --offload-params";
    if (s.lora_rank > 0) {
        f += " --lora " + std::to_string(s.lora_rank);
        if (s.lora_alpha > 0 && s.lora_alpha != s.lora_rank) {
            char a[32];
            std::snprintf(a, sizeof a, "%g", s.lora_alpha);
            f += std::string(" --lora-alpha ") + a;
        }
        if (s.lora_dropout > 0) {
            char a[32];
            std::snprintf(a, sizeof a, "%.17g", s.lora_dropout);
            f += std::string(" --lora-dropout ") + a;
        }
        if (!s.lora_targets.empty()) f += " --lora-targets " + s.lora_targets;
        if (s.quantize_base == "int8" || s.quantize_base == "int4" || s.quantize_base == "nf4")
            f += " --quantize-base " + s.quantize_base;
    }
    if (s.shard != "none") f += " --shard " + s.shard;
    if (!s.rank_batch.empty()) {
        f += " --rank-batch ";
        for (std::size_t i = 0; i < s.rank_batch.size(); ++i) {
            if (i) f += ',';
            f += std::to_string(s.rank_batch[i]);
        }
    }
    if (s.tp_head > 1) f += " --tp-head " + std::to_string(s.tp_head);
    if (s.pipeline > 1) f += " --pipeline " + std::to_string(s.pipeline);
    if (!s.pipeline_split.empty()) {
        f += " --pipeline-split ";
        for (std::size_t i = 0; i < s.pipeline_split.size(); ++i) f += (i ? "," : "") + std::to_string(s.pipeline_split[i]);
    }
    return f.empty() ? f : f.substr(1);
}

}  // namespace hr
