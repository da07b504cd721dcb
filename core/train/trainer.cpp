#include "train/trainer.h"

#include "telemetry/host_stats.h"

#include <unistd.h>

#include <filesystem>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/text_data.h"
#include "data/tokenizer.h"
#include "dist/communicator.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "optim/optimizer.h"
#include "plan/planner.h"
#include "backend/step_figures.h"
#include "strategy/training_state.h"
#include "train/checkpoint.h"
#include "train/device.h"
#include "train/generate.h"

namespace hr {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::size_t host_memory_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

// The process's communicator outlives the trainer that made it (MPI is initialised once per process), so
// that abort_ranks() can still end every rank after the app has recorded a failure.
std::shared_ptr<Communicator>& process_communicator() {
    static std::shared_ptr<Communicator> comm;
    return comm;
}
}  // namespace

// ---- several ranks (docs/distributed.md) ---------------------------------------------------------------

std::string rank_device(const std::string& device, const RankEnvironment& env, int visible_gpus) {
    if (env.world_size <= 1) return device;
    // --device cuda:0,2: this rank's entry of the list (by local rank)
    if (device.rfind("cuda:", 0) == 0 && device.find(',') != std::string::npos) {
        std::vector<std::string> list;
        std::size_t start = 5;
        for (;;) {
            const std::size_t comma = device.find(',', start);
            list.push_back(device.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        if (static_cast<int>(list.size()) < env.local_size)
            throw InputError(HR_MSG("train.rank_devices_short",
                                    "--device %1 lists %2 GPU(s) but %3 ranks run on this machine; list one GPU per "
                                    "rank"),
                             {device, std::to_string(list.size()), std::to_string(env.local_size)});
        return "cuda:" + list[static_cast<std::size_t>(env.local_rank)];
    }
    if (device != "cuda" && device != "auto") return device;
    if (visible_gpus < 0) visible_gpus = cuda_device_count();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const int gpu = rank_gpu_index(env.local_rank, env.local_size, visible_gpus, visible && *visible);
    if (device == "cuda") return "cuda:" + std::to_string(gpu);
    // auto: this rank's GPU passes the self-test (no other GPU is touched); the CPU only when the machine
    // has no GPU at all. A GPU that fails is an error, not the CPU: ranks on the CPU next to ranks on GPUs
    // would take different engines (MPI and NCCL) and wait for each other forever.
    if (visible_gpus <= 0) return "cpu";
    const AutoDevice& a = auto_device(gpu);
    if (a.device.rfind("cuda", 0) != 0)
        throw InputError(HR_MSG("train.rank_gpu_failed",
                                "rank %1: %2; give every rank --device cpu, or --device cuda to skip the self-test"),
                         {std::to_string(env.rank), a.note.english()});
    return a.device;
}

namespace {
std::shared_ptr<Communicator> run_communicator(Backend& be, double timeout_seconds) {
    std::shared_ptr<Communicator> comm = make_run_communicator(be, timeout_seconds);  // dist/communicator.h
    process_communicator() = comm;
    return comm;
}

// Whether a run takes the step without host synchronisation (run()'s step loop): on a GPU, in one
// process, when the strategy allows it (TrainingState::device_step_supported); HEADROOM_DEVICE_STEP=1 asks
// for it on the CPU too, =0 never.
bool use_device_step(Backend& be, TrainingState& st, int world, bool ranked) {
    if (world > 1 || ranked || !st.device_step_supported()) return false;
    const char* env = std::getenv("HEADROOM_DEVICE_STEP");
    if (env && *env) return std::string(env) != "0";
    return !be.device().is_cpu();
}

// The compute threads of this rank: CPU ranks share the machine's cores, so --threads 0 means cores / ranks
// on this machine; otherwise the flag as it is. (Both step loops: run() and run_text().)
int rank_threads(int threads, int world, const std::string& device, const RankEnvironment& env) {
    if (threads != 0 || world <= 1 || device.rfind("cuda", 0) == 0) return threads;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return std::max(1, static_cast<int>(cores > 0 ? cores : 1) / std::max(1, env.local_size));
}

// Stop and pause are decided by every rank alike: the largest request of any rank, once per step (a
// paused run polls ten times a second, every rank together). Throws Cancelled when any rank stops.
void agree_on_control(Communicator& comm, const std::atomic<bool>& stop, const std::atomic<bool>& paused) {
    for (;;) {
        const double v = comm.all_reduce_value((stop ? 2.0 : 0.0) + (paused ? 1.0 : 0.0), ReduceOp::max);
        if (v >= 2) throw Cancelled();
        if (v < 1) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Evaluation on several ranks: rank `rank`'s part [first, + count) of `rows` rows (count may be 0).
std::pair<std::int64_t, std::int64_t> rank_share(std::int64_t rows, int rank, int world) {
    const std::int64_t lo = rows * rank / world;
    return {lo, rows * (rank + 1) / world - lo};
}
}  // namespace

int world_size_of_run() {
    const RankEnvironment env = rank_environment();
    return env.launched ? env.world_size : 1;
}

void abort_ranks(const std::string& reason) noexcept {
    if (auto& comm = process_communicator(); comm && comm->world_size() > 1) comm->abort_all(reason);
}

struct Trainer::Impl {
    std::shared_ptr<MemoryLedger> ledger;       // the training device
    std::shared_ptr<MemoryLedger> host_ledger;  // host memory of offloaded state
    std::unique_ptr<Backend> backend;
    std::unique_ptr<Backend> host_backend;
    DatasetPair data;
    std::unique_ptr<TrainingState> state;
    // language models
    ModelSpec text_spec;                          // the model with the run's sequence length
    std::shared_ptr<const Tokenizer> tokenizer;
    std::vector<std::int32_t> train_tokens, validation_tokens;
    std::shared_ptr<const WeightsSnapshot> snapshot;
    std::vector<std::string> weights_notes;  // --init-from: how the file's tensors were matched
    // several ranks
    std::shared_ptr<Communicator> comm;           // null for one process
    std::unique_ptr<SafeTensorsFile> consolidated;  // rank 0: the full weights, gathered at the end of run()
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

std::vector<Message> out_of_memory_messages(const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    SpecReport rep = analyze_model_spec(spec);
    auto layer_name = [&](int index) -> std::string {
        for (const auto& r : rep.layers)
            if (r.index == index) return r.path + " (" + r.label + ")";
        return std::to_string(index);
    };
    CategoryBytes live = e.snapshot.live;
    at(live, e.category) += e.requested;
    MemCategory largest = MemCategory::other;
    for (MemCategory cat : all_categories())
        if (at(live, cat) > at(live, largest)) largest = cat;
    std::vector<Message> out;
    if (e.layer >= 0)
        out.emplace_back(HR_MSG("oom.request_layer", "out of memory on %1 (limit %2): could not allocate %3 for %4 of "
                                                     "layer %5 with %6 already in use."),
                         std::vector<std::string>{device, format_bytes(e.limit), format_bytes(e.requested),
                                                  category_name(e.category), layer_name(e.layer),
                                                  format_bytes(e.snapshot.live_total)});
    else
        out.emplace_back(HR_MSG("oom.request", "out of memory on %1 (limit %2): could not allocate %3 for %4 with %5 "
                                               "already in use."),
                         std::vector<std::string>{device, format_bytes(e.limit), format_bytes(e.requested),
                                                  category_name(e.category), format_bytes(e.snapshot.live_total)});
    std::string in_use;
    for (MemCategory cat : all_categories()) {
        if (!at(e.snapshot.live, cat)) continue;
        in_use += std::string(in_use.empty() ? "" : ", ") + category_name(cat) + " " + format_bytes(at(e.snapshot.live, cat));
    }
    if (!in_use.empty()) out.emplace_back(HR_MSG("oom.in_use", "In use: %1."), std::vector<std::string>{in_use});
    // the largest layers
    std::vector<std::pair<std::size_t, int>> layers;
    for (const auto& [layer, b] : e.snapshot.layers)
        if (layer >= 0 && b.live > 0) layers.push_back({b.live, layer});
    std::sort(layers.rbegin(), layers.rend());
    if (!layers.empty()) {
        std::string list;
        for (std::size_t i = 0; i < std::min<std::size_t>(3, layers.size()); ++i)
            list += (i ? ", " : "") + layer_name(layers[i].second) + " " + format_bytes(layers[i].first);
        out.emplace_back(HR_MSG("oom.largest_layers", "Largest layers: %1."), std::vector<std::string>{list});
    }
    const std::string name = category_name(largest);
    switch (largest) {
        case MemCategory::activations:
            out.emplace_back(HR_MSG("oom.cut_activations", "The largest category is %1; to cut it: --checkpoint all, "
                                                           "--precision bf16, or a smaller --micro-batch with "
                                                           "accumulation."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::optimizer_state:
            out.emplace_back(HR_MSG("oom.cut_optimizer_state", "The largest category is %1; to cut it: "
                                                               "--offload-optimizer, or --optimizer sgd (no state "
                                                               "without momentum)."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::master_weights:
            out.emplace_back(HR_MSG("oom.cut_master_weights", "The largest category is %1; to cut it: --offload-optimizer."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::parameters:
        case MemCategory::gradients:
            out.emplace_back(HR_MSG("oom.cut_weights", "The largest category is %1; to cut it: --precision bf16."),
                             std::vector<std::string>{name});
            break;
        case MemCategory::workspace:
            out.emplace_back(HR_MSG("oom.cut_workspace", "The largest category is %1; to cut it: a smaller --micro-batch."),
                             std::vector<std::string>{name});
            break;
        default:
            out.emplace_back(HR_MSG("oom.cut_batch", "The largest category is %1; to cut it: a smaller --batch."),
                             std::vector<std::string>{name});
            break;
    }
    std::string budget = format_bytes(e.limit);
    budget.erase(std::remove(budget.begin(), budget.end(), ' '), budget.end());
    out.emplace_back(HR_MSG("oom.plan_hint", "headroom plan --budget %1 lists the configurations that fit."),
                     std::vector<std::string>{budget});
    return out;
}

std::string describe_out_of_memory(const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    std::string msg;
    for (const Message& m : out_of_memory_messages(e, spec, device)) {
        if (!msg.empty()) msg += ' ';
        msg += m.english();
    }
    return msg;
}

PlanRequest plan_request(const TrainConfig& c, std::int64_t train_samples, std::int64_t test_samples) {
    PlanRequest r;
    r.spec = c.model;
    r.batch = c.batch;
    r.seq = c.seq;
    r.strategy = c.strategy;
    r.optimizer = c.optimizer;
    r.device = resolve_device(c.device);
    r.threads = c.threads;
    r.train_samples = train_samples ? train_samples : c.train_limit;
    r.test_samples = test_samples ? test_samples : c.test_limit;
    r.budget = c.memory_limit;
    r.world_size = world_size_of_run();
    return r;
}

std::vector<int> choose_auto_checkpoint(const TrainConfig& c) {
    return predict_memory(plan_request(c)).strategy.checkpoint_blocks;
}

// Out of memory (at setup or during a step; image and language-model paths alike): the category and
// layers at the peak, the strategies that cut the largest category, in English and as translatable
// sentences, and the limit the advice searches under.
// The cap on the training device's allocations: --memory-limit, else, on the CPU, the host memory the
// kernel says is available now (MemAvailable, after the dataset was loaded). Every buffer is allocated
// at setup, so a run larger than the machine's free RAM is refused there with the out-of-memory account
// and advice, before anything is touched, instead of being killed by the kernel mid-run.
static std::size_t run_memory_limit(const TrainConfig& c, Backend& be) {
    if (c.memory_limit > 0) return c.memory_limit;
    return be.device().is_cpu() ? device_free_bytes("cpu") : 0;
}

static void fill_out_of_memory(TrainResult& r, const OutOfMemory& e, const ModelSpec& spec, const std::string& device) {
    r.status = "failed";
    r.out_of_memory = true;
    r.oom_limit = e.limit;
    r.error_messages = out_of_memory_messages(e, spec, device);
    r.error = describe_out_of_memory(e, spec, device);
    CategoryBytes live = e.snapshot.live;
    at(live, e.category) += e.requested;
    MemCategory largest = MemCategory::other;
    for (MemCategory cat : all_categories())
        if (at(live, cat) > at(live, largest)) largest = cat;
    r.oom_category = category_name(largest);
    r.device_name = device;
    log(LogLevel::info, r.error);  // the result carries it: the front end says it once
}

// A loss that stopped being a number ends the run the same way for image and language models: one
// translatable sentence naming the step and what to change.
static void fill_loss_not_finite(TrainResult& r, double loss, std::int64_t step, double lr) {
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
    auto log = [this](LogLevel level, const std::string& msg) {
        if (callbacks_.on_log) callbacks_.on_log({level, msg});
    };
    const TrainConfig& c = config_;
    validate_train_config(c);
    validate_model_spec(c.model);
    const RankEnvironment env = rank_environment();
    const int world = env.launched ? env.world_size : 1;
    const int rank = env.launched ? env.rank : 0;
    ResolvedStrategy strategy = resolve_strategy(c.strategy, c.model, c.batch, world, rank);
    if (c.strategy.checkpoint == "auto") {
        strategy.checkpoint_blocks = choose_auto_checkpoint(c);
        log(LogLevel::info, "checkpoint auto: the planner chose " + std::to_string(strategy.checkpoint_blocks.size()) +
                                " block(s)");
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
    if (tokens) return run_text(strategy);

    // --- device (checked before the data is loaded, so a bad --device fails at once) ------------------
    impl_->ledger = std::make_shared<MemoryLedger>();
    impl_->host_ledger = std::make_shared<MemoryLedger>();
    std::string device_note;
    const std::string device = rank_device(c.device, env);
    const int threads = rank_threads(c.threads, world, device, env);  // CPU ranks share the cores
    impl_->backend = make_backend(device, threads, impl_->ledger, strategy.tf32, &device_note);
    if (world > 1) impl_->comm = run_communicator(*impl_->backend, c.rank_timeout);
    if (callbacks_.on_device) callbacks_.on_device({impl_->backend->device().str(), impl_->backend->name(), device_note});
    if (!device_note.empty()) log(LogLevel::info, device_note);
    if (strategy.tf32 && impl_->backend->device().is_cpu())
        log(LogLevel::info, "precision tf32 applies to GPU matrix units; on the CPU it computes in fp32");

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
    impl_->host_backend = make_cpu_backend(c.threads, impl_->host_ledger);
    Backend& be = *impl_->backend;
    const std::size_t limit = run_memory_limit(c, be);
    if (limit > 0)
        if (auto* cpu = dynamic_cast<CpuAllocator*>(&be.allocator())) cpu->set_limit(limit);
    std::unique_ptr<DataLoader> train_loader_ptr, test_loader_ptr;
    try {
        impl_->state = std::make_unique<TrainingState>(c.model, c.optimizer, strategy, c.seed, be, be.allocator(),
                                                       *impl_->host_backend, impl_->host_backend->allocator(),
                                                       false, impl_->comm.get());
        // several ranks: every rank shuffles alike and keeps its rows of each global batch; the last
        // incomplete batch of an epoch is dropped (every rank alike), so each step is a full batch split as
        // resolve_strategy says
        train_loader_ptr = std::make_unique<DataLoader>(train, c.batch, true, c.seed, world > 1, train.norm_mean,
                                                        train.norm_std, impl_->ledger.get(), 3,
                                                        strategy.sample_offset, world > 1 ? strategy.rank_batch : 0);
        // a test batch is eval_micro_batch rows of every rank: the same batches, and forwards, everywhere
        test_loader_ptr = std::make_unique<DataLoader>(test, strategy.eval_micro_batch * world, false, c.seed, false,
                                                       train.norm_mean, train.norm_std, impl_->ledger.get());
        if (limit > 0 && impl_->ledger->live_total() > limit)
            throw OutOfMemory("out of memory: the data loader's buffers pass the limit", 0, MemCategory::data, -1,
                              limit, impl_->ledger->snapshot());
    } catch (const OutOfMemory& e) {
        return setup_out_of_memory(e, c.model, be.name(), strategy);
    }
    TrainingState& st = *impl_->state;
    Model& model = st.model();
    const std::int64_t B = c.batch;
    const std::int64_t M = strategy.micro_batch;
    const int K = c.model.num_classes;
    const bool lowp = strategy.compute_dtype != DType::f32;

    DataLoader& train_loader = *train_loader_ptr;
    DataLoader& test_loader = *test_loader_ptr;
    const std::int64_t steps_per_epoch = train_loader.steps_per_epoch();
    const std::int64_t total_steps = c.steps > 0 ? c.steps : steps_per_epoch * c.epochs;
    const int total_epochs = static_cast<int>((total_steps + steps_per_epoch - 1) / steps_per_epoch);

    TrainResult result;
    result.device_name = be.name();
    result.param_count = model.param_count();
    result.train_samples = train.count;
    result.test_samples = test.count;
    result.data_source = impl_->data.source_dir;
    result.strategy = strategy.describe();
    log(LogLevel::info, "training " + c.model.name + " (" + std::to_string(model.param_count()) + " parameters) on " +
                            be.name() + ": " + std::to_string(train.count) + " samples, batch " + std::to_string(B) +
                            ", " + std::to_string(total_steps) + " steps, " + strategy.describe());
    const RunCursor start = begin_run_folder(st, total_steps, steps_per_epoch);  // train/resume.h
    result.resumed_from_step = resume_ ? start.step : -1;
    result.weights_notes = impl_->weights_notes;
    result.epochs = start.epochs;
    result.epochs_completed = start.epochs.empty() ? 0 : start.epochs.back().epoch;

    std::vector<float> onehot;
    // MSE's targets: one-hot rows [r0, r0 + n) of a host batch (both steps upload them)
    auto onehot_rows = [&](const Batch& b, std::int64_t r0, std::int64_t n) -> const float* {
        onehot.assign(static_cast<std::size_t>(n * K), 0.0f);
        for (std::int64_t i = 0; i < n; ++i) onehot[static_cast<std::size_t>(i * K + b.labels[r0 + i])] = 1.0f;
        return onehot.data();
    };
    // Uploads rows [r0, r0 + n) of a host batch into the micro-batch buffers; returns (x, labels) views.
    auto upload = [&](const Batch& b, std::int64_t r0, std::int64_t n) -> std::pair<Tensor, Tensor> {
        const std::int64_t per = shape_numel(c.model.input_shape);
        Tensor xs = st.x_staging.slice0(0, n);
        Tensor yb = st.labels.slice0(0, n);
        be.copy_from_host(b.images.data() + r0 * per, xs);
        be.copy_from_host(b.labels.data() + r0, yb);
        if (!lowp) return {xs, yb};
        Tensor xm = st.x_model.slice0(0, n);
        be.copy(xs, xm);
        return {xm, yb};
    };
    auto loss_of = [&](const Tensor& logits, const Tensor& labels, const Batch& b, std::int64_t r0, std::int64_t n,
                       Tensor grad, float grad_scale) -> LossResult {
        // the loss is read back on the host, after the collectives queued before it (zero3's gathers): wait
        // for those with the rank timeout first, so that a stalled peer ends the run instead of hanging it
        if (impl_->comm) impl_->comm->synchronize();
        if (c.model.loss.type == "mse") {
            Tensor ts = st.target_staging.slice0(0, n);
            be.copy_from_host(onehot_rows(b, r0, n), ts);
            Tensor tm = st.target_model.slice0(0, n);
            if (lowp) be.copy(ts, tm);
            return be.mse_loss(logits, tm, grad, grad_scale);
        }
        return be.softmax_cross_entropy(logits, labels, static_cast<float>(c.model.loss.label_smoothing), grad,
                                        grad_scale);
    };
    Communicator* comm = impl_->comm.get();
    const bool ranked = comm != nullptr || strategy.shard != ShardStage::none;
    auto evaluate = [&](double& loss, double& acc) {
        double loss_sum = 0;
        std::int64_t correct = 0, seen = 0;
        test_loader.start_epoch(0);
        Batch b;
        Tensor none;
        while (test_loader.next(b)) {
            if (stop_ && !comm) throw Cancelled();  // ranks decide stopping together, between steps
            // several ranks: each evaluates its part of every test batch; a rank whose part is empty still
            // runs one row (not counted), so every rank makes the same forwards (zero3 gathers in them)
            auto [lo, n] = rank_share(b.size, rank, world);
            const std::int64_t rows = n > 0 ? n : 1;
            if (n == 0) lo = 0;
            auto [xb, yb] = upload(b, lo, rows);
            Tensor logits = model.forward(xb, false);
            LossResult r = loss_of(logits, yb, b, lo, rows, none, 1.0f);
            if (n == 0) continue;
            loss_sum += r.loss * static_cast<double>(n);
            correct += r.correct;
            seen += n;
        }
        if (comm) {  // weighted by samples: sums over ranks
            loss_sum = comm->all_reduce_value(loss_sum, ReduceOp::sum);
            correct = static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(correct), ReduceOp::sum));
            seen = static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(seen), ReduceOp::sum));
        }
        loss = seen ? loss_sum / static_cast<double>(seen) : NAN;
        acc = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
    };

    // One step's micro-batches on one rank of several: this rank's rows of the global batch (the loader
    // hands out only those), `accumulate` pieces on every rank, each gradient scaled by its rows / the global
    // batch; the loss (mean over the global batch) and the correct rows are summed over ranks, so every
    // rank decides alike whether the step is finite.
    auto ranks_micro_steps = [&](const Batch& b, std::int64_t step, double& step_loss, std::int64_t& step_correct, bool& finite) {
        for (auto [r0, n] : strategy.micro_batches()) {
            impl_->ledger->set_phase("forward");
            auto [xb, yb] = upload(b, r0, n);
            Tensor logits = model.forward(xb, true, st.first_sample(step, r0));
            Tensor g = st.dlogits.slice0(0, n);
            LossResult r = loss_of(logits, yb, b, r0, n, g, st.loss_grad_scale(n));
            step_loss += r.loss * static_cast<double>(n) / static_cast<double>(B);
            step_correct += r.correct;
            impl_->ledger->set_phase("backward");
            model.backward(g);
        }
        step_loss = comm->all_reduce_value(step_loss, ReduceOp::sum);
        step_correct = static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(step_correct), ReduceOp::sum));
        finite = std::isfinite(step_loss);
    };

    const auto run_start = Clock::now();
    double train_seconds = start.train_seconds;
    std::int64_t samples_trained = start.samples_trained;
    std::int64_t step = start.step;
    double ips_smooth = 0;
    auto last_memory = Clock::now() - std::chrono::seconds(10);
    const double memory_interval = 1.0 / std::max(1, c.memory_events_per_second);
    const std::size_t capacity =
        be.device().is_cpu() ? host_memory_bytes() : device_total_bytes(be.device().str());
    auto emit_memory = [&](bool force) {
        if (!callbacks_.on_memory) return;
        if (!force && seconds_since(last_memory) < memory_interval) return;
        last_memory = Clock::now();
        callbacks_.on_memory({step, seconds_since(run_start), impl_->ledger->snapshot(), capacity});
    };
    emit_memory(true);
    impl_->ledger->reset_peaks();
    const CommStats comm_start = comm ? comm->stats() : CommStats{};

    // The step without host synchronisation (strategy/training_state.h, issue 20), on a GPU in one
    // process when the strategy allows it: uploads overlap the previous step, the loss and the finite
    // check stay on the device, and the figures come back through a ring a few steps later; a step of
    // one micro-batch without dropout is captured once as a CUDA graph and replayed. HEADROOM_DEVICE_STEP=1
    // takes this path on the CPU too (tests compare it with the host step), =0 never.
    const bool device_step = use_device_step(be, st, world, ranked);
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
        log(LogLevel::info, "the step runs on the device without waiting for it (its figures arrive up to " +
                                std::to_string(ring->slot_count()) + " steps later)" +
                                (st.graph_capturable() && M >= B && !be.device().is_cpu()
                                     ? "; a full step is captured as a CUDA graph"
                                     : ""));
    }

    try {
        for (int epoch = start.epoch; epoch <= total_epochs && step < total_steps; ++epoch) {
            const auto epoch_start = Clock::now();
            double epoch_train_seconds = 0;
            double loss_sum = 0;
            std::int64_t correct = 0, seen = 0;
            train_loader.start_epoch(epoch - 1);
            Batch b;
            std::int64_t step_in_epoch = 0;
            if (epoch == start.epoch && start.step_in_epoch > 0) {  // resumed mid-epoch: its batches so far
                while (step_in_epoch < start.step_in_epoch && train_loader.next(b)) ++step_in_epoch;
                loss_sum = start.loss_sum;
                correct = start.correct;
                seen = start.seen;
                epoch_train_seconds = start.epoch_train_seconds;
            }
            // device step: one step's figures back on the host, as the host step would have had them
            bool figures_failed = false;
            auto take_figures = [&](const StepFigures& f) {
                if (issued.empty() || issued.front().step != f.step)
                    throw Error("internal: the step figures arrived out of order (step " + std::to_string(f.step) + ")");
                const IssuedStep is = issued.front();
                issued.pop_front();
                if (figures_failed) return;
                if (f.bad_labels > 0)
                    throw Error(HR_MSG("train.bad_label",
                                       "label %1 in row %2 of step %3 is outside [0, %4): the data's labels do not "
                                       "match the model's classes; check num_classes and the data set"),
                                {std::to_string(f.bad_label), std::to_string(f.bad_row), std::to_string(f.step),
                                 std::to_string(K)});
                if (!std::isfinite(f.loss)) {
                    fill_loss_not_finite(result, f.loss, f.step, is.lr);
                    figures_failed = true;
                    return;
                }
                loss_sum += f.loss * static_cast<double>(is.rows);
                correct += f.correct;
                seen += is.rows;
                const double ips = is.seconds > 0 ? static_cast<double>(is.rows) / is.seconds : 0;
                ips_smooth = ips_smooth == 0 ? ips : 0.9 * ips_smooth + 0.1 * ips;
                if (callbacks_.on_step) {
                    StepEvent ev;
                    ev.step = f.step;
                    ev.total_steps = total_steps;
                    ev.epoch = is.epoch;
                    ev.step_in_epoch = is.step_in_epoch;
                    ev.steps_per_epoch = steps_per_epoch;
                    ev.loss = f.loss;
                    ev.accuracy = is.rows ? static_cast<double>(f.correct) / static_cast<double>(is.rows) : 0;
                    ev.lr = is.lr;
                    ev.step_seconds = is.seconds;
                    ev.images_per_second = ips_smooth;
                    ev.elapsed_seconds = seconds_since(run_start);
                    const double per_step = (train_seconds + epoch_train_seconds) / static_cast<double>(step);
                    ev.eta_seconds = per_step * static_cast<double>(total_steps - f.step);
                    ev.loss_scale = strategy.loss_scaling ? f.loss_scale : 0.0;
                    ev.skipped = f.skipped;
                    callbacks_.on_step(ev);
                }
            };
            // every step issued so far back on the host (before a checkpoint, the epoch's end, a stop)
            auto settle = [&] {
                if (!device_step) return;
                for (const StepFigures& f : ring->drain()) take_figures(f);
                st.sync_control_to_host();
                checkpoints_.note({step, epoch, step_in_epoch, total_steps, loss_sum, correct, seen,
                                   epoch_train_seconds, train_seconds, samples_trained, result.epochs});
            };
            while (step < total_steps && !figures_failed && train_loader.next(b)) {
                if (comm) {
                    agree_on_control(*comm, stop_, paused_);
                } else {
                    if (paused_ && !stop_) wait_while_paused();
                    if (stop_) {
                        settle();  // the device step: every issued step's figures, and the cursor to save
                        throw Cancelled();
                    }
                }
                if (snapshot_wanted_) take_snapshot(step);
                const auto t0 = Clock::now();
                const double lr = learning_rate_at(c.schedule, c.optimizer.lr, step, total_steps);
                impl_->ledger->set_step(step + 1);
                if (device_step) {
                    impl_->ledger->set_phase("forward");
                    const std::int64_t per = shape_numel(c.model.input_shape);
                    // the batch's uploads first (each waits only for the step that last read its landing
                    // buffer), then the step; a full step of one micro-batch replays the captured graph
                    const bool whole = b.size == B && M >= B;
                    st.begin_device_step(lr);
                    for (std::int64_t r0 = 0; r0 < b.size; r0 += M) {
                        const std::int64_t n = std::min(M, b.size - r0);
                        const float* target = c.model.loss.type == "mse" ? onehot_rows(b, r0, n) : nullptr;
                        st.upload_next(b.images.data() + r0 * per, b.labels.data() + r0, target, n);
                        st.take_upload(n);
                        if (whole && graph) {
                            graph->replay();
                        } else {
                            const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(b.size));
                            st.device_micro_step(n, share, static_cast<std::uint64_t>(step * B + r0));
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
                    samples_trained += b.size;
                    issued.push_back({step, step_in_epoch, b.size, epoch, lr, 0.0});
                    for (const StepFigures& f : ring->push(step, st.stats, st.control)) take_figures(f);
                    const double dt = seconds_since(t0);  // with the ring full, the device's pace
                    issued.back().seconds = dt;
                    epoch_train_seconds += dt;
                    StepFigures f;
                    while (ring->pop(f)) take_figures(f);
                    emit_memory(false);
                    if (checkpoints_.due(step, total_steps)) {
                        settle();
                        checkpoints_.after_step(st, {step, epoch, step_in_epoch, total_steps, loss_sum, correct, seen,
                                                     epoch_train_seconds, train_seconds, samples_trained, result.epochs});
                    }
                    continue;
                }
                if (ranked) st.begin_step();
                else model.zero_grad();
                // forward/backward per micro-batch; gradients accumulate (each scaled by its share of the
                // batch, so the sum equals the gradient of the mean loss over the whole batch)
                double step_loss = 0;
                std::int64_t step_correct = 0;
                bool finite = true;
                const std::int64_t global_rows = world > 1 ? B : b.size;  // the step's samples, all ranks
                if (world > 1) ranks_micro_steps(b, step, step_loss, step_correct, finite);
                else for (std::int64_t r0 = 0; r0 < b.size; r0 += M) {
                    const std::int64_t n = std::min(M, b.size - r0);
                    impl_->ledger->set_phase("forward");
                    auto [xb, yb] = upload(b, r0, n);
                    Tensor logits = model.forward(xb, true, static_cast<std::uint64_t>(step * B + r0));
                    Tensor g = st.dlogits.slice0(0, n);
                    const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(b.size));
                    LossResult r = loss_of(logits, yb, b, r0, n, g, share * st.loss_scale());
                    if (!std::isfinite(r.loss)) {
                        finite = false;
                        step_loss = r.loss;
                        break;
                    }
                    step_loss += r.loss * share;
                    step_correct += r.correct;
                    impl_->ledger->set_phase("backward");
                    model.backward(g);
                }
                if (!finite) {
                    fill_loss_not_finite(result, step_loss, step + 1, lr);
                    break;
                }
                impl_->ledger->set_phase("optimizer");
                const bool applied = st.optimizer_step(lr);
                const double dt = seconds_since(t0);
                ++step;
                ++step_in_epoch;
                samples_trained += global_rows;
                epoch_train_seconds += dt;
                loss_sum += step_loss * static_cast<double>(global_rows);
                correct += step_correct;
                seen += global_rows;
                const double ips = dt > 0 ? static_cast<double>(global_rows) / dt : 0;
                ips_smooth = ips_smooth == 0 ? ips : 0.9 * ips_smooth + 0.1 * ips;
                if (callbacks_.on_step) {
                    StepEvent ev;
                    ev.step = step;
                    ev.total_steps = total_steps;
                    ev.epoch = epoch;
                    ev.step_in_epoch = step_in_epoch;
                    ev.steps_per_epoch = steps_per_epoch;
                    ev.loss = step_loss;
                    ev.accuracy = global_rows ? static_cast<double>(step_correct) / static_cast<double>(global_rows) : 0;
                    ev.lr = lr;
                    ev.step_seconds = dt;
                    ev.images_per_second = ips_smooth;
                    ev.elapsed_seconds = seconds_since(run_start);
                    const double per_step = (train_seconds + epoch_train_seconds) / static_cast<double>(step);
                    ev.eta_seconds = per_step * static_cast<double>(total_steps - step);
                    ev.loss_scale = strategy.loss_scaling ? st.loss_scale() : 0.0;
                    ev.skipped = !applied;
                    callbacks_.on_step(ev);
                }
                emit_memory(false);
                checkpoints_.after_step(st, {step, epoch, step_in_epoch, total_steps, loss_sum, correct, seen,
                                             epoch_train_seconds, train_seconds, samples_trained, result.epochs});
            }
            settle();
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
            checkpoints_.after_epoch(result.epochs);
            if (callbacks_.on_epoch) callbacks_.on_epoch(ee);
            log(LogLevel::info, "epoch " + std::to_string(epoch) + ": train loss " + std::to_string(ee.train_loss) +
                                    ", test accuracy " + std::to_string(ee.test_accuracy));
        }
    } catch (const Cancelled&) {
        result.status = "stopped";
        log(LogLevel::info, "stopped at step " + std::to_string(step));
        checkpoints_.on_stop(st, result.epochs);
    } catch (const InputError&) {
        throw;
    } catch (const OutOfMemory& e) {  // during a step: the same account and advice as at setup
        fill_out_of_memory(result, e, c.model, be.name());
    } catch (const Error& e) {
        result.status = "failed";
        result.error = e.what();
        result.error_messages = {e.message()};
        log(LogLevel::info, e.what());  // in the result: the front end says it once
    }
    result.checkpoint = checkpoints_.last_path();
    result.steps = step;
    result.seconds = seconds_since(run_start);
    result.images_per_second = train_seconds > 0 ? static_cast<double>(samples_trained) / train_seconds : 0;
    result.skipped_steps = st.skipped_steps();
    result.final_loss_scale = strategy.loss_scaling ? st.loss_scale() : 0.0;
    impl_->ledger->set_phase("done");
    result.ledger = impl_->ledger->snapshot();
    result.host_ledger = impl_->host_ledger->snapshot();
    finish_ranks(result, comm_start);
    emit_memory(true);
    return result;
}

namespace {
// A safetensors file of named tensors (the consolidated state), as model_state_file writes one.
SafeTensorsFile state_file_of(const std::vector<NamedTensor>& named, Backend& be, const ModelSpec& spec) {
    SafeTensorsFile f;
    for (const auto& nt : named) {
        SafeTensor t;
        t.name = nt.name;
        t.dtype = nt.tensor.dtype();
        t.shape = nt.tensor.shape();
        t.data.resize(nt.tensor.nbytes());
        be.copy_to_host(nt.tensor, t.data.data());
        f.tensors.push_back(std::move(t));
    }
    f.metadata["format"] = "pt";
    f.metadata["producer"] = std::string("headroom ") + HEADROOM_VERSION;
    f.metadata["model_spec"] = model_spec_to_json(spec).dump();
    return f;
}
}  // namespace

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
    result.rank_batches = s.rank_batches;
    if (result.rank_batches.empty()) result.rank_batches = {s.batch};
    result.rank_peak_bytes = {result.ledger.peak_total};
    const std::int64_t resident = process_peak_resident_bytes();
    result.rank_resident_peak_bytes = {resident};
    const bool ranked = impl_->comm != nullptr || s.shard != ShardStage::none;
    if (!ranked) return;
    Communicator* comm = impl_->comm.get();
    // a resumed run's figures are of the steps it ran itself
    const std::int64_t ran = result.steps - std::max<std::int64_t>(0, result.resumed_from_step);
    if (comm && ran > 0) {
        const CommStats& now = comm->stats();
        // the training's traffic: the checkpoints' gathering is not part of a step
        result.communication_bytes_per_step =
            (now.bytes - start.bytes - checkpoints_.communication_bytes()) / static_cast<double>(ran);
        result.communication_seconds_per_step =
            (now.wait_seconds - start.wait_seconds - checkpoints_.communication_seconds()) / static_cast<double>(ran);
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
    }
    if (result.status == "failed") return;
    std::vector<NamedTensor> named = st.consolidated_state_dict(impl_->backend->allocator());
    if (s.rank == 0)  // the model's own spec (a language model's carries the run's sequence length)
        impl_->consolidated = std::make_unique<SafeTensorsFile>(state_file_of(named, *impl_->backend, st.model().spec()));
}

void Trainer::save_weights(const std::string& path, const std::string& run_json_text) const {
    if (!impl_->state) throw Error("no trained model to save: run() first");
    if (impl_->state->strategy().rank != 0) throw Error("only rank 0 writes the weights of a run on several ranks");
    SafeTensorsFile f = impl_->consolidated ? *impl_->consolidated : model_state_file(impl_->state->model());
    if (!run_json_text.empty()) f.metadata["run"] = run_json_text;
    if (impl_->tokenizer) {
        // the tokenizer goes next to the weights and is named in their metadata (generate finds it there)
        const std::string dir = std::filesystem::path(path).parent_path().string();
        f.metadata["tokenizer"] = impl_->tokenizer->kind();
        f.metadata["tokenizer_file"] = impl_->tokenizer->file_name();
        impl_->tokenizer->save(dir.empty() ? "." : dir);
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
    snap->tokenizer = impl_->tokenizer;
    if (impl_->tokenizer) snap->weights.metadata["tokenizer"] = impl_->tokenizer->kind();
    snap->step = step;
    {
        std::lock_guard<std::mutex> lock(snapshot_mutex_);
        impl_->snapshot = snap;
    }
    if (callbacks_.on_snapshot) callbacks_.on_snapshot(snap);
}

// ---- language models on text ---------------------------------------------------------------------------

namespace {
// A language model's run resumed: the tokenizer written into its folder when it started (byte has no file).
std::unique_ptr<Tokenizer> resumed_tokenizer(const std::string& kind, const std::string& dir) {
    if (kind != "byte") {
        const std::string file = (std::filesystem::path(dir) / (kind == "char" ? "tokenizer.json" : "tokenizer.model")).string();
        if (!std::filesystem::exists(file))
            throw InputError(HR_MSG("resume.no_tokenizer",
                                    "%1 is missing, so the run in %2 cannot go on with the same tokens; the folder was "
                                    "written by an older Headroom or changed: start the run again"),
                             {file, dir});
    }
    return load_tokenizer(kind, dir);
}

// --init-from for a language model. A GPT (nanoGPT layout) takes nanoGPT's names and Hugging Face GPT-2's
// (GPT2LMHeadModel or GPT2Model, Conv1D weights [in, out] transposed, mask buffers ignored, the tied head
// under either name: train/checkpoint.h load_model_state), with DDP's "module." prefix stripped; a file
// with other names is matched by order as for image models (train/resume.h load_weights_into).
WeightsMatch load_language_model_weights(Model& model, const std::string& path) {
    if (!is_gpt_layout(model.spec())) return load_weights_into(model, path);
    SafeTensorsFile file = read_safetensors(path);
    WeightsMatch m;
    if (!file.tensors.empty() && std::all_of(file.tensors.begin(), file.tensors.end(), [](const SafeTensor& t) {
            return t.name.rfind("module.", 0) == 0;
        })) {
        for (auto& t : file.tensors) t.name = t.name.substr(7);
        m.stripped_module = true;
    }
    auto in_file = [&](const std::string& name) {
        return file.find(name) || (name.rfind("transformer.", 0) == 0 && file.find(name.substr(12)));
    };
    const auto sd = model.state_dict();
    bool named = true;
    for (const auto& nt : sd) {
        if (nt.tied || in_file(nt.name)) continue;
        bool via_head = false;  // an embedding tied to a head: the head's copy will do
        for (const auto& other : sd) via_head = via_head || (other.tied && other.tensor.raw() == nt.tensor.raw() && in_file(other.name));
        named = named && via_head;
    }
    if (!named) return load_weights_into(model, path);
    load_model_state(model, file, path);
    return m;
}

// Several ranks: every rank reads the corpus and builds the tokenizer itself; they must hold the same tokens
// (a text file changed while they started would not). Compared by a 48-bit hash of each rank's tokens.
void check_same_tokens(Communicator& comm, const std::vector<std::int32_t>& train, const std::vector<std::int32_t>& valid) {
    std::uint64_t h = 1469598103934665603ull;
    for (const auto* v : {&train, &valid}) {
        h = (h ^ v->size()) * 1099511628211ull;
        for (std::int32_t t : *v) h = (h ^ static_cast<std::uint32_t>(t)) * 1099511628211ull;
    }
    const double mine = static_cast<double>(h >> 16);  // exact in a double
    const double hi = comm.all_reduce_value(mine, ReduceOp::max), lo = -comm.all_reduce_value(-mine, ReduceOp::max);
    if (hi != lo)
        throw InputError(HR_MSG("train.ranks_tokens_differ",
                                "the ranks read different text or built different tokenizers (%1 training tokens on "
                                "rank %2); give every rank the same --data file and --tokenizer, and do not change "
                                "the file while the run starts"),
                         {std::to_string(train.size()), std::to_string(comm.rank())});
}
}  // namespace

TrainResult Trainer::run_text(const ResolvedStrategy& strategy) {
    auto log = [this](LogLevel level, const std::string& msg) {
        if (callbacks_.on_log) callbacks_.on_log({level, msg});
    };
    const TrainConfig& c = config_;
    validate_tokenizer_spec(c.tokenizer);
    impl_->text_spec = c.model;
    apply_sequence_length(impl_->text_spec, c.seq);
    const ModelSpec& spec = impl_->text_spec;
    const std::int64_t T = spec.input_shape[0];
    const std::int64_t V = model_vocabulary(spec);

    // --- device -----------------------------------------------------------------------------------------
    impl_->ledger = std::make_shared<MemoryLedger>();
    impl_->host_ledger = std::make_shared<MemoryLedger>();
    std::string device_note;
    // several ranks (docs/distributed.md): this rank's device and share of the cores, the run's communicator
    const RankEnvironment env = rank_environment();
    const int world = strategy.world_size, rank = strategy.rank;
    const std::string device = rank_device(c.device, env);
    impl_->backend = make_backend(device, rank_threads(c.threads, world, device, env), impl_->ledger, strategy.tf32,
                                  &device_note);
    if (world > 1) impl_->comm = run_communicator(*impl_->backend, c.rank_timeout);
    Communicator* comm = impl_->comm.get();
    // the device line, as an image run says it (the window's Device label, the CLI's first line)
    if (callbacks_.on_device) callbacks_.on_device({impl_->backend->device().str(), impl_->backend->name(), device_note});
    if (!device_note.empty()) log(LogLevel::info, device_note);

    // --- text and tokens ------------------------------------------------------------------------------
    const auto t_data = Clock::now();
    TextCorpus corpus = load_text_corpus(c.data);
    // resumed: the run's own tokenizer from its folder (the same ids, even if the text changed since)
    impl_->tokenizer = resume_ ? resumed_tokenizer(c.tokenizer, run_dir_)
                               : make_tokenizer(c.tokenizer, c.tokenizer == "char" ? corpus.all_text() : corpus.train_text);
    const Tokenizer& tok = *impl_->tokenizer;
    if (tok.vocab_size() > V)
        throw InputError(HR_MSG("train.vocab_too_small",
                                "the %1 tokenizer has %2 tokens but model '%3' has a vocabulary of %4; set the token "
                                "embedding's and lm_head's vocab_size (and num_classes) to at least %2"),
                         {tok.kind(), std::to_string(tok.vocab_size()), spec.name, std::to_string(V)});
    impl_->train_tokens = tok.encode(corpus.train_text);
    impl_->validation_tokens = tok.encode(corpus.validation_text);
    if (c.train_limit > 0 && static_cast<std::int64_t>(impl_->train_tokens.size()) > c.train_limit)
        impl_->train_tokens.resize(static_cast<std::size_t>(c.train_limit));
    if (c.test_limit > 0 && static_cast<std::int64_t>(impl_->validation_tokens.size()) > c.test_limit)
        impl_->validation_tokens.resize(static_cast<std::size_t>(c.test_limit));
    log(LogLevel::info, corpus.spec + " from " + corpus.source + ": " + std::to_string(impl_->train_tokens.size()) +
                            " training and " + std::to_string(impl_->validation_tokens.size()) +
                            " validation tokens (" + tok.kind() + " tokenizer, " + std::to_string(tok.vocab_size()) +
                            " tokens) in " + std::to_string(seconds_since(t_data)) + " s");
    if (comm) check_same_tokens(*comm, impl_->train_tokens, impl_->validation_tokens);

    // --- engine ---------------------------------------------------------------------------------------
    impl_->host_backend = make_cpu_backend(c.threads, impl_->host_ledger);
    Backend& be = *impl_->backend;
    const std::size_t limit = run_memory_limit(c, be);
    if (limit > 0)
        if (auto* cpu = dynamic_cast<CpuAllocator*>(&be.allocator())) cpu->set_limit(limit);
    std::unique_ptr<TokenBatcher> train_batches, eval_batches;
    try {
        impl_->state = std::make_unique<TrainingState>(spec, c.optimizer, strategy, c.seed, be, be.allocator(),
                                                       *impl_->host_backend, impl_->host_backend->allocator(), false,
                                                       comm);
        // several ranks: this rank's rows of every global batch of windows, the same windows as one process
        train_batches = std::make_unique<TokenBatcher>(impl_->train_tokens, strategy.rank_batch, T, c.seed,
                                                       impl_->ledger.get(), "training", strategy.sample_offset, c.batch);
        eval_batches = std::make_unique<TokenBatcher>(impl_->validation_tokens, strategy.micro_batch, T, c.seed,
                                                      impl_->ledger.get(), "validation");
        if (limit > 0 && impl_->ledger->live_total() > limit)
            throw OutOfMemory("out of memory: the batch buffers pass the limit", 0, MemCategory::data, -1,
                              limit, impl_->ledger->snapshot());
    } catch (const OutOfMemory& e) {
        return setup_out_of_memory(e, spec, be.name(), strategy);
    }
    TrainingState& st = *impl_->state;
    Model& model = st.model();
    const std::int64_t B = c.batch;
    const std::int64_t steps_per_epoch = train_batches->steps_per_epoch();
    const std::int64_t total_steps = c.steps > 0 ? c.steps : steps_per_epoch * c.epochs;

    TrainResult result;
    result.device_name = be.name();
    result.param_count = model.param_count();
    result.train_samples = static_cast<std::int64_t>(impl_->train_tokens.size());
    result.test_samples = static_cast<std::int64_t>(impl_->validation_tokens.size());
    result.data_source = corpus.source;
    result.strategy = strategy.describe();
    result.tokenizer = tok.kind();
    result.vocab_size = tok.vocab_size();
    result.seq = T;
    // the run folder from the start: config.json, the tokenizer; resumed: the checkpoint's state (train/resume.h)
    const RunCursor start = begin_run_folder(st, total_steps, steps_per_epoch);
    if (!run_dir_.empty() && rank == 0) impl_->tokenizer->save(run_dir_);  // rank 0 writes the run's files
    result.resumed_from_step = resume_ ? start.step : -1;
    log(LogLevel::info, "training " + spec.name + " (" + std::to_string(model.param_count()) + " parameters) on " +
                            be.name() + ": batch " + std::to_string(B) + " x " + std::to_string(T) + " tokens, " +
                            std::to_string(total_steps) + " steps (" + std::to_string(steps_per_epoch) +
                            " per epoch), " + strategy.describe());

    // Copies rows [r0, r0 + n) of the batcher's windows into the micro-batch buffers.
    auto upload = [&](TokenBatcher& tb, std::int64_t r0, std::int64_t n) -> std::pair<Tensor, Tensor> {
        Tensor xs = st.x_staging.slice0(0, n), ys = st.labels.slice0(0, n);
        be.copy_from_host(tb.x().data() + r0 * T, xs);
        be.copy_from_host(tb.y().data() + r0 * T, ys);
        return {xs, ys};
    };
    auto evaluate = [&](std::int64_t step, int epoch) {
        const auto t0 = Clock::now();
        impl_->ledger->set_phase("evaluate");
        const std::int64_t windows = eval_batches->eval_windows(c.eval_tokens);
        double loss_sum = 0;
        std::int64_t correct = 0, seen = 0;
        // several ranks: each evaluates its part of every chunk of M x world windows; a rank whose part is
        // empty still runs one window (not counted), so every rank makes the same forwards (zero3 gathers)
        const std::int64_t chunk = strategy.eval_micro_batch * world;  // the same on every rank
        for (std::int64_t w = 0; w < windows; w += chunk) {
            if (stop_ && !comm) throw Cancelled();  // ranks decide stopping together, between steps
            auto [lo, n] = rank_share(std::min(chunk, windows - w), rank, world);
            const std::int64_t rows = eval_batches->eval_batch(n > 0 ? w + lo : w, n > 0 ? n : 1);
            auto [xs, ys] = upload(*eval_batches, 0, rows);
            Tensor logits = model.forward(xs, false);
            Tensor lv = logits.reshape({rows * T, V});
            if (comm) comm->synchronize();  // the loss is read back: wait for the collectives with the timeout
            const LossResult r = be.cross_entropy_inplace(lv, ys.reshape({rows * T}), false, 1.0f);
            if (n == 0) continue;
            loss_sum += r.loss * static_cast<double>(n * T);
            correct += r.correct;
            seen += n * T;
        }
        if (comm) {  // weighted by tokens: sums over ranks
            loss_sum = comm->all_reduce_value(loss_sum, ReduceOp::sum);
            correct = static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(correct), ReduceOp::sum));
            seen = static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(seen), ReduceOp::sum));
        }
        EvalEvent ev;
        ev.step = step;
        ev.epoch = epoch;
        ev.loss = seen ? loss_sum / static_cast<double>(seen) : NAN;
        ev.accuracy = seen ? static_cast<double>(correct) / static_cast<double>(seen) : NAN;
        ev.tokens = seen;
        ev.seconds = seconds_since(t0);
        result.evals.push_back(ev);
        if (callbacks_.on_eval) callbacks_.on_eval(ev);
        log(LogLevel::info, "step " + std::to_string(step) + ": validation loss " + std::to_string(ev.loss) +
                                " per token over " + std::to_string(seen) + " tokens");
        return ev;
    };

    const auto run_start = Clock::now();
    double train_seconds = start.train_seconds + start.epoch_train_seconds;  // this path counts the epoch in
    std::int64_t step = start.step;  // the data order and dropout are keyed on the step: nothing else to restore
    double sps_smooth = 0;
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
    const bool ranked = comm != nullptr || strategy.shard != ShardStage::none;
    // a snapshot copies this rank's parameters: whole weights except under zero3 on several ranks
    const bool snapshots = world == 1 || strategy.shard != ShardStage::zero3;

    int epoch = start.epoch;
    double epoch_loss = start.loss_sum, epoch_seconds = start.epoch_train_seconds;
    std::int64_t epoch_correct = start.correct, epoch_steps = start.step_in_epoch;
    result.epochs = start.epochs;
    result.epochs_completed = start.epochs.empty() ? 0 : start.epochs.back().epoch;
    auto epoch_start = Clock::now();
    try {
        while (step < total_steps) {
            if (comm) {
                agree_on_control(*comm, stop_, paused_);
            } else {
                if (stop_) throw Cancelled();
                if (paused_) wait_while_paused();
                if (stop_) throw Cancelled();
            }
            if (snapshot_wanted_ && snapshots) take_snapshot(step);
            const auto t0 = Clock::now();
            const double lr = learning_rate_at(c.schedule, c.optimizer.lr, step, total_steps);
            impl_->ledger->set_step(step + 1);
            train_batches->random_batch(step);  // this rank's rows of the step's windows
            if (ranked) st.begin_step();
            else model.zero_grad();
            double step_loss = 0;
            std::int64_t step_correct = 0;
            bool finite = true;
            // this rank's micro-batches (the same count on every rank), each gradient scaled by its rows / the
            // global batch; dropout keyed on the run-wide window index, so N ranks equal one process
            for (auto [r0, n] : strategy.micro_batches()) {
                impl_->ledger->set_phase("forward");
                auto [xs, ys] = upload(*train_batches, r0, n);
                Tensor logits = model.forward(xs, true, st.first_sample(step, r0));
                const float share = static_cast<float>(static_cast<double>(n) / static_cast<double>(B));
                // the gradient of the mean token loss overwrites the logits (no second (n, T, V) buffer)
                Tensor lv = logits.reshape({n * T, V});
                if (comm) comm->synchronize();  // as above: a stalled peer ends the run within the timeout
                const LossResult r = be.cross_entropy_inplace(lv, ys.reshape({n * T}), true, st.loss_grad_scale(n));
                if (!comm && !std::isfinite(r.loss)) {  // ranks finish the step alike and decide together
                    finite = false;
                    step_loss = r.loss;
                    break;
                }
                step_loss += r.loss * share;
                step_correct += r.correct;
                impl_->ledger->set_phase("backward");
                model.backward(logits);
            }
            if (comm) {  // the global batch's mean loss and correct tokens: every rank decides alike
                step_loss = comm->all_reduce_value(step_loss, ReduceOp::sum);
                step_correct =
                    static_cast<std::int64_t>(comm->all_reduce_value(static_cast<double>(step_correct), ReduceOp::sum));
                finite = std::isfinite(step_loss);
            }
            if (!finite) {
                fill_loss_not_finite(result, step_loss, step + 1, lr);
                break;
            }
            impl_->ledger->set_phase("optimizer");
            const bool applied = st.optimizer_step(lr);
            const double dt = seconds_since(t0);
            ++step;
            train_seconds += dt;
            epoch_seconds += dt;
            epoch_loss += step_loss;
            epoch_correct += step_correct;
            ++epoch_steps;
            const double sps = dt > 0 ? static_cast<double>(B) / dt : 0;
            sps_smooth = sps_smooth == 0 ? sps : 0.9 * sps_smooth + 0.1 * sps;
            if (callbacks_.on_step) {
                StepEvent ev;
                ev.step = step;
                ev.total_steps = total_steps;
                ev.epoch = epoch;
                ev.step_in_epoch = epoch_steps;
                ev.steps_per_epoch = steps_per_epoch;
                ev.loss = step_loss;
                ev.accuracy = static_cast<double>(step_correct) / static_cast<double>(B * T);
                ev.lr = lr;
                ev.step_seconds = dt;
                ev.images_per_second = sps_smooth;
                ev.tokens_per_second = sps_smooth * static_cast<double>(T);
                ev.elapsed_seconds = seconds_since(run_start);
                ev.eta_seconds = train_seconds / static_cast<double>(step) * static_cast<double>(total_steps - step);
                ev.loss_scale = strategy.loss_scaling ? st.loss_scale() : 0.0;
                ev.skipped = !applied;
                ev.grad_norm = st.last_grad_norm();
                callbacks_.on_step(ev);
            }
            emit_memory(false);
            checkpoints_.after_step(st, {step, epoch, epoch_steps, total_steps, epoch_loss, epoch_correct, epoch_steps * B * T,
                                         epoch_seconds, train_seconds - epoch_seconds, step * B, result.epochs});
            const bool last = step >= total_steps;
            if (c.eval_every > 0 && step % c.eval_every == 0 && !last) evaluate(step, epoch);
            if (step % steps_per_epoch == 0 || last) {
                EpochEvent ee;
                ee.epoch = epoch;
                ee.step = step;
                ee.train_loss = epoch_loss / static_cast<double>(epoch_steps);
                ee.train_accuracy = static_cast<double>(epoch_correct) / static_cast<double>(epoch_steps * B * T);
                ee.images_per_second = epoch_seconds > 0 ? static_cast<double>(epoch_steps * B) / epoch_seconds : 0;
                ee.tokens_per_second = ee.images_per_second * static_cast<double>(T);
                ee.test_loss = NAN;
                ee.test_accuracy = NAN;
                if (last || (c.evaluate_each_epoch && c.eval_every == 0)) {
                    const EvalEvent ev = evaluate(step, epoch);
                    ee.test_loss = ev.loss;
                    ee.test_accuracy = ev.accuracy;
                }
                ee.seconds = seconds_since(epoch_start);
                result.epochs.push_back(ee);
                result.epochs_completed = epoch;
                result.train_loss = ee.train_loss;
                result.train_accuracy = ee.train_accuracy;
                if (!result.evals.empty()) {
                    result.test_loss = result.evals.back().loss;
                    result.test_accuracy = result.evals.back().accuracy;
                }
                checkpoints_.after_epoch(result.epochs);
                if (callbacks_.on_epoch) callbacks_.on_epoch(ee);
                ++epoch;
                epoch_loss = 0;
                epoch_seconds = 0;
                epoch_correct = 0;
                epoch_steps = 0;
                epoch_start = Clock::now();
            }
        }
    } catch (const Cancelled&) {
        result.status = "stopped";
        log(LogLevel::info, "stopped at step " + std::to_string(step));
        checkpoints_.on_stop(st, result.epochs);
    } catch (const InputError&) {
        throw;
    } catch (const OutOfMemory& e) {  // during a step: the same account and advice as at setup
        fill_out_of_memory(result, e, spec, be.name());
    } catch (const Error& e) {
        result.status = "failed";
        result.error = e.what();
        result.error_messages = {e.message()};
        log(LogLevel::info, e.what());  // in the result: the front end says it once
    }
    if (result.status == "stopped" && epoch_steps > 0) {
        result.train_loss = epoch_loss / static_cast<double>(epoch_steps);
        result.train_accuracy = static_cast<double>(epoch_correct) / static_cast<double>(epoch_steps * B * T);
    }
    if ((snapshot_wanted_ || callbacks_.on_snapshot) && snapshots) take_snapshot(step);  // the final weights, for a Sample panel
    result.checkpoint = checkpoints_.last_path();
    result.steps = step;
    result.seconds = seconds_since(run_start);
    result.images_per_second = train_seconds > 0 ? static_cast<double>(step * B) / train_seconds : 0;
    result.tokens_per_second = result.images_per_second * static_cast<double>(T);
    result.skipped_steps = st.skipped_steps();
    result.final_loss_scale = strategy.loss_scaling ? st.loss_scale() : 0.0;
    impl_->ledger->set_phase("done");
    result.ledger = impl_->ledger->snapshot();
    result.host_ledger = impl_->host_ledger->snapshot();
    finish_ranks(result, comm_start);  // the run's distributed fields, the consolidated weights (rank 0)
    emit_memory(true);
    return result;
}



// ---- run folder: checkpoints, resume, --init-from (train/resume.h) ----------------------------------------

void Trainer::set_run_folder(const std::string& dir, bool resume) {
    run_dir_ = dir;
    resume_ = resume && !dir.empty();
}

RunCursor Trainer::begin_run_folder(TrainingState& st, std::int64_t total_steps, std::int64_t steps_per_epoch) {
    auto log = [this](LogLevel level, const std::string& msg) {
        if (callbacks_.on_log) callbacks_.on_log({level, msg});
    };
    const TrainConfig& c = config_;
    RunCursor start;
    start.total_steps = total_steps;
    // Several ranks: rank 0 alone has the run folder (the others write nothing, train/resume.h); every
    // rank learns from it whether there is one and whether the run resumes, so all take the same path.
    Communicator* comm = st.communicator();
    const bool ranks = comm && comm->world_size() > 1;
    const bool root = st.strategy().rank == 0;
    bool folder = !run_dir_.empty(), resume = resume_;
    if (ranks) {
        const int v = static_cast<int>(comm->all_reduce_value(root ? (folder ? 1.0 : 0.0) + (resume ? 2.0 : 0.0) : 0.0,
                                                              ReduceOp::max));
        folder = (v & 1) != 0;
        resume = (v & 2) != 0;
        resume_ = resume;
    }
    if (!c.init_from.empty() && !resume) {
        const WeightsMatch m = is_token_model(c.model) ? load_language_model_weights(st.model(), c.init_from)  // lmranks
                                                       : load_weights_into(st.model(), c.init_from);
        st.sync_master_from_params();
        impl_->weights_notes = describe_weights_match(m);
        for (const auto& line : impl_->weights_notes) log(LogLevel::info, line);
        log(LogLevel::info, "initial weights from " + c.init_from);
    }
    if (resume) {
        // rank 0 reads the folder and checks the checkpoint against this run before anything changes;
        // every rank gets its verdict, then the checkpoint (broadcast), and takes its part of it
        Checkpoint ck;
        std::exception_ptr refused;
        if (root) {
            try {
                ck = read_latest_checkpoint(run_dir_);
                if (ck.seed != c.seed)
                    throw InputError(HR_MSG("resume.seed", "%1 was written with seed %2 but the run's config.json has seed %3; "
                                                           "the folder is inconsistent: start the run again"),
                                     {ck.path, std::to_string(ck.seed), std::to_string(c.seed)});
                if (ck.cursor.step >= total_steps)
                    throw InputError(HR_MSG("resume.already_done",
                                            "the run in %1 has already trained %2 steps, and the length asked for is %3 steps; "
                                            "give a longer --steps or --epochs to continue it"),
                                     {run_dir_, std::to_string(ck.cursor.step), std::to_string(total_steps)});
                check_checkpoint(st, ck, ck.path);
            } catch (const Error&) {
                refused = std::current_exception();
            }
        }
        if (ranks && !all_ranks_agree(*comm, !refused) && !refused)
            throw InputError(HR_MSG("resume.rank0_refused",
                                    "rank 0 could not resume the run from its folder; its message says why"));
        if (refused) std::rethrow_exception(refused);
        if (ranks) broadcast_checkpoint(st, ck);
        restore_checkpoint(st, ck, ck.path);
        if (ranks && ck.world_size != comm->world_size())
            log(LogLevel::info, "the checkpoint was written on " + std::to_string(ck.world_size) + " rank(s); it goes on on " +
                                    std::to_string(comm->world_size()));
        else if (!ranks && ck.world_size > 1)
            log(LogLevel::info, "the checkpoint was written on " + std::to_string(ck.world_size) + " ranks; it goes on as one process");
        std::error_code ec;  // the folder is a run in progress again (run.json comes last, at the end)
        if (!run_dir_.empty()) std::filesystem::remove(std::filesystem::path(run_dir_) / "run.json", ec);
        start = ck.cursor;
        if (start.step_in_epoch >= steps_per_epoch) {  // written at the end of an epoch: the next one
            start.train_seconds += start.epoch_train_seconds;
            start.epoch += 1;
            start.step_in_epoch = 0;
            start.loss_sum = 0;
            start.correct = start.seen = 0;
            start.epoch_train_seconds = 0;
        }
        start.epochs.erase(std::remove_if(start.epochs.begin(), start.epochs.end(),
                                          [&](const EpochEvent& e) { return e.epoch >= start.epoch; }),
                           start.epochs.end());
        log(LogLevel::info, "resuming from " + ck.path + ": step " + std::to_string(ck.cursor.step) + " of " +
                                std::to_string(total_steps) + " (epoch " + std::to_string(start.epoch) + ")");
        if (c.schedule.kind == "cosine" && ck.cursor.total_steps != total_steps)
            log(LogLevel::warning, "the cosine learning-rate schedule depends on the run's length: with " +
                                       std::to_string(total_steps) + " steps instead of " +
                                       std::to_string(ck.cursor.total_steps) + " it changes from step " +
                                       std::to_string(ck.cursor.step + 1) + " on");
        start.total_steps = total_steps;
    }
    if (!run_dir_.empty()) write_run_config(run_dir_, c);  // rank 0 (or the one process) only
    if (folder)
        checkpoints_.configure(run_dir_, c, [log](const std::string& m) { log(LogLevel::warning, m); },
                               ranks ? comm : nullptr);
    return start;
}

}  // namespace hr
