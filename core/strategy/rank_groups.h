#pragma once
// RankGroups: this rank's place in a layout across ranks (strategy/rank_layout.h) and the communicator groups
// it trains in: a split head's parts, pipeline stages, their replicas, a tied head's two ends. Built first
// by TrainingState (its model is this place's part of the whole model, strategy/model_part.h); one process
// and plain data-parallel ranks have none (the run's communicator is the ShardEngine's).
#include <memory>

#include "dist/communicator.h"
#include "nn/model_spec.h"
#include "strategy/pipeline.h"
#include "strategy/strategy.h"
#include "strategy/tp_head.h"

namespace hr {

struct RankGroups {
    RankGroups() = default;
    // comm: the run's communicator (its rank and size the strategy's); may be null in a dry run, which makes
    // no group (the planner's walk reads the place alone).
    RankGroups(const ResolvedStrategy& s, const ModelSpec& full_spec, bool dry_run, Communicator* comm);

    // --- the place ---
    TpHeadSlice slice;        // a split head: this rank's rows of the head
    PipelineSplit split;      // pipeline stages: each stage's first layer
    int stage = 0;            // this rank's stage
    bool head_copy = false;   // this stage holds the copy of a head tied to the token embedding
    // --- the groups ---
    // the parts of this rank's replica (rank = part), which split the loss and sum the head's input gradient:
    // with D = 1 the run's communicator, with T x D a group of its own (heads_comm)
    Communicator* heads = nullptr;
    std::unique_ptr<Communicator> heads_comm;
    // the stages of this rank's replica (rank = stage): with D = 1 the run's communicator, with K x D a group
    // of its own (stages_comm)
    Communicator* stages = nullptr;
    std::unique_ptr<Communicator> stages_comm;
    // a head tied to the token embedding: stage 0 and the last stage of each replica (the head's copy) sum
    // their gradients of the weight over it
    std::unique_ptr<Communicator> tied;
    // K x D or T x D: this rank's part (stage, part of the head) in every replica; they all-reduce its
    // gradients before the update and take the first replica's buffers (null with one replica)
    std::unique_ptr<Communicator> replicas;
};

}  // namespace hr
