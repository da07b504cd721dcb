#include "train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"

namespace hr {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::size_t host_memory_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}
}  // namespace

struct Trainer::Impl {
    std::shared_ptr<MemoryLedger> ledger;
    std::unique_ptr<Backend> backend;
    DatasetPair data;
    std::unique_ptr<Model> model;
    std::unique_ptr<Optimizer> optimizer;
};

Trainer::Trainer(TrainConfig config, TrainCallbacks callbacks)
    : config_(std::move(config)), callbacks_(std::move(callbacks)), impl_(std::make_unique<Impl>()) {}

Trainer::~Trainer() = default;

void Trainer::request_stop() {
    stop_ = true;
    pause_cv_.notify_all();
}

void Trainer::set_paused(bool paused) {
    {
        std::lock_guard<std::mutex> lock(pause_mutex_);
        paused_ = paused;
    }
    pause_cv_.notify_all();
}

void Trainer::wait_while_paused() {
    std::unique_lock<std::mutex> lock(pause_mutex_);
    pause_cv_.wait(lock, [this] { return !paused_.load() || stop_.load(); });
}

TrainResult Trainer::run() {
    auto log = [this](LogLevel level, const std::string& msg) {
        if (callbacks_.on_log) callbacks_.on_log({level, msg});
    };
    const TrainConfig& c = config_;
    validate_train_config(c);
    validate_model_spec(c.model);
    const StrategyConfig defaults;
    if (c.strategy.precision != "fp32" || c.strategy.checkpoint != "none" || c.strategy.accumulate != 1 ||
        c.strategy.micro_batch != 0 || c.strategy.offload_optimizer)
        throw InputError("memory strategies (precision, checkpointing, accumulation, offload) are not available in "
                         "this version yet; run without --precision/--checkpoint/--micro-batch/--accumulate/"
                         "--offload-optimizer");

    // --- device ------------------------------------------------------------------------------------
    if (c.device.rfind("cuda", 0) == 0)
        throw InputError("device '" + c.device + "': this version of Headroom trains on the CPU only (the CUDA "
                         "backend is not built yet); use --device cpu or --device auto");
    if (c.device == "auto") log(LogLevel::info, "device auto: no CUDA backend in this build, using the CPU");

    // --- data --------------------------------------------------------------------------------------
    DataOptions dopt;
    dopt.train_limit = c.train_limit;
    dopt.test_limit = c.test_limit;
    impl_->data = load_dataset(c.data, dopt);
    const Dataset& train = impl_->data.train;
    const Dataset& test = impl_->data.test;
    if (train.sample_shape != c.model.input_shape)
        throw InputError("the model expects samples of shape " + shape_str(c.model.input_shape) + " but '" + c.data +
                         "' has " + shape_str(train.sample_shape) + "; change the model's \"input\"");
    if (train.num_classes != c.model.num_classes)
        throw InputError("the model has " + std::to_string(c.model.num_classes) + " classes but '" + c.data + "' has " +
                         std::to_string(train.num_classes) + "; change the model's \"num_classes\" and last layer");
    if (train.count < 1) throw InputError("dataset '" + c.data + "' has no training samples");

    // --- engine --------------------------------------------------------------------------------------
    impl_->ledger = std::make_shared<MemoryLedger>();
    impl_->backend = make_cpu_backend(c.threads, impl_->ledger);
    Backend& be = *impl_->backend;
    const std::int64_t B = c.batch;
    ModelOptions mopt;
    mopt.batch = B;
    mopt.dtype = DType::f32;
    mopt.seed = c.seed;
    impl_->model = std::make_unique<Model>(c.model, be, mopt);
    Model& model = *impl_->model;
    impl_->optimizer = std::make_unique<Optimizer>(c.optimizer, be, model.param_count(), DType::f32);
    Optimizer& opt = *impl_->optimizer;

    const int K = c.model.num_classes;
    Allocator& alloc = be.allocator();
    Tensor x = Tensor::empty(alloc, with_batch(B, c.model.input_shape), DType::f32, MemCategory::data);
    Tensor y = Tensor::empty(alloc, {B}, DType::i64, MemCategory::data);
    Tensor target;  // MSE: one-hot targets
    if (c.model.loss.type == "mse") target = Tensor::empty(alloc, {B, K}, DType::f32, MemCategory::data);
    Tensor dlogits = Tensor::empty(alloc, {B, K}, DType::f32, MemCategory::workspace);

    DataLoader train_loader(train, B, true, c.seed, false, train.norm_mean, train.norm_std, impl_->ledger.get());
    DataLoader test_loader(test, B, false, c.seed, false, train.norm_mean, train.norm_std, impl_->ledger.get());
    const std::int64_t steps_per_epoch = train_loader.steps_per_epoch();
    const std::int64_t total_steps = c.steps > 0 ? c.steps : steps_per_epoch * c.epochs;
    const int total_epochs = static_cast<int>((total_steps + steps_per_epoch - 1) / steps_per_epoch);

    TrainResult result;
    result.device_name = be.name();
    result.param_count = model.param_count();
    result.train_samples = train.count;
    result.test_samples = test.count;
    result.data_source = impl_->data.source_dir;
    log(LogLevel::info, "training " + c.model.name + " (" + std::to_string(model.param_count()) + " parameters) on " +
                            be.name() + ": " + std::to_string(train.count) + " samples, batch " + std::to_string(B) +
                            ", " + std::to_string(total_steps) + " steps");

    std::vector<float> onehot;
    auto upload = [&](const Batch& b) -> std::pair<Tensor, Tensor> {
        Tensor xb = x.slice0(0, b.size);
        Tensor yb = y.slice0(0, b.size);
        be.copy_from_host(b.images.data(), xb);
        be.copy_from_host(b.labels.data(), yb);
        return {xb, yb};
    };
    auto loss_of = [&](const Tensor& logits, const Tensor& labels, const Batch& b, Tensor grad) -> LossResult {
        if (c.model.loss.type == "mse") {
            onehot.assign(static_cast<std::size_t>(b.size * K), 0.0f);
            for (std::int64_t i = 0; i < b.size; ++i) onehot[static_cast<std::size_t>(i * K + b.labels[i])] = 1.0f;
            Tensor t = target.slice0(0, b.size);
            be.copy_from_host(onehot.data(), t);
            return be.mse_loss(logits, t, grad, 1.0f);
        }
        return be.softmax_cross_entropy(logits, labels, static_cast<float>(c.model.loss.label_smoothing), grad, 1.0f);
    };
    auto evaluate = [&](double& loss, double& acc) {
        double loss_sum = 0;
        std::int64_t correct = 0, seen = 0;
        test_loader.start_epoch(0);
        Batch b;
        Tensor none;
        while (test_loader.next(b)) {
            if (stop_) throw Cancelled();
            auto [xb, yb] = upload(b);
            Tensor logits = model.forward(xb, false);
            LossResult r = loss_of(logits, yb, b, none);
            loss_sum += r.loss * static_cast<double>(b.size);
            correct += r.correct;
            seen += b.size;
        }
        loss = seen ? loss_sum / static_cast<double>(seen) : NAN;
        acc = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
    };

    const auto run_start = Clock::now();
    double train_seconds = 0;
    std::int64_t samples_trained = 0;
    std::int64_t step = 0;
    double ips_smooth = 0;
    auto last_memory = Clock::now() - std::chrono::seconds(10);
    const double memory_interval = 1.0 / std::max(1, c.memory_events_per_second);
    auto emit_memory = [&](bool force) {
        if (!callbacks_.on_memory) return;
        if (!force && seconds_since(last_memory) < memory_interval) return;
        last_memory = Clock::now();
        callbacks_.on_memory({step, seconds_since(run_start), impl_->ledger->snapshot(), host_memory_bytes()});
    };
    emit_memory(true);
    impl_->ledger->reset_peaks();

    try {
        for (int epoch = 1; epoch <= total_epochs && step < total_steps; ++epoch) {
            const auto epoch_start = Clock::now();
            double epoch_train_seconds = 0;
            double loss_sum = 0;
            std::int64_t correct = 0, seen = 0;
            train_loader.start_epoch(epoch - 1);
            Batch b;
            std::int64_t step_in_epoch = 0;
            while (step < total_steps && train_loader.next(b)) {
                if (stop_) throw Cancelled();
                if (paused_) wait_while_paused();
                if (stop_) throw Cancelled();
                const auto t0 = Clock::now();
                const double lr = learning_rate_at(c.schedule, c.optimizer.lr, step, total_steps);
                impl_->ledger->set_step(step + 1);
                impl_->ledger->set_phase("forward");
                auto [xb, yb] = upload(b);
                model.zero_grad();
                Tensor logits = model.forward(xb, true, static_cast<std::uint64_t>(step));
                Tensor g = dlogits.slice0(0, b.size);
                LossResult r = loss_of(logits, yb, b, g);
                if (!std::isfinite(r.loss)) {
                    char msg[512];
                    std::snprintf(msg, sizeof msg,
                                  "the loss became %s at step %lld (epoch %d); training cannot continue. Lower the "
                                  "learning rate (now %g, --lr), use a warm-up, or check the data",
                                  std::isnan(r.loss) ? "NaN" : "infinite", static_cast<long long>(step + 1), epoch, lr);
                    result.status = "failed";
                    result.error = msg;
                    result.bad_input = true;
                    log(LogLevel::error, msg);
                    break;
                }
                impl_->ledger->set_phase("backward");
                model.backward(g);
                impl_->ledger->set_phase("optimizer");
                opt.step(model.parameters(), model.gradients(), lr);
                const double dt = seconds_since(t0);
                ++step;
                ++step_in_epoch;
                samples_trained += b.size;
                epoch_train_seconds += dt;
                loss_sum += r.loss * static_cast<double>(b.size);
                correct += r.correct;
                seen += b.size;
                const double ips = dt > 0 ? static_cast<double>(b.size) / dt : 0;
                ips_smooth = ips_smooth == 0 ? ips : 0.9 * ips_smooth + 0.1 * ips;
                if (callbacks_.on_step) {
                    StepEvent ev;
                    ev.step = step;
                    ev.total_steps = total_steps;
                    ev.epoch = epoch;
                    ev.step_in_epoch = step_in_epoch;
                    ev.steps_per_epoch = steps_per_epoch;
                    ev.loss = r.loss;
                    ev.accuracy = b.size ? static_cast<double>(r.correct) / static_cast<double>(b.size) : 0;
                    ev.lr = lr;
                    ev.step_seconds = dt;
                    ev.images_per_second = ips_smooth;
                    ev.elapsed_seconds = seconds_since(run_start);
                    const double per_step = (train_seconds + epoch_train_seconds) / static_cast<double>(step);
                    ev.eta_seconds = per_step * static_cast<double>(total_steps - step);
                    callbacks_.on_step(ev);
                }
                emit_memory(false);
            }
            train_seconds += epoch_train_seconds;
            if (result.status == "failed") break;
            EpochEvent ee;
            ee.epoch = epoch;
            ee.step = step;
            ee.train_loss = seen ? loss_sum / static_cast<double>(seen) : NAN;
            ee.train_accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
            ee.images_per_second = epoch_train_seconds > 0 ? static_cast<double>(seen) / epoch_train_seconds : 0;
            ee.test_loss = NAN;
            ee.test_accuracy = NAN;
            const bool last = step >= total_steps;
            if (c.evaluate_each_epoch || last) {
                impl_->ledger->set_phase("evaluate");
                evaluate(ee.test_loss, ee.test_accuracy);
            }
            ee.seconds = seconds_since(epoch_start);
            result.epochs.push_back(ee);
            result.epochs_completed = epoch;
            result.train_loss = ee.train_loss;
            result.train_accuracy = ee.train_accuracy;
            result.test_loss = ee.test_loss;
            result.test_accuracy = ee.test_accuracy;
            if (callbacks_.on_epoch) callbacks_.on_epoch(ee);
            log(LogLevel::info, "epoch " + std::to_string(epoch) + ": train loss " + std::to_string(ee.train_loss) +
                                    ", test accuracy " + std::to_string(ee.test_accuracy));
        }
    } catch (const Cancelled&) {
        result.status = "stopped";
        log(LogLevel::info, "stopped at step " + std::to_string(step));
    } catch (const InputError&) {
        throw;
    } catch (const Error& e) {
        result.status = "failed";
        result.error = e.what();
        log(LogLevel::error, e.what());
    }
    result.steps = step;
    result.seconds = seconds_since(run_start);
    result.images_per_second = train_seconds > 0 ? static_cast<double>(samples_trained) / train_seconds : 0;
    impl_->ledger->set_phase("done");
    result.ledger = impl_->ledger->snapshot();
    emit_memory(true);
    return result;
}

void Trainer::save_weights(const std::string& path, const std::string& run_json_text) const {
    if (!impl_->model) throw Error("no trained model to save: run() first");
    SafeTensorsFile f = model_state_file(*impl_->model);
    if (!run_json_text.empty()) f.metadata["run"] = run_json_text;
    write_safetensors(path, f);
}

}  // namespace hr
