#pragma once
// Pipeline parallel (--pipeline K; issue 23 item 1; docs/distributed.md): the model's top-level layers in K
// stages of consecutive layers, stage s on rank s. A step's micro-batches flow through the stages with
// the 1F1B schedule (PipeDream-Flush, as Megatron-LM runs it): stage s first runs K - 1 - s forwards, then
// alternates one forward and one backward, then runs the backwards left. A stage's activations go to the
// next stage, and the gradient of its input back to the one before, as point-to-point messages on the
// run's communicator, grouped (Communicator::exchange, pipeline_exchanges). Stage s keeps at most K - s micro-batches in flight:
// that many copies of its activations (one model per micro-batch in flight, all on the same parameters
// and gradients). Gradients accumulate in the order one process would (micro-batch 0, 1, ...), so the
// step equals one process's with the same micro-batches.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/model_spec.h"

namespace hr {

// Where the stages start: first[s] is stage s's first top-level layer, first[K] the number of layers.
struct PipelineSplit {
    std::vector<int> first;
    int stages() const { return static_cast<int>(first.size()) - 1; }
    int layers(int s) const { return first[static_cast<std::size_t>(s) + 1] - first[static_cast<std::size_t>(s)]; }
    std::string text() const;  // "3,2" (layers per stage, --pipeline-split's form)
};

// Checks a split given as layer counts (--pipeline-split 3,2) for K stages of `spec`; InputError naming the
// flag. Empty counts: the split balanced by estimated time (pipeline_balanced_split).
PipelineSplit pipeline_split(const ModelSpec& spec, int stages, const std::vector<int>& counts);
// Splits into K stages of consecutive layers minimising the largest stage's cost. by_time: estimated
// forward + backward FLOPs per sample (layer_cost, nn/layer_cost.h: the count the planner's timeline shows); else memory per sample at `batch` samples (parameters with their
// gradients and Adam's state in f32, plus activations kept for backward).
PipelineSplit pipeline_balanced_split(const ModelSpec& spec, int stages, bool by_time, std::int64_t batch = 64);
// The cost of each top-level layer under either measure (what the split balances; the planner shows it).
std::vector<double> pipeline_layer_costs(const ModelSpec& spec, bool by_time, std::int64_t batch = 64);

// Stage s's spec: its layers, the input the stage before hands it (the per-sample output of the layer
// before it), the whole model's classes. A head tied to the token embedding (every GPT preset) that lands
// in a later stage than the embedding is untied there: that stage holds a copy of the weight, initialised
// as the embedding (ModelOptions::head_copies_token_embedding), and after each step's backward the two
// stages all-reduce (sum) their gradients of it, so both apply the one gradient one process would and the
// copies stay equal (Megatron-LM's embedding group).
ModelSpec pipeline_stage_spec(const ModelSpec& spec, const PipelineSplit& split, int stage);
// Whether stage s holds such a copy (a tied lm_head in a stage after stage 0), and whether the model has a
// tied head at all.
bool pipeline_copies_tied_head(const ModelSpec& spec, const PipelineSplit& split, int stage);
bool pipeline_has_tied_head(const ModelSpec& spec);
// The per-sample output of top-level layer `layer` of the whole model: what a stage ending there sends on.
Shape pipeline_layer_output(const ModelSpec& spec, int layer);
// Depth-first index of stage s's first node in the whole model (the ledger's layer ids).
int pipeline_node_offset(const ModelSpec& spec, const PipelineSplit& split, int stage);
// pipeline_node_offset of every stage, from one report
std::vector<int> pipeline_node_offsets(const ModelSpec& spec, const PipelineSplit& split);

// The 1F1B order of one step on stage s of K with m micro-batches: (forward?, micro-batch) in turn.
std::vector<std::pair<bool, int>> pipeline_schedule(int stages, int stage, int micro_batches);
// One message of a step, seen from one stage: a micro-batch's activations (to the next stage) or its input
// gradient (to the one before), sent or received.
struct PipelineMessage {
    bool send = false;
    bool activation = true;  // else the gradient
    int micro = 0;
    int peer_stage(int stage) const { return activation == send ? stage + 1 : stage - 1; }
    bool operator==(const PipelineMessage&) const = default;
};
// The messages stage s exchanges around its schedule, as groups (Communicator::exchange): group t, issued
// and waited before action t, holds the receive action t needs and the send action t - 1 made; the last
// group, after the last action, holds its send. Pairing a send with the next receive is Megatron-LM's
// send_forward_recv_backward / send_backward_recv_forward: on NCCL, where a send finishes once its
// receive is posted, the 1F1B order's transfers one by one would deadlock (stage 0 sending micro-batch 1
// while stage 1 sends the gradient of micro-batch 0), grouped they cannot (tests/dist/test_pipeline.cpp
// plays every stage's groups against its neighbours' with that rule). Size: actions + 1.
std::vector<std::vector<PipelineMessage>> pipeline_exchanges(int stages, int stage, int micro_batches);
// Micro-batches stage s holds at once under 1F1B: min(K - s, m).
int pipeline_in_flight(int stages, int stage, int micro_batches);
// The bubble: the share of a step a stage idles, (K - 1) / (m + K - 1) with equal stages.
double pipeline_bubble(int stages, int micro_batches);

}  // namespace hr
