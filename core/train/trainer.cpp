// The training loop (train/trainer.h): one for every model; a workload (train/workload.h) supplies the
// data, the rows of a batch, the loss and what an evaluation walks through.
#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "backend/step_figures.h"
#include "data/text_data.h"
#include "base/error.h"
#include "dist/communicator.h"
#include "dist/rank_progress.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "plan/device_description.h"
#include "optim/optimizer.h"
#include "strategy/training_state.h"
#include "telemetry/host_stats.h"
#include "train/checkpoint.h"
#include "train/hf_model.h"
#include "train/device.h"
#include "train/evaluator.h"
#include "train/generate.h"
#include "train/step_progress.h"
#include "train/step_runner.h"
#include "train/workload.h"
#include "base/clock.h"

namespace hr {

namespace {
using Clock = std::chrono::steady_clock;

std::size_t host_memory_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

// Whether a run takes the step without host synchronisation: on a GPU, in one process, when the strategy
// (TrainingState::device_step_supported) and the workload allow it; HEADROOM_DEVICE_STEP=1 asks for it on
// the CPU too, =0 never.
bool use_device_step(Backend& be, TrainingState& st, const Workload& work, int world, bool ranked) {
    if (world > 1 || ranked || !st.device_step_supported() || !work.device_step_capable()) return false;
    const char* env = std::getenv("HEADROOM_DEVICE_STEP");
    if (env && *env) return std::string(env) != "0";
    return !be.device().is_cpu();
}

// A loss that stopped being a number ends the run the same way for every workload: one translatable
// sentence naming the step and what to change.
void fill_loss_not_finite(TrainResult& r, double loss, std::int64_t step, double lr) {
    char lr_text[32];
    std::snprintf(lr_text, sizeof lr_text, "%g", lr);
    const Message m(HR_MSG("train.loss_not_finite",
                           "The loss became %1 at step %2; training cannot continue. Lower the learning rate "
                           "(now %3, --lr), use a warm-up (--warmup), clip the gradients (--grad-clip 1) or "
                           "check the data"),
                    {std::isnan(loss) ? "NaN" : "infinite", std::to_string(step), lr_text});
    r.status = "failed";
    r.error = m.english();
    r.error_messages = {m};
    r.bad_input = true;
    log(LogLevel::info, r.error);  // in the result: the front end says it once
}
}  // namespace

struct Trainer::Impl {
    std::shared_ptr<MemoryLedger> ledger;       // the training device
    std::shared_ptr<MemoryLedger> host_ledger;  // host memory of offloaded state
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Backend> host_backend;
    std::unique_ptr<Workload> workload;
    std::unique_ptr<TrainingState> state;
    std::shared_ptr<const WeightsSnapshot> snapshot;
    // several ranks
    std::shared_ptr<Communicator> comm;           // null for one process
    std::unique_ptr<SafeTensorsFile> consolidated;  // rank 0: the full weights, gathered at the end of run()
    CommStats evaluations;  // the evaluations' traffic and waits (not part of a step's figures)
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

TrainResult Trainer::setup_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device,
                                         const ResolvedStrategy& strategy) {
    TrainResult failed;
    fill_out_of_memory(failed, e, spec, device);
    failed.strategy = strategy.describe();
    failed.ledger = impl_->ledger->snapshot();
    impl_->state.reset();
    return failed;
}

// The run's loop state: what the steps, the evaluations and the epochs' ends share (one per run()).
struct Trainer::Loop {
    Loop(const TrainConfig& config, Workload& w, TrainingState& s, Backend& b, Communicator* cm, const RunLog& l,
         const RunCursor& start, const ProgressShape& shape, MemoryLedger& ledger, const std::atomic<bool>& stop)
        : c(config), work(w), st(s), be(b), comm(cm), log(l), progress(start, shape),
          evaluator(w, s, cm, ledger, &stop) {}
    const TrainConfig& c;
    Workload& work;
    TrainingState& st;
    Backend& be;
    Communicator* comm;
    const RunLog& log;
    RunProgress progress;
    Evaluator evaluator;
    std::unique_ptr<HostStepRunner> host;      // the host step (or the pipeline's)
    std::unique_ptr<DeviceStepRunner> device;  // the step without host synchronisation, when the run takes it
    DeviceStepRunner::Sink take;               // a device step's figures, back on the host
    TrainResult result;
    bool snapshots = false;  // whether this rank's parameters are the whole model's
    bool epoch_open = false;
    Clock::time_point epoch_start = Clock::now();
    Clock::time_point last_memory = Clock::now() - std::chrono::seconds(10);
    std::size_t capacity = 0;
    RunCursor cursor() const { return progress.cursor(result.epochs); }
};

TrainResult Trainer::run() {
    const RunLog log{callbacks_.on_log};
    const TrainConfig& c = config_;
    validate_train_config(c);
    validate_model_spec(c.model);
    const RankEnvironment env = rank_environment();
    const int world = env.launched ? env.world_size : 1;
    const int rank = env.launched ? env.rank : 0;
    ResolvedStrategy strategy = resolve_strategy(c.strategy, c.model, c.batch, world, rank);
    if (c.strategy.checkpoint == "auto") {
        strategy.checkpoint_blocks = choose_auto_checkpoint(c);
        log(LogLevel::info, Message(HR_MSG("run.checkpoint_auto", "checkpoint auto: the planner chose %1 block(s)"),
                                    {std::to_string(strategy.checkpoint_blocks.size())}));
    }
    check_data_fits_model(c);
    impl_->workload = is_token_model(c.model) ? make_token_workload(c, strategy, resume_, run_dir_)
                                              : make_image_workload(c, strategy);
    Workload& work = *impl_->workload;
    const ModelSpec& spec = work.spec();
    start_device(strategy, env, world, log);  // before the data is loaded, so that a bad --device fails at once
    Communicator* comm = impl_->comm.get();
    work.load(comm, log);

    // --- engine -------------------------------------------------------------------------------------
    impl_->host_backend = make_cpu_backend(c.threads, impl_->host_ledger);
    Backend& be = *impl_->backend;
    const std::size_t limit = run_memory_limit(c, be);
    if (limit > 0)
        if (auto* cpu = dynamic_cast<CpuAllocator*>(&be.allocator())) cpu->set_limit(limit);
    try {
        impl_->state = std::make_unique<TrainingState>(spec, c.optimizer, strategy, c.seed, be, be.allocator(),
                                                       *impl_->host_backend, impl_->host_backend->allocator(), false,
                                                       comm);
        work.make_batches(*impl_->state, *impl_->ledger, be);
        if (limit > 0 && impl_->ledger->live_total() > limit)
            throw OutOfMemory("out of memory: the batch buffers pass the limit", 0, MemCategory::data, -1, limit,
                              impl_->ledger->snapshot());
    } catch (const OutOfMemory& e) {
        return setup_out_of_memory(e, spec, be.name(), strategy);
    }
    TrainingState& st = *impl_->state;
    const std::int64_t steps_per_epoch = work.steps_per_epoch();
    const std::int64_t total_steps = c.steps > 0 ? c.steps : steps_per_epoch * c.epochs;
    // the whole model's (a split head or a pipeline stage holds part of it)
    const std::int64_t whole_params =
        strategy.tp_head > 1 || strategy.pipeline > 1 ? validate_model_spec(spec).total_params : st.model().param_count();
    // the run folder from the start: config.json (and the workload's files); resumed: the checkpoint's state
    const RunCursor start = begin_run_folder(st, total_steps, steps_per_epoch);  // train/resume.h
    if (!run_dir_.empty() && rank == 0) work.write_run_files(run_dir_);  // rank 0 writes the run's files
    const ProgressShape shape{total_steps,          steps_per_epoch,         work.units_per_row(),
                              work.rows_per_loss_weight(), work.counts_tokens(), strategy.loss_scaling};
    Loop L(c, work, st, be, comm, log, start, shape, *impl_->ledger, stop_);
    TrainResult& result = L.result;
    result.device_name = be.name();
    result.param_count = whole_params;
    result.strategy = strategy.describe();
    work.describe(result);
    result.resumed_from_step = resume_ ? start.step : -1;
    result.weights_notes = weights_notes_;
    result.epochs = start.epochs;
    result.epochs_completed = start.epochs.empty() ? 0 : start.epochs.back().epoch;
    log(LogLevel::info, Message(HR_MSG("run.training", "training %1 (%2 parameters) on %3: %4, %5 steps (%6 per epoch), %7"),
                                {spec.name, std::to_string(whole_params), be.name(), work.batch_text(),
                                 std::to_string(total_steps), std::to_string(steps_per_epoch), strategy.describe()}));
    const bool ranked = comm != nullptr || strategy.shard != ShardStage::none;
    // a snapshot copies this rank's parameters: whole weights except under zero3 on several ranks
    // (a split head: each rank holds a slice of the last layer, so no rank's copy is the model)
    L.snapshots = world == 1 || (strategy.shard != ShardStage::zero3 && strategy.tp_head == 1 && strategy.pipeline == 1);
    L.capacity = be.device().is_cpu() ? host_memory_bytes() : device_total_bytes(be.device().str());
    emit_memory(L, true);
    impl_->ledger->reset_peaks();
    const CommStats comm_start = comm ? comm->stats() : CommStats{};
    // parameter offload: the host<->device bytes per step (evaluation's included, as in the communication's)
    const double offload_start = st.offload_bytes();
    // A fine-tuning run's "before" (train/before_after.h): the model evaluated at step 0, before the first
    // update. LoRA: the frozen model (B starts at zero, so this is the base, from --init-from or as
    // initialised); full training from --init-from: the starting weights. The report's and Sample tab's "before".
    if ((strategy.lora_rank > 0 || !c.init_from.empty()) && !resume_) {
        const EvalEvent before = evaluate(L);
        result.loss_before = before.loss;
        result.accuracy_before = before.accuracy;
        if (strategy.lora_rank > 0) {
            result.lora_before_loss = before.loss;
            result.lora_before_accuracy = before.accuracy;
        }
    }
    start_runners(L, use_device_step(be, st, work, world, ranked));
    train_steps(L);
    finish_result(L);
    if (const std::int64_t ran = result.steps - std::max<std::int64_t>(0, result.resumed_from_step); ran > 0)
        result.offload_bytes_per_step = (st.offload_bytes() - offload_start) / static_cast<double>(ran);
    impl_->evaluations = L.evaluator.traffic();
    finish_ranks(result, comm_start);  // the run's distributed fields, the consolidated weights (rank 0)
    emit_memory(L, true);
    return std::move(result);
}

// The text of the data and the model agree: a language model reads text, an image model images.
void Trainer::check_data_fits_model(const TrainConfig& c) {
    const bool tokens = is_token_model(c.model);
    if (tokens == is_token_data(c.data)) return;
    throw InputError(tokens ? Message(HR_MSG("train.text_needs_text",
                                             "model '%1' is a language model (it takes token ids) but '%2' is not "
                                             "text; use --data text:fortunes, text:FILE or jsonl:FILE"),
                                      {c.model.name, c.data})
                            : Message(HR_MSG("train.text_needs_lm",
                                             "'%1' is text, but model '%2' does not take tokens; pick a language "
                                             "model (gpt-tiny, gpt-char, ...) or image data"),
                                      {c.data, c.model.name}));
}

// The device, its backend and ledgers, the run's communicator on several ranks (docs/distributed.md: this
// rank's device and share of the cores), and the device line.
void Trainer::start_device(const ResolvedStrategy& strategy, const RankEnvironment& env, int world, const RunLog& log) {
    const TrainConfig& c = config_;
    impl_->ledger = std::make_shared<MemoryLedger>();
    impl_->host_ledger = std::make_shared<MemoryLedger>();
    Message device_note;
    const std::string device = rank_device(c.device, env);
    impl_->backend = make_backend(device, rank_threads(c.threads, world, device, env), impl_->ledger, strategy.tf32,
                                  &device_note);
    if (world > 1) impl_->comm = run_communicator(*impl_->backend, c.rank_timeout);
    Communicator* comm = impl_->comm.get();
    if (comm && comm->device_overhead_bytes() > 0) {
        // NCCL's own device memory, outside the ledger: said, kept in the run's result and, from rank 0,
        // in the cache the planner reads (plan/device_description.h communication_overhead)
        const std::size_t nccl = comm->device_overhead_bytes();
        const std::string engine = comm->name().substr(0, comm->name().find(" on "));
        log(LogLevel::info, Message(HR_MSG("run.nccl_memory", "%1 holds %2 of this rank's device memory outside the ledger "
                                                             "(its buffers and kernels, measured around its start); "
                                                             "plans of %3 ranks on this GPU count it from now on"),
                                    {engine, format_bytes(nccl), std::to_string(world)}));
        if (impl_->backend->device().is_cuda() && comm->rank() == 0)
            record_communication_overhead(describe_device(device).name, world, nccl, engine);
    }
    // the device line (the window's Device label, the CLI's first line)
    if (callbacks_.on_device)
        callbacks_.on_device({impl_->backend->device().str(), impl_->backend->name(), device_note.english(), device_note});
    if (!device_note.text.empty()) log(LogLevel::info, device_note);
    if (strategy.tf32 && impl_->backend->device().is_cpu())
        log(LogLevel::info, Message(HR_MSG("run.tf32_on_cpu", "precision tf32 applies to GPU matrix units; on the CPU "
                                                             "it computes in fp32")));
}

void Trainer::emit_memory(Loop& L, bool force) {
    if (!callbacks_.on_memory) return;
    const double interval = 1.0 / std::max(1, config_.memory_events_per_second);
    if (!force && seconds_since(L.last_memory) < interval) return;
    L.last_memory = Clock::now();
    callbacks_.on_memory({L.progress.at.step, L.progress.seconds(), impl_->ledger->snapshot(), L.capacity});
}

// One evaluation: into the result, the callbacks and the log.
EvalEvent Trainer::evaluate(Loop& L) {
    const EvalEvent ev = L.evaluator.evaluate(L.progress.at.step, L.progress.at.epoch);
    L.result.evals.push_back(ev);
    L.result.test_loss = ev.loss;
    L.result.test_accuracy = ev.accuracy;
    if (callbacks_.on_eval) callbacks_.on_eval(ev);
    const std::string step = std::to_string(ev.step);
    if (L.work.counts_tokens())
        L.log(LogLevel::info, Message(HR_MSG("run.validation_loss", "step %1: validation loss %2 per token over %3 tokens"),
                                      {step, std::to_string(ev.loss), std::to_string(ev.tokens)}));
    else
        L.log(LogLevel::info, Message(HR_MSG("run.test_loss", "step %1: test loss %2, accuracy %3 over %4 samples"),
                                      {step, std::to_string(ev.loss), std::to_string(ev.accuracy),
                                       std::to_string(ev.samples)}));
    return ev;
}

// The runner the run steps with: the device step (on a GPU in one process when the strategy and the
// workload allow it; HEADROOM_DEVICE_STEP=1 on the CPU too) or the host step (or the pipeline's).
void Trainer::start_runners(Loop& L, bool device_step) {
    if (!device_step) {
        L.host = make_host_step_runner(L.st, L.comm, impl_->ledger.get());
        return;
    }
    L.device = std::make_unique<DeviceStepRunner>(L.st, L.be, impl_->ledger.get());
    const std::string slots = std::to_string(L.device->ring_slots());
    L.log(LogLevel::info,
          L.device->graphed()
              ? Message(HR_MSG("run.device_step_graph", "the step runs on the device without waiting for it (its "
                                                        "figures arrive up to %1 steps later); a full step is "
                                                        "captured as a CUDA graph"),
                        {slots})
              : Message(HR_MSG("run.device_step", "the step runs on the device without waiting for it (its figures "
                                                  "arrive up to %1 steps later)"),
                        {slots}));
    // a device step's figures back on the host, as the host step would have had them
    L.take = [this, &L](const DeviceStepFigures& d) {
        if (L.result.status == "failed") return;
        const StepFigures& f = d.figures;
        if (f.bad_labels > 0)
            throw Error(HR_MSG("train.bad_label",
                               "label %1 in row %2 of step %3 is outside [0, %4): the data's labels do not match the "
                               "model's classes; check num_classes and the data set"),
                        {std::to_string(f.bad_label), std::to_string(f.bad_row), std::to_string(f.step),
                         std::to_string(L.work.spec().num_classes)});
        if (!std::isfinite(f.loss)) {
            fill_loss_not_finite(L.result, f.loss, f.step, d.lr);
            return;
        }
        L.progress.record({d.step, d.epoch, d.step_in_epoch, d.rows, d.lr, d.seconds, f.loss, f.correct, f.loss_scale,
                           f.skipped, 0.0},
                          callbacks_.on_step);
    };
}

// Every step issued so far back on the host (before a checkpoint, an evaluation, the epoch's end, a stop).
void Trainer::settle(Loop& L) {
    if (!L.device) return;
    L.device->drain(L.take);
    checkpoints_.note(L.cursor());
}

// One optimizer step with the run's runner, its figures recorded (false: the loss stopped being a number).
void Trainer::take_step(Loop& L, double lr, Clock::time_point t0) {
    RunProgress& p = L.progress;
    const std::int64_t first = p.at.step;  // 0-based: dropout's key
    if (L.device) {
        const std::int64_t rows = L.work.batch_rows();
        p.advance(rows);
        const DeviceStepFigures issued{{}, p.at.step, p.at.step_in_epoch, p.at.epoch, rows, lr, 0.0};
        p.at.epoch_train_seconds += L.device->issue(L.work, first, issued, t0, L.take);
        L.device->collect(L.take);
        return;
    }
    const HostStepResult r = L.host->step(L.work, first, lr);
    if (!r.finite) {
        fill_loss_not_finite(L.result, r.loss, first + 1, lr);
        return;
    }
    const double dt = seconds_since(t0);
    p.advance(r.rows);
    p.at.epoch_train_seconds += dt;
    p.record({p.at.step, p.at.epoch, p.at.step_in_epoch, r.rows, lr, dt, r.loss, r.correct, L.st.loss_scale(), !r.applied,
              L.st.last_grad_norm()},
             callbacks_.on_step);
}

// The end of an epoch: its figures, the evaluation the config asks for, the epoch event.
void Trainer::close_epoch(Loop& L) {
    settle(L);
    L.epoch_open = false;
    if (L.result.status == "failed") return;
    RunProgress& p = L.progress;
    EpochEvent ee = p.epoch_event();
    if (p.at.step >= p.shape.total_steps || (L.c.evaluate_each_epoch && L.c.eval_every == 0)) {
        const EvalEvent ev = evaluate(L);
        ee.test_loss = ev.loss;
        ee.test_accuracy = ev.accuracy;
    }
    ee.seconds = seconds_since(L.epoch_start);
    L.result.epochs.push_back(ee);
    L.result.epochs_completed = ee.epoch;
    L.result.train_loss = ee.train_loss;
    L.result.train_accuracy = ee.train_accuracy;
    checkpoints_.after_epoch(L.result.epochs);
    if (callbacks_.on_epoch) callbacks_.on_epoch(ee);
    L.log(LogLevel::info,
          std::isnan(ee.test_accuracy)
              ? Message(HR_MSG("run.epoch", "epoch %1: train loss %2"), {std::to_string(ee.epoch), std::to_string(ee.train_loss)})
              : Message(HR_MSG("run.epoch_tested", "epoch %1: train loss %2, test accuracy %3"),
                        {std::to_string(ee.epoch), std::to_string(ee.train_loss), std::to_string(ee.test_accuracy)}));
    p.next_epoch();
}

// The steps to the run's end (or a stop or a failure): stop and pause between steps, the batch, the step,
// memory events, checkpoints, evaluations and the epochs' ends. A failure ends up in the result.
void Trainer::train_steps(Loop& L) {
    RunProgress& p = L.progress;
    TrainResult& result = L.result;
    const std::int64_t total_steps = p.shape.total_steps;
    try {
        while (p.at.step < total_steps && result.status != "failed") {
            if (!L.epoch_open) {  // a resumed run goes on in the epoch it stopped in
                L.epoch_start = Clock::now();
                L.work.start_epoch(p.at.epoch, p.at.step_in_epoch);
                L.epoch_open = true;
            }
            if (L.comm) {
                agree_on_control(*L.comm, stop_, paused_);
            } else {
                if (paused_ && !stop_) wait_while_paused();
                if (stop_) {
                    settle(L);  // the device step: every issued step's figures, and the cursor to save
                    throw Cancelled();
                }
            }
            if (snapshot_wanted_ && L.snapshots) take_snapshot(p.at.step);
            if (!L.work.next_batch(p.at.step)) {  // the epoch's data ran out before its steps (never for a full epoch)
                if (p.at.step_in_epoch == 0) throw Error("internal: an epoch without batches");
                close_epoch(L);
                continue;
            }
            const auto t0 = Clock::now();
            const double lr = learning_rate_at(L.c.schedule, L.c.optimizer.lr, p.at.step, total_steps);
            impl_->ledger->set_step(p.at.step + 1);
            note_step_begins(p.at.step + 1);  // the launcher's heartbeats (dist/rank_progress.h)
            spin_here_for_test(p.at.step + 1);
            // the chosen step's memory timeline (memory/step_timeline.h): from the ledger's figures at its start,
            // activations at zero (nothing saved yet); the model and the state report its phases
            const std::int64_t chosen = L.c.timeline_step == 0 ? std::min<std::int64_t>(2, total_steps) : L.c.timeline_step;
            std::unique_ptr<StepRecorder> recorder;
            if (p.at.step + 1 == chosen) {
                const CategoryBytes base = L.st.timeline_base(impl_->ledger->snapshot().live);
                recorder = std::make_unique<StepRecorder>(base, chosen, L.comm ? L.comm->rank() : 0);
                L.st.set_step_recorder(recorder.get());
            }
            take_step(L, lr, t0);
            if (recorder) {
                L.st.set_step_recorder(nullptr);
                result.step_timeline = recorder->finish();
            }
            if (result.status == "failed") break;
            emit_memory(L, false);
            if (!L.device) {
                checkpoints_.after_step(L.st, L.cursor());
            } else if (checkpoints_.due(p.at.step, total_steps)) {
                settle(L);
                checkpoints_.after_step(L.st, L.cursor());
            }
            const bool last = p.at.step >= total_steps;
            if (L.c.eval_every > 0 && p.at.step % L.c.eval_every == 0 && !last) {
                settle(L);
                evaluate(L);
            }
            if (p.at.step_in_epoch >= p.shape.steps_per_epoch || last) close_epoch(L);
        }
        settle(L);
    } catch (const Cancelled&) {
        result.status = "stopped";
        L.log(LogLevel::info, Message(HR_MSG("run.stopped_at", "stopped at step %1"), {std::to_string(p.at.step)}));
        checkpoints_.on_stop(L.st, result.epochs);
    } catch (const InputError&) {
        throw;
    } catch (const OutOfMemory& e) {  // during a step: the same account and advice as at setup
        fill_out_of_memory(result, e, L.work.spec(), L.be.name());
    } catch (const Error& e) {
        result.status = "failed";
        result.error = e.what();
        result.error_messages = {e.message()};
        L.log(LogLevel::info, e.message());  // in the result: the front end says it once
    }
}

// The result's figures once the steps are over: the epoch it stopped in, the final snapshot, rates, ledgers.
void Trainer::finish_result(Loop& L) {
    RunProgress& p = L.progress;
    TrainResult& result = L.result;
    const ResolvedStrategy& strategy = L.st.strategy();
    if (L.epoch_open) p.at.train_seconds += p.at.epoch_train_seconds;  // stopped or failed within an epoch
    if (result.status == "stopped" && p.at.step_in_epoch > 0) {  // the figures of the epoch it stopped in
        result.train_loss = p.epoch_loss();
        result.train_accuracy = p.epoch_accuracy();
    }
    // the final weights, for a Sample panel (not after a device failure: the device may be unusable)
    if ((snapshot_wanted_ || callbacks_.on_snapshot) && L.snapshots && (result.status != "failed" || result.bad_input))
        take_snapshot(p.at.step);
    result.checkpoint = checkpoints_.last_path();
    result.steps = p.at.step;
    result.seconds = p.seconds();
    result.train_seconds = p.at.train_seconds;
    result.images_per_second =
        p.at.train_seconds > 0 ? static_cast<double>(p.at.samples_trained) / p.at.train_seconds : 0;
    result.tokens_per_second =
        L.work.counts_tokens() ? result.images_per_second * static_cast<double>(p.shape.units) : 0;
    result.skipped_steps = L.st.skipped_steps();
    result.final_loss_scale = strategy.loss_scaling ? L.st.loss_scale() : 0.0;
    impl_->ledger->set_phase("done");
    result.ledger = impl_->ledger->snapshot();
    result.host_ledger = impl_->host_ledger->snapshot();
    const TrainingState::LoraCounts lora = L.st.whole_lora_counts();  // the whole model's, on any layout
    result.lora_params = lora.adapters;
    result.frozen_params = lora.frozen;
    result.quantized_params = lora.quantized;
    result.lora_rank = strategy.lora_rank;
    result.lora_alpha = strategy.lora_alpha;
    result.lora_dropout = strategy.lora_dropout;
    result.lora_base_bits = strategy.lora_base_bits;
}

// The end of a run on several ranks (or with a sharding stage): the run's ranks and batches, what
// communication cost per step, every rank's measured peak (to rank 0), and the consolidated weights
// (collective under zero3; rank 0 keeps them for save_weights). After a communication failure nothing
// more is exchanged.
void Trainer::finish_ranks(TrainResult& result, const CommStats& start) {
    if (!impl_->state) return;
    TrainingState& st = *impl_->state;
    const ResolvedStrategy& s = st.strategy();
    result.world_size = s.world_size;
    result.rank = s.rank;
    result.shard = shard_stage_name(s.shard);
    result.tp_head = s.tp_head;
    result.stage_layers.clear();
    for (int k = 0; k + 1 < static_cast<int>(s.stage_first.size()); ++k)
        result.stage_layers.push_back(s.stage_first[static_cast<std::size_t>(k) + 1] - s.stage_first[static_cast<std::size_t>(k)]);
    result.rank_batches = s.rank_batches;
    if (result.rank_batches.empty()) result.rank_batches = {s.batch};
    result.rank_peak_bytes = {result.ledger.peak_total};
    const std::int64_t resident = process_peak_resident_bytes();
    result.rank_resident_peak_bytes = {resident};
    const std::int64_t engine_bytes = impl_->comm ? static_cast<std::int64_t>(impl_->comm->device_overhead_bytes()) : 0;
    result.rank_communication_overhead_bytes = {engine_bytes};
    const bool ranked = impl_->comm != nullptr || s.shard != ShardStage::none;
    if (!ranked) return;
    Communicator* comm = impl_->comm.get();
    // a resumed run's figures are of the steps it ran itself
    const std::int64_t ran = result.steps - std::max<std::int64_t>(0, result.resumed_from_step);
    if (comm && ran > 0) {
        const CommStats& now = comm->stats();
        // the training's traffic: the checkpoints' gathering and the evaluations' are not part of a step. (zero3:
        // an evaluation's gathers stay counted, since they leave in place the units the next step's forward
        // starts with, which that step then does not gather: they are the step's, done early)
        const CommStats eval = s.shard == ShardStage::zero3 ? CommStats{} : impl_->evaluations;
        result.communication_bytes_per_step =
            (now.bytes - start.bytes - checkpoints_.communication_bytes() - eval.bytes) / static_cast<double>(ran);
        result.communication_seconds_per_step =
            (now.wait_seconds - start.wait_seconds - checkpoints_.communication_seconds() - eval.wait_seconds) /
            static_cast<double>(ran);
    }
    if (result.status == "failed" && !result.bad_input) return;  // the communicator may be broken
    if (comm) {
        result.rank_peak_bytes.assign(static_cast<std::size_t>(s.world_size), 0);
        for (int r = 0; r < s.world_size; ++r)
            result.rank_peak_bytes[static_cast<std::size_t>(r)] = static_cast<std::size_t>(comm->all_reduce_value(
                r == s.rank ? static_cast<double>(result.ledger.peak_total) : 0.0, ReduceOp::sum));
        result.rank_resident_peak_bytes.assign(static_cast<std::size_t>(s.world_size), -1);
        for (int r = 0; r < s.world_size; ++r)  // the largest: -1 (unknown) on every other rank
            result.rank_resident_peak_bytes[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(
                comm->all_reduce_value(r == s.rank ? static_cast<double>(resident) : -1.0, ReduceOp::max));
        result.rank_communication_overhead_bytes.assign(static_cast<std::size_t>(s.world_size), 0);
        for (int r = 0; r < s.world_size; ++r)
            result.rank_communication_overhead_bytes[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(
                comm->all_reduce_value(r == s.rank ? static_cast<double>(engine_bytes) : 0.0, ReduceOp::sum));
    }
    if (result.status == "failed") return;
    std::vector<NamedTensor> named = st.consolidated_state_dict(impl_->backend->allocator());
    if (s.rank == 0)  // the model's own spec (a language model's carries the run's sequence length)
        impl_->consolidated = std::make_unique<SafeTensorsFile>(state_file(named, *impl_->backend, st.model().spec()));
}

void Trainer::save_weights(const std::string& path, const std::string& run_json_text) const {
    if (!impl_->state) throw Error("no trained model to save: run() first");
    if (impl_->state->strategy().rank != 0) throw Error("only rank 0 writes the weights of a run on several ranks");
    SafeTensorsFile f = impl_->consolidated ? *impl_->consolidated : model_state_file(impl_->state->model());
    if (!run_json_text.empty()) f.metadata["run"] = run_json_text;
    if (const ResolvedStrategy& rs = impl_->state->strategy(); rs.lora_rank > 0) {
        // LoRA: the adapters' scale, so that a model without adapters can read the file merged
        // (W + alpha / R * B A, train/checkpoint.h load_model_state)
        char scale[40];
        std::snprintf(scale, sizeof scale, "%.17g", rs.lora_alpha / rs.lora_rank);
        f.metadata["lora_scale"] = scale;
    }
    if (impl_->workload->tokenizer()) {
        // the tokenizer goes next to the weights and is named in their metadata (generate finds it there)
        const std::string dir = std::filesystem::path(path).parent_path().string();
        f.metadata["tokenizer"] = impl_->workload->tokenizer()->kind();
        f.metadata["tokenizer_file"] = impl_->workload->tokenizer()->file_name();
        impl_->workload->tokenizer()->save(dir.empty() ? "." : dir);
    }
    write_safetensors(path, f);
    if (const ResolvedStrategy& rs = impl_->state->strategy(); rs.lora_rank > 0) {
        // a LLaMA-layout LoRA run: its adapters in peft's layout too, beside the weights (train/hf_model.h);
        // the base is the model folder it started from, when it did
        const std::string dir = std::filesystem::path(path).parent_path().string();
        std::string base;
        if (is_hf_model_folder(config_.init_from)) base = std::filesystem::absolute(config_.init_from).string();
        else if (is_peft_adapter_folder(config_.init_from))
            base = config_.init_base.empty() ? read_peft_adapter(config_.init_from).base_dir
                                             : std::filesystem::absolute(config_.init_base).string();
        write_run_peft_adapter(dir.empty() ? "." : dir, f, impl_->state->model().spec(), rs.lora_rank, rs.lora_alpha,
                               rs.lora_dropout, base);
    }
}

void Trainer::request_snapshot() { snapshot_wanted_ = true; }

std::shared_ptr<const WeightsSnapshot> Trainer::latest_snapshot() const {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    return impl_->snapshot;
}

// On the training thread, between steps: copy the weights to the host.
void Trainer::take_snapshot(std::int64_t step) {
    snapshot_wanted_ = false;
    if (!impl_->state) return;
    auto snap = std::make_shared<WeightsSnapshot>();
    snap->weights = model_state_file(impl_->state->model());
    snap->tokenizer = impl_->workload->tokenizer();
    if (impl_->workload->tokenizer()) snap->weights.metadata["tokenizer"] = impl_->workload->tokenizer()->kind();
    snap->step = step;
    {
        std::lock_guard<std::mutex> lock(snapshot_mutex_);
        impl_->snapshot = snap;
    }
    if (callbacks_.on_snapshot) callbacks_.on_snapshot(snap);
}

}  // namespace hr
