#include "strategy/rank_layout.h"

#include "base/error.h"

namespace hr {

namespace {

// The rules of one dimension that splits the model (a split head or pipeline stages) over `parts` ranks:
// the world is a multiple of it, alone it takes no ZeRO stage, with replicas it takes --shard dp.
void check_model_split(const StrategyConfig& s, int world, bool head) {
    const int parts = head ? s.tp_head : s.pipeline;
    const std::string n = std::to_string(parts);
    if (world % parts != 0) {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_world",
                                    "--tp-head %1 splits the head over %1 ranks (T x D: D data-parallel replicas of "
                                    "it on T x D ranks), but the run has %2; start it on %1 ranks, or 2 x %1, ... "
                                    "(--ranks, or mpirun -np)"),
                             {n, std::to_string(world)});
        throw InputError(HR_MSG("strategy.pipeline_world",
                                "--pipeline %1 needs a multiple of %1 ranks (K stages x D data-parallel replicas), "
                                "but the run has %2; start it on %1 ranks, or 2 x %1, ... (--ranks, or mpirun -np)"),
                         {n, std::to_string(world)});
    }
    const bool replicas = world > parts;
    if (!replicas && s.shard != "none") {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_shard",
                                    "--tp-head %1 keeps the body whole on every rank; it does not combine with "
                                    "--shard %2 (leave --shard out)"),
                             {n, s.shard});
        throw InputError(HR_MSG("strategy.pipeline_shard",
                                "--pipeline %1 gives each stage's rank its own layers; it does not combine with "
                                "--shard %2 (leave --shard out)"),
                         {n, s.shard});
    }
    if (replicas && s.shard != "dp") {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_replicas",
                                    "--tp-head %1 on %2 ranks makes %3 data-parallel replicas of the split head: give "
                                    "--shard dp (the replicas all-reduce their gradients; ZeRO stages with a split "
                                    "head are not built)"),
                             {n, std::to_string(world), std::to_string(world / parts)});
        throw InputError(HR_MSG("strategy.pipeline_replicas",
                                "--pipeline %1 on %2 ranks makes %3 data-parallel replicas of the pipeline: give "
                                "--shard dp (the replicas of a stage all-reduce its gradients; ZeRO stages inside a "
                                "pipeline are not built)"),
                         {n, std::to_string(world), std::to_string(world / parts)});
    }
    if (!s.rank_batch.empty()) {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_rank_batch",
                                    "--tp-head %1: every rank trains on the whole batch; leave --rank-batch out"),
                             {n});
        throw InputError(HR_MSG("strategy.pipeline_rank_batch",
                                "--pipeline %1: every stage sees the whole batch; leave --rank-batch out"),
                         {n});
    }
}

}  // namespace

RankLayout rank_layout(const StrategyConfig& s, int world_size) {
    if (s.tp_head < 1)
        throw InputError(HR_MSG("strategy.tp_head_small", "--tp-head must be at least 1, got %1"),
                         {std::to_string(s.tp_head)});
    if (s.tp_head > 1 && s.pipeline > 1)  // (the combination first: neither dimension's rules then matter)
        throw InputError(HR_MSG("strategy.pipeline_tp", "--pipeline and --tp-head do not combine yet; pick one"));
    if (s.tp_head > 1) check_model_split(s, world_size, true);
    if (s.pipeline < 1)
        throw InputError(HR_MSG("strategy.pipeline_small", "--pipeline must be at least 1, got %1"),
                         {std::to_string(s.pipeline)});
    if (s.pipeline > 1) check_model_split(s, world_size, false);
    else if (!s.pipeline_split.empty())
        throw InputError(HR_MSG("strategy.pipeline_split_alone", "--pipeline-split needs --pipeline K"));
    RankLayout l;
    l.split_head = s.tp_head;
    l.pipeline = s.pipeline;
    l.data = world_size / (l.split_head * l.pipeline);
    l.zero = s.shard;
    return l;
}

RankLayout resolved_layout(const ResolvedStrategy& s) {
    RankLayout l;
    l.split_head = s.tp_head;
    l.pipeline = s.pipeline;
    l.data = s.data_world();
    l.zero = shard_stage_name(s.shard);
    return l;
}

std::string describe_rank_layout(const RankLayout& l) {
    std::string out;
    auto part = [&](int n, const char* one, const char* many) {
        if (n <= 1) return;
        if (!out.empty()) out += " x ";
        out += std::to_string(n) + " " + (n == 1 ? one : many);
    };
    part(l.pipeline, "pipeline stage", "pipeline stages");
    part(l.split_head, "split-head rank", "split-head ranks");
    part(l.data, "data-parallel replica", "data-parallel replicas");
    if (out.empty()) return "one process";
    if (l.data > 1) out += " (" + l.zero + ")";
    return out;
}

void relayout_for_resume(StrategyConfig& c, const StrategyConfig& given, const RelayoutAsked& asked, int world) {
    if (asked.shard) c.shard = given.shard;
    // parameter offload is a layout of zero3's shards (the checkpoint is one process's): asked for, it is on;
    // another --shard than zero3 turns it off
    if (asked.offload_parameters) c.offload_parameters = true;
    else if (asked.shard && c.shard != "zero3") c.offload_parameters = false;
    // a checkpoint holds the whole head: a split head resumes on another number of ranks split over them
    // all, or whole on one process (strategy/tp_head.h)
    if (asked.tp_head) c.tp_head = given.tp_head;
    else if (c.tp_head > 1 && c.tp_head != world) c.tp_head = world > 1 ? world : 1;
    // so do pipeline stages (another number of ranks: as many stages, balanced; one process: none)
    if (asked.pipeline) c.pipeline = given.pipeline;
    else if (c.pipeline > 1 && world % c.pipeline != 0) c.pipeline = world > 1 ? world : 1;
    if (c.pipeline > 1 && !asked.shard)  // replicas of the stages need dp, stages alone none
        c.shard = world > c.pipeline ? "dp" : "none";
    if (asked.pipeline_split) c.pipeline_split = given.pipeline_split;
    else if (static_cast<int>(c.pipeline_split.size()) != c.pipeline) c.pipeline_split.clear();
}

}  // namespace hr
