#pragma once
// RankLayout: how one run is laid out over its ranks, one value (docs/design.md decision 10; PyTorch's
// DeviceMesh is the model). Three dimensions multiply to the world size: D data-parallel replicas (with the
// ZeRO stage inside that dimension: none, dp, zero1, zero2, zero3; with a split head or pipeline stages dp
// or zero1, their optimizer state sharded over the replicas of each part), T ranks a split head's columns are
// spread over (strategy/tp_head.h) and K pipeline stages (strategy/pipeline.h). Rank r holds head part or
// stage r / D and is replica r % D of it (run.json version 3 and 4). K stages x T (D = 1, no --shard): every
// stage on T ranks, the last stage's head split over them; rank r runs stage r / T, head part r % T.
//
// Every rule that refuses a combination lives in rank_layout() below, one rule each with its reason (an
// InputError with a translatable message: app/i18n shows it in the interface language). resolve_strategy
// (strategy/strategy.h) reads its layout from here; so does a resumed run (relayout_for_resume).
#include <string>
#include <vector>

#include "base/message.h"
#include "strategy/strategy.h"

namespace hr {

struct RankLayout {
    int data = 1;              // D: data-parallel replicas
    int split_head = 1;        // T: ranks the head's output columns are split over (1: whole)
    int pipeline = 1;          // K: pipeline stages (1: none)
    std::string zero = "none"; // the stage inside the data dimension (as --shard): none | dp | zero1..zero3
    int world() const { return data * split_head * pipeline; }
};

// The layout of `s` (--shard, --tp-head, --pipeline, --pipeline-split, --rank-batch) on `world_size`
// ranks, checked: an InputError naming the rule and what to do for a combination that is not built
// (a split head with pipeline stages on other than K x T ranks or with --shard; zero2 or zero3 with either;
// replicas without --shard dp or zero1; ...).
RankLayout rank_layout(const StrategyConfig& s, int world_size);

// The layout a resolved strategy runs (its rules were checked when it was resolved): what TrainingState
// builds its part of the model from (strategy/model_part.h).
RankLayout resolved_layout(const ResolvedStrategy& s);

// For a person: "2 pipeline stages x 2 data-parallel replicas (zero1)", "one process" — as a message app/
// translates (app/i18n CoreText), and its English.
Message describe_rank_layout_message(const RankLayout& layout);
std::string describe_rank_layout(const RankLayout& layout);

// The layouts a person picks from by name (the window's Sharding combo shows these, in this order):
//   none                  one process
//   dp, zero1..zero3      every rank a data-parallel replica (the ZeRO stage inside the data dimension)
//   tp-head, pipeline     the head's columns split over every rank / the layers in one stage a rank
//   tp-head-dp, tp-head-zero1, pipeline-dp, pipeline-zero1
//                         half as many parts (head parts, stages), each on 2 data-parallel replicas
const std::vector<std::string>& layout_choices();
// Sets s.shard, s.tp_head and s.pipeline as `choice` lays a run out on `world` ranks (pipeline_split is
// cleared without stages); an InputError for an unknown choice. Whether the result fits is rank_layout's.
void apply_layout_choice(StrategyConfig& s, const std::string& choice, int world);
// The choice that lays out `s` (the inverse of apply_layout_choice; "" when none does: K x T, for one).
std::string layout_choice_of(const StrategyConfig& s);

// A resumed run on `world` ranks: the continued run's strategy `c` (its own) laid out again where the
// checkpoint (which holds one process's weights) allows it. `given` holds the flags the person gave and
// `asked` which of them: an asked dimension is taken as given; otherwise a split head spreads over all the
// new ranks (whole on one process), pipeline stages become as many as the ranks when they no longer divide
// them (none on one process), replicas of stages or head parts keep dp or zero1 (dp otherwise; none
// without replicas), parameter offload follows zero3.
struct RelayoutAsked {
    bool shard = false, tp_head = false, pipeline = false, pipeline_split = false, offload_parameters = false;
};
void relayout_for_resume(StrategyConfig& c, const StrategyConfig& given, const RelayoutAsked& asked, int world);

}  // namespace hr
