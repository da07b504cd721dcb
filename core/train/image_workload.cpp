// The image workload (train/workload.h): a data set of samples with class labels (Fashion-MNIST, IDX
// folders, synthetic data), a shuffled loader per epoch, cross-entropy or MSE on one-hot targets.
#include <string>
#include <vector>

#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "strategy/training_state.h"
#include "train/config.h"
#include "train/result.h"
#include "train/workload.h"

namespace hr {

HostRows StepRows::host_rows(std::int64_t, std::int64_t) {
    throw Error("internal: this workload has no host rows for the device step");
}

namespace {

class ImageWorkload final : public Workload {
public:
    ImageWorkload(const TrainConfig& c, const ResolvedStrategy& s) : c_(c), s_(s) {}

    const ModelSpec& spec() const override { return c_.model; }

    void load(Communicator*, const WorkloadLog&) override {
        DataOptions dopt;
        dopt.train_limit = c_.train_limit;
        dopt.test_limit = c_.test_limit;
        dopt.target = c_.target;
        data_ = load_dataset(c_.data, dopt);
        const Dataset& train = data_.train;
        if (train.sample_shape != c_.model.input_shape)
            throw InputError("the model expects samples of shape " + shape_str(c_.model.input_shape) + " but '" +
                             c_.data + "' has " + shape_str(train.sample_shape) + "; change the model's \"input\"");
        if (train.num_classes != c_.model.num_classes)
            throw InputError("the model has " + std::to_string(c_.model.num_classes) + " classes but '" + c_.data +
                             "' has " + std::to_string(train.num_classes) +
                             "; change the model's \"num_classes\" and last layer");
        if (train.count < 1) throw InputError("dataset '" + c_.data + "' has no training samples");
    }

    void make_batches(TrainingState& st, MemoryLedger& ledger, Backend& be) override {
        st_ = &st;
        be_ = &be;
        const Dataset& train = data_.train;
        const bool ranks = s_.data_world() > 1;  // a split head's ranks all train on the whole batch
        // several ranks: every rank shuffles alike and keeps its rows of each global batch; the last
        // incomplete batch of an epoch is dropped (every rank alike), so each step is a full batch split as
        // resolve_strategy says
        train_ = std::make_unique<DataLoader>(train, c_.batch, true, c_.seed, ranks, train.norm_mean, train.norm_std,
                                              &ledger, 3, s_.sample_offset, ranks ? s_.rank_batch : 0);
        // a test batch is eval_micro_batch rows of every rank: the same batches, and forwards, everywhere
        test_ = std::make_unique<DataLoader>(data_.test, s_.eval_micro_batch * s_.data_world(), false, c_.seed, false,
                                             train.norm_mean, train.norm_std, &ledger);
        if (train_->steps_per_epoch() < 1)
            throw InputError(HR_MSG("train.no_full_batch",
                                    "'%1' has %2 training samples, fewer than one batch of %3 (several ranks train "
                                    "full batches only); lower --batch or use more samples (--train-limit)"),
                             {c_.data, std::to_string(train.count), std::to_string(c_.batch)});
    }

    std::int64_t steps_per_epoch() const override { return train_->steps_per_epoch(); }

    void describe(TrainResult& r) const override {
        r.train_samples = data_.train.count;
        r.test_samples = data_.test.count;
        r.data_source = data_.source_dir;
    }

    std::string batch_text() const override {
        return std::to_string(data_.train.count) + " samples, batch " + std::to_string(c_.batch);
    }

    void start_epoch(int epoch, std::int64_t batches_done) override {
        train_->start_epoch(epoch - 1);
        for (std::int64_t i = 0; i < batches_done && train_->next(batch_); ++i) {}  // resumed mid-epoch
    }
    bool next_batch(std::int64_t) override { return train_->next(batch_); }
    std::int64_t batch_rows() const override { return batch_.size; }
    std::pair<Tensor, Tensor> upload(std::int64_t r0, std::int64_t n) override { return upload_rows(batch_, r0, n); }
    LossResult loss(const Tensor& logits, const Tensor& targets, std::int64_t r0, std::int64_t n, float grad_scale,
                    Tensor& grad) override {
        grad = st_->dlogits.slice0(0, n);
        return loss_of(batch_, logits, targets, r0, n, grad, grad_scale);
    }

