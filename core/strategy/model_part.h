#pragma once
// The part of the whole model one rank builds, from its place in the rank layout (strategy/rank_layout.h):
// the one place where a layout becomes a ModelPart (nn/model.h) and the spec of the layers the rank holds.
// TrainingState builds its models with it; nothing else of the layout reaches nn.
#include <functional>

#include "nn/model.h"
#include "strategy/pipeline.h"
#include "strategy/rank_layout.h"
#include "strategy/tp_head.h"

namespace hr {

// A rank's place in its layout: its slice of a split head (read when layout.split_head > 1), its stage of
// a pipeline split (layout.pipeline > 1) and whether that stage holds the copy of a head tied to the token
// embedding (strategy/pipeline.h).
struct RankPlace {
    TpHeadSlice head;
    PipelineSplit split;
    int stage = 0;
    bool head_copy = false;
};

struct RankModelPart {
    ModelSpec spec;  // the layers this rank builds: the whole spec, its head's rows, or its stage's layers
    ModelPart part;  // where they sit in the whole model
};

// The model part of `place` in `layout` of the whole model `full`. head_grad_sum (a split head) sums the
// head's input gradient over the head's ranks in place; empty in a dry run, where nothing runs.
RankModelPart rank_model_part(const ModelSpec& full, const RankLayout& layout, const RankPlace& place,
                              std::function<void(Tensor&)> head_grad_sum);

// The same part for a further model of a pipeline stage (one per micro-batch in flight), whose frozen base
// (LoRA) is the stage's first model's.
ModelPart further_model_part(const ModelPart& part, const Model& first);

}  // namespace hr
