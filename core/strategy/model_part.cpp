#include "strategy/model_part.h"

#include "nn/transformer_spec.h"

namespace hr {

RankModelPart rank_model_part(const ModelSpec& full, const RankLayout& layout, const RankPlace& place,
                              std::function<void(Tensor&)> head_grad_sum) {
    RankModelPart r;
    const bool last_stage = layout.pipeline == 1 || place.stage == layout.pipeline - 1;
    // (one copy of the spec at most: the planner builds a training state per candidate)
    if (layout.pipeline == 1 && layout.split_head == 1) r.spec = full;
    if (layout.pipeline > 1) {
        // the whole model's names, paths and indices for this stage's layers
        r.spec = pipeline_stage_spec(full, place.split, place.stage);
        r.part.layer_offset = place.split.first[static_cast<std::size_t>(place.stage)];
        r.part.node_offset = pipeline_node_offset(full, place.split, place.stage);
        r.part.transformer_layers = transformer_layer_count(full);
        r.part.name_prefixes = state_dict_prefixes(full);
        r.part.stage_output = true;  // every stage's spec is a part (the whole one is checked by the trainer)
        r.part.head_copies_token_embedding = place.head_copy;
    }
    if (layout.split_head > 1 && last_stage) {
        // (K x T: only the last stage's head is split; the earlier stages are whole on each of their T ranks)
        // the last layer holds the slice's rows of the whole head, initialised as those rows; the head's input
        // gradient is a sum over every rank's columns, all-reduced before the body's backward
        r.spec = tp_head_spec(layout.pipeline > 1 ? r.spec : full, place.head);
        r.part.head_first = place.head.first;
        r.part.head_total = place.head.total;
        r.part.head_input_grad_hook = std::move(head_grad_sum);
    }
    return r;
}

ModelPart further_model_part(const ModelPart& part, const Model& first) {
    ModelPart p = part;
    p.frozen_from = &first;  // (LoRA: one frozen base a stage, which --init-from and resuming write)
    return p;
}

}  // namespace hr