    void start_eval() override { test_->start_epoch(0); }
    std::int64_t next_eval_chunk(std::int64_t) override { return test_->next(eval_) ? eval_.size : 0; }
    std::pair<Tensor, Tensor> upload_eval(std::int64_t r0, std::int64_t n) override { return upload_rows(eval_, r0, n); }
    LossResult eval_loss(const Tensor& logits, const Tensor& targets, std::int64_t r0, std::int64_t n) override {
        return loss_of(eval_, logits, targets, r0, n, Tensor(), 1.0f);
    }

    bool device_step_capable() const override { return true; }
    HostRows host_rows(std::int64_t r0, std::int64_t n) override {
        const std::int64_t per = shape_numel(c_.model.input_shape);
        return {batch_.images.data() + r0 * per, batch_.labels.data() + r0,
                c_.model.loss.type == "mse" ? onehot_rows(batch_, r0, n) : nullptr};
    }

private:
    bool lowp() const { return s_.compute_dtype != DType::f32; }

    // MSE's targets: one-hot rows [r0, r0 + n) of a host batch
    const float* onehot_rows(const Batch& b, std::int64_t r0, std::int64_t n) {
        const int K = c_.model.num_classes;
        onehot_.assign(static_cast<std::size_t>(n * K), 0.0f);
        for (std::int64_t i = 0; i < n; ++i) onehot_[static_cast<std::size_t>(i * K + b.labels[r0 + i])] = 1.0f;
        return onehot_.data();
    }

    // Rows [r0, r0 + n) of a host batch into the micro-batch buffers: (x in the compute dtype, labels).
    std::pair<Tensor, Tensor> upload_rows(const Batch& b, std::int64_t r0, std::int64_t n) {
        const std::int64_t per = shape_numel(c_.model.input_shape);
        Tensor xs = st_->x_staging.slice0(0, n);
        Tensor yb = st_->labels.slice0(0, n);
        be_->copy_from_host(b.images.data() + r0 * per, xs);
        be_->copy_from_host(b.labels.data() + r0, yb);
        if (!lowp()) return {xs, yb};
        Tensor xm = st_->x_model.slice0(0, n);
        be_->copy(xs, xm);
        return {xm, yb};
    }

    LossResult loss_of(const Batch& b, const Tensor& logits, const Tensor& labels, std::int64_t r0, std::int64_t n,
                       Tensor grad, float grad_scale) {
        if (c_.model.loss.type == "mse") {
            Tensor ts = st_->target_staging.slice0(0, n);
            be_->copy_from_host(onehot_rows(b, r0, n), ts);
            Tensor tm = st_->target_model.slice0(0, n);
            if (lowp()) be_->copy(ts, tm);
            return be_->mse_loss(logits, tm, grad, grad_scale);
        }
        if (st_->tp_head()) return st_->tp_loss(logits, labels, grad, grad_scale);  // strategy/tp_head.h
        return be_->softmax_cross_entropy(logits, labels, static_cast<float>(c_.model.loss.label_smoothing), grad,
                                          grad_scale);
    }

    const TrainConfig& c_;
    const ResolvedStrategy s_;  // a copy: the workload outlives run()
    DatasetPair data_;
    TrainingState* st_ = nullptr;
    Backend* be_ = nullptr;
    std::unique_ptr<DataLoader> train_, test_;
    Batch batch_, eval_;
    std::vector<float> onehot_;
};

}  // namespace

std::unique_ptr<Workload> make_image_workload(const TrainConfig& config, const ResolvedStrategy& strategy) {
    return std::make_unique<ImageWorkload>(config, strategy);
}

}  // namespace hr
