#pragma once
// The benchmarks' rows (bench/dist_bench.cpp, bench/headroom_gpu_bench.cpp): a few random global batches
// made before timing, handed to the product's step runners (train/step_runner.h) as a workload hands its
// own (train/workload.h StepRows), so a benchmark times the trainer's step. Images: normal inputs and
// labels below num_classes; a language model: random token ids and next tokens. This rank's rows of
// batch `k % batches` start at the strategy's sample offset.
#include <random>
#include <vector>

#include "nn/transformer_spec.h"
#include "strategy/training_state.h"
#include "train/workload.h"

namespace hrbench {

class RandomRows final : public hr::StepRows {
public:
    RandomRows(hr::TrainingState& st, hr::Backend& be, const hr::ModelSpec& spec, int batches = 4,
               std::uint64_t seed = 5)
        : st_(st), be_(be), lm_(hr::is_token_model(spec)), per_(hr::shape_numel(spec.input_shape)),
          classes_(lm_ ? hr::model_vocabulary(spec) : spec.num_classes) {
        const std::int64_t B = st.strategy().batch;
        std::mt19937_64 g(seed);
        std::normal_distribution<float> d(0, 1);
        const auto V = static_cast<std::uint64_t>(classes_);
        xs_.resize(static_cast<std::size_t>(batches));
        ids_.resize(static_cast<std::size_t>(batches));
        ys_.resize(static_cast<std::size_t>(batches));
        for (int k = 0; k < batches; ++k) {
            if (lm_) {
                ids_[k].resize(static_cast<std::size_t>(B * per_));
                for (auto& v : ids_[k]) v = static_cast<std::int64_t>(g() % V);
            } else {
                xs_[k].resize(static_cast<std::size_t>(B * per_));
                for (auto& v : xs_[k]) v = d(g);
            }
            ys_[k].resize(static_cast<std::size_t>(lm_ ? B * per_ : B));
            for (auto& l : ys_[k]) l = static_cast<std::int64_t>(g() % V);
        }
    }

    // The batch the next step reads.
    void set_batch(int k) { k_ = static_cast<std::size_t>(k) % ys_.size(); }

    std::int64_t batch_rows() const override { return st_.strategy().rank_batch; }

    std::pair<hr::Tensor, hr::Tensor> upload(std::int64_t r0, std::int64_t n) override {
        const std::int64_t row = st_.strategy().sample_offset + r0;
        hr::Tensor xs = st_.x_staging.slice0(0, n), yb = st_.labels.slice0(0, n);
        if (lm_) {  // ids in, next tokens out
            be_.copy_from_host(ids_[k_].data() + row * per_, xs);
            be_.copy_from_host(ys_[k_].data() + row * per_, yb);
            return {xs, yb};
        }
        be_.copy_from_host(xs_[k_].data() + row * per_, xs);
        be_.copy_from_host(ys_[k_].data() + row, yb);
        if (st_.x_model.dtype() == hr::DType::f32) return {xs, yb};
        hr::Tensor xm = st_.x_model.slice0(0, n);
        be_.copy(xs, xm);
        return {xm, yb};
    }

    hr::LossResult loss(const hr::Tensor& logits, const hr::Tensor& targets, std::int64_t, std::int64_t n,
                        float grad_scale, hr::Tensor& grad) override {
        if (lm_) {  // the gradient of the mean token loss overwrites the logits, as the token workload's
            grad = logits;
            if (st_.tp_head()) return st_.tp_loss(logits, targets.reshape({n * per_}), grad, grad_scale);
            hr::Tensor lv = grad.reshape({n * per_, classes_});
            return be_.cross_entropy_inplace(lv, targets.reshape({n * per_}), true, grad_scale);
        }
        grad = st_.dlogits.slice0(0, n);
        if (st_.tp_head()) return st_.tp_loss(logits, targets, grad, grad_scale);
        return be_.softmax_cross_entropy(logits, targets, 0.0f, grad, grad_scale);
    }

    hr::HostRows host_rows(std::int64_t r0, std::int64_t) override {
        const std::int64_t row = st_.strategy().sample_offset + r0;
        return {xs_[k_].data() + row * per_, ys_[k_].data() + row, nullptr};
    }

private:
    hr::TrainingState& st_;
    hr::Backend& be_;
    bool lm_;
    std::int64_t per_, classes_;
    std::vector<std::vector<float>> xs_;
    std::vector<std::vector<std::int64_t>> ids_, ys_;
    std::size_t k_ = 0;
};

}  // namespace hrbench
