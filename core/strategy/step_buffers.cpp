#include "strategy/step_buffers.h"

#include "nn/transformer_spec.h"

namespace hr {

// The step's buffers: the batch's rows, the landing buffers of overlapped uploads, a split head's loss
// reductions and the device step's control and figures.
void StepBuffers::build(const ModelSpec& spec, const ModelSpec& full_spec, const ResolvedStrategy& s,
                        bool takes_tokens, Backend& device, Allocator& device_alloc, Allocator& host_alloc,
                        bool last_stage, const TpHeadSlice* head) {
    device_ = &device;
    const DType dt = s.compute_dtype;
    const std::int64_t m = s.micro_batch;
    const int K = spec.num_classes;
    // the batch buffers hold the data's rows (every pipeline stage has them: the first reads the inputs,
    // the last the labels)
    const Shape data_shape = full_spec.input_shape;
    if (is_token_model(full_spec)) {
        // token ids in, next tokens as targets; the gradient of the loss overwrites the logits
        x_staging = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::i64, MemCategory::data);
        x_model = x_staging;
        labels = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::i64, MemCategory::data);
    } else {
        x_staging = Tensor::empty(device_alloc, with_batch(m, data_shape), DType::f32, MemCategory::data);
        x_model = dt == DType::f32 ? x_staging
                                   : Tensor::empty(device_alloc, with_batch(m, data_shape), dt, MemCategory::data);
        labels = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") {
            target_staging = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
            target_model =
                dt == DType::f32 ? target_staging : Tensor::empty(device_alloc, {m, K}, dt, MemCategory::data);
        }
        if (last_stage) dlogits = Tensor::empty(device_alloc, {m, K}, dt, MemCategory::workspace);
    }
    // a landing buffer for uploads that overlap the running step (a device other than the host's
    // memory only; the planner's GPU allocator reports a CUDA device too, so it counts them); token
    // models upload through x_staging / labels directly (the device step is for image batches)
    if (!device_alloc.device().is_cpu() && !takes_tokens && s.pipeline == 1) {
        landing_x_ = Tensor::empty(device_alloc, with_batch(m, spec.input_shape), DType::f32, MemCategory::data);
        landing_labels_ = Tensor::empty(device_alloc, {m}, DType::i64, MemCategory::data);
        if (spec.loss.type == "mse") landing_target_ = Tensor::empty(device_alloc, {m, K}, DType::f32, MemCategory::data);
    }
    if (head) {
        // the split loss's reductions (3 floats a row) and, on a GPU, the host copy it works in
        // (a language model's rows are its tokens; K x T: the last stage takes activations, not tokens)
        const std::int64_t rows = m * (is_token_model(full_spec) ? full_spec.input_shape[0] : 1);
        head_loss.reduce = Tensor::empty(device_alloc, {3 * rows}, DType::f32, MemCategory::communication);
        if (device_alloc.device().is_cpu()) {
            head_loss.host = head_loss.reduce;
        } else {
            head_loss.host = Tensor::empty(host_alloc, {3 * rows}, DType::f32, MemCategory::communication);
            head_loss.staging = Tensor::empty(host_alloc, {rows * head->count}, dt, MemCategory::communication);
        }
    }
    // the device step's scalars and figures (a few bytes each; the planner sees them like the rest)
    control = Tensor::empty(device_alloc, {kStepControlFields}, DType::f64, MemCategory::other);
    stats = Tensor::empty(device_alloc, {kStepStatsFields}, DType::f64, MemCategory::other);
}

void StepBuffers::upload_next(const float* x, const std::int64_t* y, const float* target, std::int64_t n) {
    Backend& device = *device_;
    if (!landing_x_.defined()) {  // the CPU: nothing to overlap
        Tensor xs = x_staging.slice0(0, n), yb = labels.slice0(0, n);
        device.copy_from_host(x, xs);
        device.copy_from_host(y, yb);
        if (target && target_staging.defined()) {
            Tensor ts = target_staging.slice0(0, n);
            device.copy_from_host(target, ts);
        }
        return;
    }
    Tensor lx = landing_x_.slice0(0, n), ly = landing_labels_.slice0(0, n);
    device.upload_async(x, lx, landing_free_.get());
    landing_full_ = device.upload_async(y, ly, landing_free_.get());
    if (target && landing_target_.defined()) {
        Tensor lt = landing_target_.slice0(0, n);
        landing_full_ = device.upload_async(target, lt, landing_free_.get());  // in order: the last is enough
    }
}

void StepBuffers::take_upload(std::int64_t n) {
    if (!landing_x_.defined()) return;
    Backend& device = *device_;
    device.wait_fence(landing_full_.get());
    Tensor xs = x_staging.slice0(0, n), yb = labels.slice0(0, n);
    device.copy(landing_x_.slice0(0, n), xs);
    device.copy(landing_labels_.slice0(0, n), yb);
    if (landing_target_.defined()) {
        Tensor ts = target_staging.slice0(0, n);
        device.copy(landing_target_.slice0(0, n), ts);
    }
    landing_free_ = device.record_fence();  // the next upload may overwrite the landing buffer after this
}

}  // namespace hr
