// The training loop (train/trainer.h): one for every model; a workload (train/workload.h) supplies the
// data, the rows of a batch, the loss and what an evaluation walks through.
#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>

#include "backend/cpu/cpu_backend.h"
#include "backend/step_figures.h"
#include "data/text_data.h"
#include "base/error.h"
#include "dist/communicator.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "plan/device_description.h"
#include "optim/optimizer.h"
#include "strategy/training_state.h"
#include "telemetry/host_stats.h"
#include "train/checkpoint.h"
#include "train/device.h"
#include "train/generate.h"
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

// This rank's micro-batches of a batch of `rows` rows: the strategy's split of a full batch (ranks that split
// the batch always have one), or, for a shorter last batch of an epoch (one process, or ranks that all take
// the whole batch: a split head, pipeline stages), pieces of the micro-batch size, the same on every rank.
std::vector<std::pair<std::int64_t, std::int64_t>> micro_batches_of(const ResolvedStrategy& s, std::int64_t rows) {
    if (s.data_world() > 1 || rows == s.rank_batch) return s.micro_batches();
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    for (std::int64_t r0 = 0; r0 < rows; r0 += s.micro_batch) out.push_back({r0, std::min(s.micro_batch, rows - r0)});
    return out;
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
    const bool tokens = is_token_model(c.model);
    if (tokens != is_text_data(c.data))
        throw InputError(tokens ? Message(HR_MSG("train.text_needs_text",
                                                 "model '%1' is a language model (it takes token ids) but '%2' is not "
                                                 "text; use --data text:fortunes or text:FILE"),
                                          {c.model.name, c.data})
                                : Message(HR_MSG("train.text_needs_lm",
                                                 "'%1' is text, but model '%2' does not take tokens; pick a language "
                                                 "model (gpt-tiny, gpt-char, ...) or image data"),
                                          {c.data, c.model.name}));
    impl_->workload = tokens ? make_token_workload(c, strategy, resume_, run_dir_) : make_image_workload(c, strategy);
    Workload& work = *impl_->workload;
    const ModelSpec& spec = work.spec();

    // --- device (before the data is loaded, so that a bad --device fails at once) -------------------
    impl_->ledger = std::make_shared<MemoryLedger>();
    impl_->host_ledger = std::make_shared<MemoryLedger>();
    Message device_note;
    // several ranks (docs/distributed.md): this rank's device and share of the cores, the run's communicator
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

    // --- data ---------------------------------------------------------------------------------------
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
    Model& model = st.model();
    const std::int64_t B = c.batch;
    const std::int64_t M = strategy.micro_batch;
    const std::int64_t units = work.units_per_row();  // what accuracy counts per row: 1, or T tokens
    const std::int64_t loss_rows = work.rows_per_loss_weight();
    const std::int64_t steps_per_epoch = work.steps_per_epoch();
    const std::int64_t total_steps = c.steps > 0 ? c.steps : steps_per_epoch * c.epochs;

    TrainResult result;
    result.device_name = be.name();
    // the whole model's (a split head or a pipeline stage holds part of it)
    const std::int64_t whole_params =
        strategy.tp_head > 1 || strategy.pipeline > 1 ? validate_model_spec(spec).total_params : model.param_count();
    result.param_count = whole_params;
    result.strategy = strategy.describe();
    work.describe(result);
    // the run folder from the start: config.json (and the workload's files); resumed: the checkpoint's state
    const RunCursor start = begin_run_folder(st, total_steps, steps_per_epoch);  // train/resume.h
    if (!run_dir_.empty() && rank == 0) work.write_run_files(run_dir_);  // rank 0 writes the run's files
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
    const bool snapshots = world == 1 || (strategy.shard != ShardStage::zero3 && strategy.tp_head == 1 &&
                                          strategy.pipeline == 1);

    // --- where the run is: the checkpoint cursor's figures (train/resume.h) ---------------------------
    std::int64_t step = start.step;
    int epoch = start.epoch;
    std::int64_t step_in_epoch = start.step_in_epoch;
    double loss_sum = start.loss_sum;                 // the epoch's: loss x (rows / loss_rows) per step
    std::int64_t correct = start.correct, seen = start.seen;  // in units (samples or tokens)
    double epoch_train_seconds = start.epoch_train_seconds;
    double train_seconds = start.train_seconds;       // of the epochs before this one
    std::int64_t samples_trained = start.samples_trained;
    bool epoch_open = false;
    auto epoch_start = Clock::now();
    auto cursor = [&] {
        return RunCursor{step,  epoch, step_in_epoch,       total_steps,   loss_sum,        correct,
                         seen,  epoch_train_seconds, train_seconds, samples_trained, result.epochs};
    };
    auto epoch_loss = [&] {  // the epoch's mean training loss so far
        const std::int64_t weight = seen / units / loss_rows;
        return weight > 0 ? loss_sum / static_cast<double>(weight) : NAN;
    };

    const auto run_start = Clock::now();
    double sps_smooth = 0;  // samples (images or sequences) per second, smoothed over recent steps
    auto last_memory = Clock::now() - std::chrono::seconds(10);
    const double memory_interval = 1.0 / std::max(1, c.memory_events_per_second);
    const std::size_t capacity = be.device().is_cpu() ? host_memory_bytes() : device_total_bytes(be.device().str());
    auto emit_memory = [&](bool force) {
        if (!callbacks_.on_memory) return;
        if (!force && seconds_since(last_memory) < memory_interval) return;
        last_memory = Clock::now();
        callbacks_.on_memory({step, seconds_since(run_start), impl_->ledger->snapshot(), capacity});
    };
    emit_memory(true);
    impl_->ledger->reset_peaks();
    const CommStats comm_start = comm ? comm->stats() : CommStats{};
    impl_->evaluations = CommStats{};
    // parameter offload: the host<->device bytes per step (evaluation's included, as in the communication's)
    const double offload_start = st.offload_bytes();

    auto step_event = [&](double loss, std::int64_t step_correct, std::int64_t rows, double lr, double dt, bool skipped,
                          double loss_scale) {
        const double sps = dt > 0 ? static_cast<double>(rows) / dt : 0;
        sps_smooth = sps_smooth == 0 ? sps : 0.9 * sps_smooth + 0.1 * sps;
        if (!callbacks_.on_step) return;
        StepEvent ev;
        ev.step = step;
        ev.total_steps = total_steps;
        ev.epoch = epoch;
        ev.step_in_epoch = step_in_epoch;
        ev.steps_per_epoch = steps_per_epoch;
        ev.loss = loss;
        ev.accuracy = rows ? static_cast<double>(step_correct) / static_cast<double>(rows * units) : 0;
        ev.lr = lr;
        ev.step_seconds = dt;
        ev.images_per_second = sps_smooth;
        ev.tokens_per_second = work.counts_tokens() ? sps_smooth * static_cast<double>(units) : 0;
        ev.elapsed_seconds = seconds_since(run_start);
        const double per_step = (train_seconds + epoch_train_seconds) / static_cast<double>(step);
        ev.eta_seconds = per_step * static_cast<double>(total_steps - step);
        ev.loss_scale = strategy.loss_scaling ? loss_scale : 0.0;
        ev.skipped = skipped;
        ev.grad_norm = st.last_grad_norm();
        callbacks_.on_step(ev);
    };

    // --- evaluation: the same chunks on every rank, each rank its share of a chunk ----------------------
    auto evaluate = [&]() -> EvalEvent {
        const auto t0 = Clock::now();
        const CommStats comm_before = comm ? comm->stats() : CommStats{};
        impl_->ledger->set_phase("evaluate");
        double eval_loss_sum = 0;
        std::int64_t eval_correct = 0, eval_rows = 0;
        // a rank whose part of a chunk is empty still runs one row (not counted), so every rank makes the
        // same forwards (zero3 gathers in them)
        // (a split head's ranks all evaluate every row: they are one data rank)
        const int data_world = strategy.data_world(), data_rank = strategy.data_rank();
        const std::int64_t chunk = strategy.eval_micro_batch * data_world;
        work.start_eval();
        for (std::int64_t chunk_rows; (chunk_rows = work.next_eval_chunk(chunk)) > 0;) {
            if (stop_ && !comm) throw Cancelled();  // ranks decide stopping together, between steps
            auto [lo, n] = rank_share(chunk_rows, data_rank, data_world);
            const std::int64_t rows = n > 0 ? n : 1;
            if (n == 0) lo = 0;
            if (st.pipelined()) {  // through the stages: the first reads the rows, the last scores them
                Tensor x;
                if (st.first_stage()) x = work.upload_eval(lo, rows).first;
                Tensor logits = st.pipeline_eval_forward(x, rows);
                if (!st.last_stage()) continue;
                auto [xl, yl] = work.upload_eval(lo, rows);
                const LossResult r = work.eval_loss(logits, yl, lo, rows);
                eval_loss_sum += r.loss * static_cast<double>(n * units);
                eval_correct += r.correct;
                eval_rows += n;
                continue;
            }
            auto [x, y] = work.upload_eval(lo, rows);
            Tensor logits = model.forward(x, false);
            // the loss is read back on the host, after the collectives queued before it (zero3's gathers):
            // wait for those with the rank timeout first, so that a stalled peer ends the run instead of hanging it
            if (comm) comm->synchronize();
            const LossResult r = work.eval_loss(logits, y, lo, rows);
            if (n == 0) continue;
            eval_loss_sum += r.loss * static_cast<double>(n * units);
            eval_correct += r.correct;
            eval_rows += n;
        }
        if (st.pipelined()) {  // the last stage's figures
            const bool last = st.last_stage();
            eval_loss_sum = comm->all_reduce_value(last ? eval_loss_sum : 0.0, ReduceOp::sum);
            eval_correct = static_cast<std::int64_t>(comm->all_reduce_value(last ? static_cast<double>(eval_correct) : 0.0, ReduceOp::sum));
            eval_rows = static_cast<std::int64_t>(comm->all_reduce_value(last ? static_cast<double>(eval_rows) : 0.0, ReduceOp::sum));
        } else if (comm && data_world > 1) {  // weighted by samples (tokens): sums over ranks (a split head's first)
            const double w = strategy.counts_figures() ? 1.0 : 0.0;
            eval_loss_sum = comm->all_reduce_value(w * eval_loss_sum, ReduceOp::sum);
            eval_correct = static_cast<std::int64_t>(comm->all_reduce_value(w * static_cast<double>(eval_correct), ReduceOp::sum));
            eval_rows = static_cast<std::int64_t>(comm->all_reduce_value(w * static_cast<double>(eval_rows), ReduceOp::sum));
        }
        if (comm) {
            impl_->evaluations.bytes += comm->stats().bytes - comm_before.bytes;
            impl_->evaluations.wait_seconds += comm->stats().wait_seconds - comm_before.wait_seconds;
        }
        const std::int64_t counted = eval_rows * units;
        EvalEvent ev;
        ev.step = step;
        ev.epoch = epoch;
        ev.loss = counted ? eval_loss_sum / static_cast<double>(counted) : NAN;
        ev.accuracy = counted ? static_cast<double>(eval_correct) / static_cast<double>(counted) : NAN;
        ev.samples = eval_rows;
        ev.tokens = work.counts_tokens() ? counted : 0;
        ev.seconds = seconds_since(t0);
        result.evals.push_back(ev);
        result.test_loss = ev.loss;
        result.test_accuracy = ev.accuracy;
        if (callbacks_.on_eval) callbacks_.on_eval(ev);
        if (work.counts_tokens())
            log(LogLevel::info, Message(HR_MSG("run.validation_loss", "step %1: validation loss %2 per token over %3 tokens"),
                                        {std::to_string(step), std::to_string(ev.loss), std::to_string(counted)}));
        else
            log(LogLevel::info, Message(HR_MSG("run.test_loss", "step %1: test loss %2, accuracy %3 over %4 samples"),
                                        {std::to_string(step), std::to_string(ev.loss), std::to_string(ev.accuracy),
                                         std::to_string(eval_rows)}));
        return ev;
    };

    // The step without host synchronisation (strategy/training_state.h, issue 20), on a GPU in one
    // process when the strategy and the workload allow it: uploads overlap the previous step, the loss and
    // the finite check stay on the device, and the figures come back through a ring a few steps later; a
    // step of one micro-batch without dropout is captured once as a CUDA graph and replayed.
    // HEADROOM_DEVICE_STEP=1 takes this path on the CPU too (tests compare it with the host step), =0 never.
    // LoRA: the frozen model's test figures before the adapters train (the report's "before"); B starts at
    // zero, so this is the base model (from --init-from, or as initialised)
    if (strategy.lora_rank > 0 && !resume_) {
        const EvalEvent before = evaluate();
        result.lora_before_loss = before.loss;
        result.lora_before_accuracy = before.accuracy;
    }
    const bool device_step = use_device_step(be, st, work, world, ranked);
    std::unique_ptr<StepFigureRing> ring;
    std::unique_ptr<Backend::CapturedWork> graph;
    bool graph_tried = false;
    struct IssuedStep {
        std::int64_t step, step_in_epoch, rows;
        int epoch;
        double lr, seconds;
    };
    std::deque<IssuedStep> issued;  // steps whose figures have not come back yet, in order
    if (device_step) {
        ring = std::make_unique<StepFigureRing>(be);
        const bool graphed = st.graph_capturable() && M >= B && !be.device().is_cpu();
        log(LogLevel::info,
            graphed ? Message(HR_MSG("run.device_step_graph", "the step runs on the device without waiting for it (its "
                                                              "figures arrive up to %1 steps later); a full step is "
                                                              "captured as a CUDA graph"),
                              {std::to_string(ring->slot_count())})
                    : Message(HR_MSG("run.device_step", "the step runs on the device without waiting for it (its figures "
                                                        "arrive up to %1 steps later)"),
                              {std::to_string(ring->slot_count())}));
    }
    // device step: one step's figures back on the host, as the host step would have had them
    auto take_figures = [&](const StepFigures& f) {
        if (issued.empty() || issued.front().step != f.step)
            throw Error("internal: the step figures arrived out of order (step " + std::to_string(f.step) + ")");
        const IssuedStep is = issued.front();
        issued.pop_front();
        if (result.status == "failed") return;
        if (f.bad_labels > 0)
            throw Error(HR_MSG("train.bad_label",
                               "label %1 in row %2 of step %3 is outside [0, %4): the data's labels do not match the "
                               "model's classes; check num_classes and the data set"),
                        {std::to_string(f.bad_label), std::to_string(f.bad_row), std::to_string(f.step),
                         std::to_string(spec.num_classes)});
        if (!std::isfinite(f.loss)) {
            fill_loss_not_finite(result, f.loss, f.step, is.lr);
            return;
        }
        loss_sum += f.loss * static_cast<double>(is.rows) / static_cast<double>(loss_rows);
        correct += f.correct;
        seen += is.rows * units;
        const double sps = is.seconds > 0 ? static_cast<double>(is.rows) / is.seconds : 0;
        sps_smooth = sps_smooth == 0 ? sps : 0.9 * sps_smooth + 0.1 * sps;
        if (!callbacks_.on_step) return;
        StepEvent ev;
        ev.step = f.step;
        ev.total_steps = total_steps;
        ev.epoch = is.epoch;
        ev.step_in_epoch = is.step_in_epoch;
        ev.steps_per_epoch = steps_per_epoch;
        ev.loss = f.loss;
        ev.accuracy = is.rows ? static_cast<double>(f.correct) / static_cast<double>(is.rows * units) : 0;
        ev.lr = is.lr;
        ev.step_seconds = is.seconds;
        ev.images_per_second = sps_smooth;
        ev.tokens_per_second = work.counts_tokens() ? sps_smooth * static_cast<double>(units) : 0;
        ev.elapsed_seconds = seconds_since(run_start);
        const double per_step = (train_seconds + epoch_train_seconds) / static_cast<double>(step);
        ev.eta_seconds = per_step * static_cast<double>(total_steps - f.step);
        ev.loss_scale = strategy.loss_scaling ? f.loss_scale : 0.0;
        ev.skipped = f.skipped;
        callbacks_.on_step(ev);
    };
    // every step issued so far back on the host (before a checkpoint, an evaluation, the epoch's end, a stop)
    auto settle = [&] {
        if (!device_step) return;
        for (const StepFigures& f : ring->drain()) take_figures(f);
        st.sync_control_to_host();
        checkpoints_.note(cursor());
    };
    // one step of the device path; returns false when no batch was left in the epoch
    auto device_step_of = [&](double lr, const auto t0) {
        impl_->ledger->set_phase("forward");
        const std::int64_t rows = work.batch_rows();
        // the batch's uploads first (each waits only for the step that last read its landing buffer), then
        // the step; a full step of one micro-batch replays the captured graph
        const bool whole = rows == B && M >= B;
        st.begin_device_step(lr);
        for (std::int64_t r0 = 0; r0 < rows; r0 += M) {
            const std::int64_t n = std::min(M, rows - r0);
            const HostRows h = work.host_rows(r0, n);
            st.upload_next(h.inputs, h.labels, h.targets, n);
            st.take_upload(n);
            if (whole && graph) {
                graph->replay();
            } else {
                const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(rows));
                st.device_micro_step(n, share, st.first_sample(step, r0));
            }
        }
        impl_->ledger->set_phase("optimizer");
        if (!(whole && graph)) st.device_optimizer_step();
        if (whole && !graph && !graph_tried && st.graph_capturable() && !be.device().is_cpu()) {
            graph_tried = true;  // captured after one step ran for real (every buffer exists)
            graph = be.capture([&] {
                st.device_micro_step(B, 1.0f, 0);
                st.device_optimizer_step();
            });
        }
        ++step;
        ++step_in_epoch;
        samples_trained += rows;
        issued.push_back({step, step_in_epoch, rows, epoch, lr, 0.0});
        for (const StepFigures& f : ring->push(step, st.stats, st.control)) take_figures(f);
        const double dt = seconds_since(t0);  // with the ring full, the device's pace
        issued.back().seconds = dt;
        epoch_train_seconds += dt;
        StepFigures f;
        while (ring->pop(f)) take_figures(f);
    };
    // one step of the host path: micro-batches (gradients accumulate, each scaled by its share of the global
    // batch, so the sum equals the gradient of the mean loss over the batch), the loss checked, the optimizer
    auto host_step_of = [&](double lr, const auto t0) {
        if (ranked) st.begin_step();
        else model.zero_grad();
        double step_loss = 0;
        std::int64_t step_correct = 0;
        bool finite = true;
        const std::int64_t rows = work.batch_rows();
        const std::int64_t global_rows = strategy.data_world() > 1 ? B : rows;  // the step's samples, all ranks
        // dropout is keyed on the run-wide sample index, so N ranks equal one process
        const auto micro = micro_batches_of(strategy, rows);
        if (st.pipelined()) {
            // the stages in the 1F1B order (strategy/pipeline.h): the first uploads each micro-batch, the last
            // scores it; the step's figures are the last stage's
            impl_->ledger->set_phase("forward");
            st.pipeline_step(
                step, micro,
                [&](int j) {
                    const auto [r0, n] = micro[static_cast<std::size_t>(j)];
                    return work.upload(r0, n).first;
                },
                [&](int j, const Tensor& logits, Tensor& grad) {
                    const auto [r0, n] = micro[static_cast<std::size_t>(j)];
                    auto [x, y] = work.upload(r0, n);
                    const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(global_rows));
                    const LossResult r = work.loss(logits, y, r0, n, static_cast<float>(share * st.loss_scale()), grad);
                    step_loss += r.loss * share;
                    step_correct += r.correct;
                    return r;
                });
            const bool last = st.last_stage();
            step_loss = comm->all_reduce_value(last ? step_loss : 0.0, ReduceOp::sum);
            step_correct = static_cast<std::int64_t>(
                comm->all_reduce_value(last ? static_cast<double>(step_correct) : 0.0, ReduceOp::sum));
        }
        for (auto [r0, n] : st.pipelined() ? decltype(micro){} : micro) {
            impl_->ledger->set_phase("forward");
            auto [x, y] = work.upload(r0, n);
            Tensor logits = model.forward(x, true, st.first_sample(step, r0));
            // in single precision, as the device step takes it (the host and device steps agree to the bit)
            const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(global_rows));
            if (comm) comm->synchronize();  // as in evaluate: a stalled peer ends the run within the timeout
            Tensor grad;
            const LossResult r = work.loss(logits, y, r0, n, static_cast<float>(share * st.loss_scale()), grad);
            if (!comm && !std::isfinite(r.loss)) {  // ranks finish the step alike and decide together
                finite = false;
                step_loss = r.loss;
                break;
            }
            step_loss += r.loss * share;
            step_correct += r.correct;
            impl_->ledger->set_phase("backward");
            model.backward(grad);
        }
        // the global batch's mean loss and correct rows: every rank decides alike (a split head's ranks
        // computed the same figures already: its first counts them)
        if (comm && strategy.data_world() > 1 && !st.pipelined()) {
            const double w = strategy.counts_figures() ? 1.0 : 0.0;
            step_loss = comm->all_reduce_value(w * step_loss, ReduceOp::sum);
            step_correct = static_cast<std::int64_t>(comm->all_reduce_value(w * static_cast<double>(step_correct), ReduceOp::sum));
            finite = std::isfinite(step_loss);
        } else if (comm) {
            finite = std::isfinite(step_loss);
        }
        if (!finite) {
            fill_loss_not_finite(result, step_loss, step + 1, lr);
            return;
        }
        impl_->ledger->set_phase("optimizer");
        const bool applied = st.optimizer_step(lr);
        const double dt = seconds_since(t0);
        ++step;
        ++step_in_epoch;
        samples_trained += global_rows;
        epoch_train_seconds += dt;
        loss_sum += step_loss * static_cast<double>(global_rows) / static_cast<double>(loss_rows);
        correct += step_correct;
        seen += global_rows * units;
        step_event(step_loss, step_correct, global_rows, lr, dt, !applied, st.loss_scale());
    };
    // the end of an epoch: its figures, the evaluation the config asks for, the epoch event
    auto close_epoch = [&] {
        settle();
        epoch_open = false;
        if (result.status == "failed") return;
        EpochEvent ee;
        ee.epoch = epoch;
        ee.step = step;
        ee.train_loss = epoch_loss();
        ee.train_accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
        ee.images_per_second = epoch_train_seconds > 0 ? static_cast<double>(seen / units) / epoch_train_seconds : 0;
        ee.tokens_per_second = work.counts_tokens() ? ee.images_per_second * static_cast<double>(units) : 0;
        ee.test_loss = NAN;
        ee.test_accuracy = NAN;
        const bool last = step >= total_steps;
        if (last || (c.evaluate_each_epoch && c.eval_every == 0)) {
            const EvalEvent ev = evaluate();
            ee.test_loss = ev.loss;
            ee.test_accuracy = ev.accuracy;
        }
        ee.seconds = seconds_since(epoch_start);
        result.epochs.push_back(ee);
        result.epochs_completed = epoch;
        result.train_loss = ee.train_loss;
        result.train_accuracy = ee.train_accuracy;
        checkpoints_.after_epoch(result.epochs);
        if (callbacks_.on_epoch) callbacks_.on_epoch(ee);
        log(LogLevel::info,
            std::isnan(ee.test_accuracy)
                ? Message(HR_MSG("run.epoch", "epoch %1: train loss %2"), {std::to_string(epoch), std::to_string(ee.train_loss)})
                : Message(HR_MSG("run.epoch_tested", "epoch %1: train loss %2, test accuracy %3"),
                          {std::to_string(epoch), std::to_string(ee.train_loss), std::to_string(ee.test_accuracy)}));
        train_seconds += epoch_train_seconds;
        ++epoch;
        step_in_epoch = 0;
        loss_sum = 0;
        correct = seen = 0;
        epoch_train_seconds = 0;
    };

    try {
        while (step < total_steps && result.status != "failed") {
            if (!epoch_open) {  // a resumed run goes on in the epoch it stopped in
                epoch_start = Clock::now();
                work.start_epoch(epoch, step_in_epoch);
                epoch_open = true;
            }
            if (comm) {
                agree_on_control(*comm, stop_, paused_);
            } else {
                if (paused_ && !stop_) wait_while_paused();
                if (stop_) {
                    settle();  // the device step: every issued step's figures, and the cursor to save
                    throw Cancelled();
                }
            }
            if (snapshot_wanted_ && snapshots) take_snapshot(step);
            if (!work.next_batch(step)) {  // the epoch's data ran out before its steps (never for a full epoch)
                if (step_in_epoch == 0) throw Error("internal: an epoch without batches");
                close_epoch();
                continue;
            }
            const auto t0 = Clock::now();
            const double lr = learning_rate_at(c.schedule, c.optimizer.lr, step, total_steps);
            impl_->ledger->set_step(step + 1);
            if (device_step) device_step_of(lr, t0);
            else host_step_of(lr, t0);
            if (result.status == "failed") break;
            emit_memory(false);
            if (!device_step) checkpoints_.after_step(st, cursor());
            else if (checkpoints_.due(step, total_steps)) {
                settle();
                checkpoints_.after_step(st, cursor());
            }
            const bool last = step >= total_steps;
            if (c.eval_every > 0 && step % c.eval_every == 0 && !last) {
                settle();
                evaluate();
            }
            if (step_in_epoch >= steps_per_epoch || last) close_epoch();
        }
        settle();
    } catch (const Cancelled&) {
        result.status = "stopped";
        log(LogLevel::info, Message(HR_MSG("run.stopped_at", "stopped at step %1"), {std::to_string(step)}));
        checkpoints_.on_stop(st, result.epochs);
    } catch (const InputError&) {
        throw;
    } catch (const OutOfMemory& e) {  // during a step: the same account and advice as at setup
        fill_out_of_memory(result, e, spec, be.name());
    } catch (const Error& e) {
        result.status = "failed";
        result.error = e.what();
        result.error_messages = {e.message()};
        log(LogLevel::info, e.message());  // in the result: the front end says it once
    }
    if (epoch_open) train_seconds += epoch_train_seconds;  // stopped or failed within an epoch
    if (result.status == "stopped" && step_in_epoch > 0) {  // the figures of the epoch it stopped in
        result.train_loss = epoch_loss();
        result.train_accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
    }
    // the final weights, for a Sample panel (not after a device failure: the device may be unusable)
    if ((snapshot_wanted_ || callbacks_.on_snapshot) && snapshots && (result.status != "failed" || result.bad_input))
        take_snapshot(step);
    result.checkpoint = checkpoints_.last_path();
    result.steps = step;
    result.seconds = seconds_since(run_start);
    result.images_per_second = train_seconds > 0 ? static_cast<double>(samples_trained) / train_seconds : 0;
    result.tokens_per_second = work.counts_tokens() ? result.images_per_second * static_cast<double>(units) : 0;
    result.skipped_steps = st.skipped_steps();
    result.final_loss_scale = strategy.loss_scaling ? st.loss_scale() : 0.0;
    impl_->ledger->set_phase("done");
    result.ledger = impl_->ledger->snapshot();
    result.host_ledger = impl_->host_ledger->snapshot();
    const TrainingState::LoraCounts lora = st.whole_lora_counts();  // the whole model's, on any layout
    result.lora_params = lora.adapters;
    result.frozen_params = lora.frozen;
    result.quantized_params = lora.quantized;
    result.lora_rank = strategy.lora_rank;
    result.lora_alpha = strategy.lora_alpha;
    result.lora_base_bits = strategy.lora_base_bits;
    if (const std::int64_t ran = result.steps - std::max<std::int64_t>(0, result.resumed_from_step); ran > 0)
        result.offload_bytes_per_step = (st.offload_bytes() - offload_start) / static_cast<double>(ran);
    finish_ranks(result, comm_start);  // the run's distributed fields, the consolidated weights (rank 0)
    emit_memory(true);
    return result;
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
