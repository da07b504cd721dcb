#include "strategy/rank_layout.h"

#include <algorithm>

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
    // with replicas: dp, or ZeRO-1 inside the dimension (each part's optimizer state sharded over its D
    // replicas, TrainingState's zero engine); the stages that shard gradients or parameters are not built
    if (replicas && (s.shard == "zero2" || s.shard == "zero3")) {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_zero",
                                    "--tp-head %1 with --shard %2 is not built: the split head's ranks sum whole "
                                    "gradients (the norm's head rows, LoRA's adapter), which zero2 and zero3 would "
                                    "shard; give --shard zero1 (the optimizer state sharded over the %3 replicas) "
                                    "or dp"),
                             {n, s.shard, std::to_string(world / parts)});
        throw InputError(HR_MSG("strategy.pipeline_zero",
                                "--pipeline %1 with --shard %2 is not built: a stage's models in flight share "
                                "one gradient buffer and a tied head sums whole gradients, which zero2 and zero3 "
                                "would shard; give --shard zero1 (each stage's optimizer state sharded over its %3 "
                                "replicas) or dp"),
                         {n, s.shard, std::to_string(world / parts)});
    }
    if (replicas && s.shard != "dp" && s.shard != "zero1") {
        if (head)
            throw InputError(HR_MSG("strategy.tp_head_replicas",
                                    "--tp-head %1 on %2 ranks makes %3 data-parallel replicas of the split head: give "
                                    "--shard dp (the replicas all-reduce their gradients) or zero1 (and shard the "
                                    "optimizer state over them)"),
                             {n, std::to_string(world), std::to_string(world / parts)});
        throw InputError(HR_MSG("strategy.pipeline_replicas",
                                "--pipeline %1 on %2 ranks makes %3 data-parallel replicas of the pipeline: give "
                                "--shard dp (the replicas of a stage all-reduce its gradients) or zero1 (and shard "
                                "the stage's optimizer state over them)"),
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
    if (s.pipeline < 1)
        throw InputError(HR_MSG("strategy.pipeline_small", "--pipeline must be at least 1, got %1"),
                         {std::to_string(s.pipeline)});
    // K stages x T split-head ranks: every stage on T ranks (the earlier stages' T ranks replicas on the same
    // rows), the last stage's head split over its T. Data-parallel replicas of that are not built: one rule
    if (s.tp_head > 1 && s.pipeline > 1) {
        if (world_size != s.pipeline * s.tp_head || s.shard != "none" || !s.rank_batch.empty())
            throw InputError(HR_MSG("strategy.pipeline_tp",
                                    "--pipeline %1 with --tp-head %2 runs on exactly %1 x %2 = %3 ranks (each stage on "
                                    "%2 ranks, the last stage's head split over them); data-parallel replicas of it, "
                                    "--shard and --rank-batch are not built: start it on %3 ranks and leave --shard "
                                    "and --rank-batch out"),
                             {std::to_string(s.pipeline), std::to_string(s.tp_head),
                              std::to_string(s.pipeline * s.tp_head)});
        RankLayout l;
        l.split_head = s.tp_head;
        l.pipeline = s.pipeline;
        return l;
    }
    if (s.tp_head > 1) check_model_split(s, world_size, true);
    if (s.pipeline > 1) check_model_split(s, world_size, false);
    else if (!s.pipeline_split.empty())
        throw InputError(HR_MSG("strategy.pipeline_split_alone", "--pipeline-split needs --pipeline K"));
    if (s.tp_head == 1 && s.pipeline == 1 && world_size > 1 && s.shard == "none")
        throw InputError(HR_MSG("strategy.ranks_without_shard",
                                "%1 ranks need a way to share the work: --shard dp, zero1, zero2 or zero3"),
                         {std::to_string(world_size)});
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

Message describe_rank_layout_message(const RankLayout& l) {
    const bool k = l.pipeline > 1, t = l.split_head > 1, d = l.data > 1;
    const std::string K = std::to_string(l.pipeline), T = std::to_string(l.split_head), D = std::to_string(l.data);
    // one template per combination of dimensions (each a whole sentence part a translator sees)
    if (k && t && d)
        return {HR_MSG("layout.ktd", "%1 pipeline stages x %2 split-head ranks x %3 data-parallel replicas (%4)"),
                {K, T, D, l.zero}};
    if (k && t) return {HR_MSG("layout.kt", "%1 pipeline stages x %2 split-head ranks"), {K, T}};
    if (k && d) return {HR_MSG("layout.kd", "%1 pipeline stages x %2 data-parallel replicas (%3)"), {K, D, l.zero}};
    if (t && d) return {HR_MSG("layout.td", "%1 split-head ranks x %2 data-parallel replicas (%3)"), {T, D, l.zero}};
    if (k) return {HR_MSG("layout.k", "%1 pipeline stages"), {K}};
    if (t) return {HR_MSG("layout.t", "%1 split-head ranks"), {T}};
    if (d) return {HR_MSG("layout.d", "%1 data-parallel replicas (%2)"), {D, l.zero}};
    if (l.zero != "none") return {HR_MSG("layout.one_sharded", "one process (%1)"), {l.zero}};
    return {HR_MSG("layout.one", "one process")};
}

std::string describe_rank_layout(const RankLayout& l) { return describe_rank_layout_message(l).english(); }

const std::vector<std::string>& layout_choices() {
    static const std::vector<std::string> c = {"none",     "dp",          "zero1",         "zero2",
                                               "zero3",    "tp-head",     "tp-head-dp",    "tp-head-zero1",
                                               "pipeline", "pipeline-dp", "pipeline-zero1"};
    return c;
}

void apply_layout_choice(StrategyConfig& s, const std::string& choice, int world) {
    const auto dash = choice.find('-', choice.rfind("tp-head", 0) == 0 ? 3 : 0);  // (tp-head's own dash skipped)
    const std::string part = choice.substr(0, dash), data = dash == std::string::npos ? "" : choice.substr(dash + 1);
    if (std::find(layout_choices().begin(), layout_choices().end(), choice) == layout_choices().end())
        throw InputError(HR_MSG("layout.unknown_choice", "unknown layout '%1'"), {choice});
    const bool head = part == "tp-head", stages = part == "pipeline";
    // (2 replicas of at least 2 parts: on fewer than 4 ranks rank_layout refuses what this gives)
    const int parts = !head && !stages ? 1 : data.empty() ? world : std::max(2, world / 2);
    s.tp_head = head ? parts : 1;
    s.pipeline = stages ? parts : 1;
    s.shard = head || stages ? (data.empty() ? "none" : data) : choice;
    if (!stages) s.pipeline_split.clear();
}

std::string layout_choice_of(const StrategyConfig& s) {
    if (s.pipeline > 1 && s.tp_head > 1) return "";  // K x T: no choice of the window's lays it out
    const std::string part = s.pipeline > 1 ? "pipeline" : s.tp_head > 1 ? "tp-head" : "";
    const std::string c = part.empty() ? s.shard : s.shard == "none" ? part : part + "-" + s.shard;
    return std::find(layout_choices().begin(), layout_choices().end(), c) == layout_choices().end() ? "" : c;

}

void relayout_for_resume(StrategyConfig& c, const StrategyConfig& given, const RelayoutAsked& asked, int world) {
    if (asked.shard) c.shard = given.shard;
    // parameter offload is a layout of zero3's shards (the checkpoint is one process's): asked for, it is on;
    // another --shard than zero3 turns it off
    if (asked.offload_parameters) c.offload_parameters = true;
    else if (asked.shard && c.shard != "zero3") c.offload_parameters = false;
    // a checkpoint holds the whole head: a split head resumes on another number of ranks split over them
    // all, or whole on one process (strategy/tp_head.h)
    // (K x T, neither asked: kept on K x T ranks; on another number the head is whole again, the stages as below)
    const bool kt = c.tp_head > 1 && c.pipeline > 1 && !asked.tp_head && !asked.pipeline;
    if (asked.tp_head) c.tp_head = given.tp_head;
    else if (kt) c.tp_head = world == c.tp_head * c.pipeline ? c.tp_head : 1;
    else if (c.tp_head > 1 && c.tp_head != world) c.tp_head = world > 1 ? world : 1;
    // so do pipeline stages (another number of ranks: as many stages, balanced; one process: none)
    if (asked.pipeline) c.pipeline = given.pipeline;
    else if (c.pipeline > 1 && world % c.pipeline != 0) c.pipeline = world > 1 ? world : 1;
    // replicas of the stages (of a split head's parts) keep dp or zero1 (others take dp), the parts alone none
    auto replicas_shard = [&](int parts) -> std::string {
        return world > parts ? (c.shard == "zero1" ? "zero1" : "dp") : "none";
    };
    if (c.pipeline > 1 && !asked.shard) c.shard = replicas_shard(c.pipeline * c.tp_head);  // (K x T: none)
    else if (c.tp_head > 1 && !asked.shard) c.shard = replicas_shard(c.tp_head);
    if (asked.pipeline_split) c.pipeline_split = given.pipeline_split;
    else if (static_cast<int>(c.pipeline_split.size()) != c.pipeline) c.pipeline_split.clear();
}

}  // namespace hr
