#pragma once
// TrainingState: everything a run allocates on the device (model, optimizer, master weights, batch
// buffers) and on the host (offloaded optimizer), built from a ResolvedStrategy. The trainer builds it
// on real allocators; the planner builds the very same thing on counting allocators (dry run).
#include <memory>

#include "backend/backend.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "strategy/strategy.h"

namespace hr {

class TrainingState {
public:
    TrainingState(const ModelSpec& spec, const OptimizerConfig& optimizer, const ResolvedStrategy& strategy,
                  std::uint64_t seed, Backend& device, Allocator& device_alloc, Backend& host, Allocator& host_alloc,
                  bool dry_run = false);

    Model& model() { return *model_; }
    const ResolvedStrategy& strategy() const { return strategy_; }

    // Per micro-batch buffers. x_staging/target_staging are f32 (what the data loader gives);
    // x_model/target_model are in the compute dtype (the same tensors when that is f32).
    Tensor x_staging, x_model, labels, dlogits, target_staging, target_model;

    // Factor the loss gradient is multiplied by (the fp16 loss scale, else 1).
    float loss_scale() const { return static_cast<float>(loss_scale_); }
    // Applies the optimizer for the accumulated gradients: loss-scale check (fp16), master weights,
    // offload. Returns false when the step was skipped for inf/NaN gradients (fp16).
    bool optimizer_step(double lr);
    std::int64_t skipped_steps() const { return skipped_; }

    // --- the step without host synchronisation (backend.h; issue 11) ----------------------------
    // Instead of optimizer_step and a loss returning to the host: the step's changing scalars live in
    // `control` (StepControl: learning rate, loss scale, finite flag, counters) and its figures in
    // `stats` (StepStats: loss, correct rows, bad labels), both on the device and allocated with the
    // rest (the planner counts them). A step is
    //     begin_device_step(lr); for each micro-batch: take_upload(n) (after upload_next, or upload
    //     into x_staging/labels directly); device_micro_step(...); then device_optimizer_step();
    //     then StepFigureRing::push(step, stats, control)
    // and nothing in it waits for the device. device_micro_step + device_optimizer_step of a full
    // batch is what a CUDA graph captures (Backend::capture) when graph_capturable(); the partial last
    // batch of an epoch runs op by op (the graph's shapes are fixed).
    Tensor control, stats;
    // Zeroes the gradients and the figures, clears found_inf and writes the learning rate (an upload).
    void begin_device_step(double lr);
    // One micro-batch of n rows already uploaded to x_staging and labels (target_staging for MSE):
    // cast to the compute dtype, forward, loss into `stats` (the gradient scaled by share times the
    // device's loss scale; weight share), backward. first_sample as Model::forward.
    void device_micro_step(std::int64_t n, float share, std::uint64_t first_sample);
    // The optimizer on the accumulated gradients: fp16's finite check and loss-scale update on the
    // device, master weights as optimizer_step. Throws for optimizer offload (host update).
    void device_optimizer_step();
    bool device_step_supported() const { return !strategy_.offload_optimizer; }
    // Input without waiting (defect 8): upload_next queues the next micro-batch's upload into a landing
    // buffer and returns at once, so on a GPU the copy runs while the current step computes; it waits
    // only for the step that last read the landing buffer. take_upload (at the start of that batch's
    // micro-step, before device_micro_step or a replay) makes the device wait for the upload and moves
    // it into x_staging / labels / target_staging. On the CPU upload_next copies into those at once and
    // take_upload does nothing. target (MSE: one-hot rows) may be null for cross-entropy.
    void upload_next(const float* x, const std::int64_t* labels, const float* target, std::int64_t n);
    void take_upload(std::int64_t n);
    // A captured step replays the same by-value arguments: true when none changes per step (no
    // dropout, whose masks are keyed on the run-wide sample index) and the device step is supported.
    bool graph_capturable() const;
    // Reads `control` back (a wait) into loss_scale() and skipped_steps(), e.g. at the end of a run.
    void sync_control_to_host();

private:
    ResolvedStrategy strategy_;
    Backend& device_;
    Backend& host_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Optimizer> optimizer_;
    Tensor master_;        // f32 copy the optimizer updates (device, or host when offloaded)
    Tensor host_grads_;    // offload: gradients copied to the host (compute dtype)
    Tensor host_params_;   // offload + low precision: master cast to the compute dtype before upload
    static bool spec_has_layer(const std::vector<LayerSpec>& layers, const std::string& type);
    Tensor landing_x_, landing_labels_, landing_target_;  // GPU: where upload_next writes
    std::shared_ptr<Backend::Fence> landing_free_, landing_full_;
    bool mse_ = false;
    float label_smoothing_ = 0.0f;
    bool has_dropout_ = false;
    double loss_scale_ = 1.0;
    std::int64_t good_steps_ = 0;
    std::int64_t skipped_ = 0;
};

}  // namespace hr
