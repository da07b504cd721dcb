#pragma once
// Tensor-parallel head (--tp-head N; issue 23 item 2; docs/distributed.md): the model's last layer, a
// classifier (linear) or an untied language-model head (lm_head), has its output columns split over the
// N ranks of the run, Megatron-LM style. Every rank runs the whole body on the whole batch (the same
// rows, the same bits), and its slice of the head gives its columns of the logits. The softmax
// cross-entropy is computed without gathering the logits (Megatron's vocab-parallel cross-entropy): each
// row's maximum is all-reduced (max), then the sums of exp(z - max), of z (label smoothing) and the target's
// logit (held by one rank) are all-reduced (sum). Each rank's gradient over its columns is then its part
// of the one-process gradient. In backward the head's input gradient is a sum over the ranks' columns:
// it is all-reduced before the body's backward (Model's input-gradient hook), so every rank's body sees
// the whole gradient and stays a replica without any gradient reduction of its own.
//
// Memory per rank: the head's parameters, gradients and optimizer state are 1/N (rounded by columns);
// the logits and their gradient are (rows, K/N); the body is whole. The reductions pass through a
// buffer of 3 floats per row on the device (category communication).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "backend/backend.h"
#include "dist/communicator.h"
#include "nn/model_spec.h"

namespace hr {

// Which columns of the head rank `rank` of `ranks` holds: [first, first + count) of `total`, split as
// evenly as can be (the first total % ranks ranks hold one more).
struct TpHeadSlice {
    int ranks = 1, rank = 0;
    std::int64_t total = 0, first = 0, count = 0;
    std::int64_t count_of(int r) const { return total / ranks + (r < total % ranks ? 1 : 0); }
    std::int64_t first_of(int r) const {
        return static_cast<std::int64_t>(r) * (total / ranks) + std::min<std::int64_t>(r, total % ranks);
    }
};
TpHeadSlice tp_head_slice(std::int64_t total, int ranks, int rank);

// The head's outputs (a linear layer's out_features, an lm_head's vocab_size). Throws InputError naming
// --tp-head when the last layer cannot be split: not a linear or lm_head, tied to the token embedding,
// fewer outputs than ranks, or an MSE loss (its targets are whole rows).
std::int64_t tp_head_outputs(const ModelSpec& spec, int ranks);
// The spec this rank builds: the last layer's outputs (and num_classes) are the slice's count.
ModelSpec tp_head_spec(const ModelSpec& spec, const TpHeadSlice& slice);

// Host memory the tensor-parallel loss works in, and the device buffer its reductions pass through:
// allocated once with the training state (the planner counts them).
struct TpLossBuffers {
    Tensor reduce;  // (3 x rows) f32 on the communicator's device, category communication
    Tensor host;    // (3 x rows) f32 host copy of it (a view of `reduce` on the CPU)
    Tensor staging; // a GPU: (rows x count) logits / gradient in host memory; undefined on the CPU
};

// The vocab-parallel softmax cross-entropy over rows of logits (rows, count) (or (n, T, count): T rows
// per sample) with labels (rows) i64 in [0, total): the one-process loss (mean over the rows, with label
// smoothing) and correct rows (argmax == label, the first index on ties, as torch.argmax), the same on
// every rank. With `grad` defined (the logits' shape; it may be the logits themselves, written in place)
// it receives grad_scale x d(mean loss)/d(logits) for this rank's columns. Collective (three
// all-reduces); every rank calls it with the same rows. Throws Error for a label outside [0, total).
LossResult tp_cross_entropy(Backend& be, Communicator& comm, const TpHeadSlice& slice, const Tensor& logits,
                            const Tensor& labels, float label_smoothing, Tensor grad, float grad_scale,
                            TpLossBuffers& buffers);

}  // namespace hr
