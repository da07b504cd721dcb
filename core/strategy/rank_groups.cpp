#include "strategy/rank_groups.h"

#include "base/error.h"

namespace hr {

// The communicator groups of a layout across ranks (strategy/rank_layout.h): a split head's or pipeline
// stages' parts, their replicas' groups and a tied head's pair of ends.
RankGroups::RankGroups(const ResolvedStrategy& s, const ModelSpec& full_spec, bool dry_run, Communicator* comm) {
    // a layout across ranks times D data-parallel replicas (T x D, K x D): a group of each kind, the ranks of
    // this rank's replica (one a part: a part of the head, a stage) and this part's replicas
    auto replica_groups = [&](int part) {
        std::unique_ptr<Communicator> parts = comm->split(s.data_rank(), part);
        replicas = comm->split(part, s.data_rank());
        return parts;
    };
    // K pipeline stages x T split-head ranks (D = 1, rank_layout): the stages of this rank's part of the head
    // (rank = stage, this part's ranks of every stage) pass the activations; the last stage's T ranks split the
    // head and its loss. The earlier stages' T ranks run the same rows on the same parameters: replicas
    // without a reduction (the last stage's ranks all-reduce the head's input gradient, so each sends back
    // the same gradient), as a split head's body is (strategy/tp_head.h)
    if (s.tp_head > 1 && s.pipeline > 1) {
        slice = tp_head_slice(tp_head_outputs(full_spec, s.tp_head), s.tp_head, s.tp_rank());
        split.first = s.stage_first;
        stage = s.stage();
        head_copy = false;  // (a split head is untied: tp_head_outputs)
        if (dry_run) {
            heads = stages = comm;
            return;
        }
        if (!comm || comm->world_size() != s.world_size || s.data_world() != 1)
            throw Error("internal: pipeline stages with a split head need the run's communicator and no replicas");
        stages_comm = comm->split(s.tp_rank(), stage);
        stages = stages_comm.get();
        heads_comm = comm->split(stage, s.tp_rank());
        heads = heads_comm.get();
        return;
    }
    // a tensor-parallel head (strategy/tp_head.h): this rank builds the model with its slice of the head
    if (s.tp_head > 1) {
        slice = tp_head_slice(tp_head_outputs(full_spec, s.tp_head), s.tp_head, s.tp_rank());
        if (!dry_run && (!comm || comm->world_size() != s.world_size))
            throw Error("internal: a tensor-parallel head needs the run's communicator");
        if (!dry_run && s.data_world() > 1) {  // T parts x D replicas
            heads_comm = replica_groups(s.tp_rank());
            heads = heads_comm.get();
        } else {
            heads = comm;
        }
    }
    // pipeline stages (strategy/pipeline.h): this rank builds its stage's layers
    if (s.pipeline > 1) {
        split.first = s.stage_first;
        stage = s.stage();
        if (!dry_run && (!comm || comm->world_size() != s.world_size))
            throw Error("internal: pipeline stages need the run's communicator");
        if (!dry_run && s.data_world() > 1) {  // K stages x D replicas
            stages_comm = replica_groups(stage);
            stages = stages_comm.get();
        } else {
            stages = comm;
        }
        // a tied head (every GPT preset): stage 0's embedding and the last stage's copy of it sum their
        // gradients; every rank takes part in the split, the others in groups of one
        if (!dry_run && pipeline_has_tied_head(full_spec)) {
            const bool ends = stage == 0 || stage == s.pipeline - 1;
            tied = comm->split(ends ? s.data_rank() : s.data_world() + s.rank, stage);
        }
        head_copy = pipeline_copies_tied_head(full_spec, split, stage);
    }
}

}  // namespace hr
