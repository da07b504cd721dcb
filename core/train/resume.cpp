#include "train/resume.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "base/atomic_file.h"
#include "base/error.h"
#include "dist/communicator.h"
#include "nn/model_spec.h"
#include "strategy/training_state.h"
#include "train/checkpoint.h"
#include "train/record_json.h"

namespace hr {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kCheckpointVersion = 1;

std::string read_text(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(HR_MSG("resume.cannot_read", "cannot read %1; check that the run folder is complete"), {path});
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

std::string checkpoint_stem(const std::string& dir, std::int64_t step) {
    char name[64];
    std::snprintf(name, sizeof name, "checkpoint-%09lld", static_cast<long long>(step));
    return (fs::path(dir) / name).string();
}

// Steps of the complete checkpoints in dir (their .json exists), oldest first.
std::vector<std::int64_t> checkpoint_steps(const std::string& dir) {
    std::vector<std::int64_t> steps;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.size() != 25 || n.rfind("checkpoint-", 0) != 0 || n.substr(20) != ".json") continue;
        const std::string digits = n.substr(11, 9);
        if (!std::all_of(digits.begin(), digits.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
            continue;
        steps.push_back(std::stoll(digits));
    }
    std::sort(steps.begin(), steps.end());
    return steps;
}

[[noreturn]] void bad_field(const std::string& where, const std::string& field) {
    throw InputError(HR_MSG("resume.bad_field",
                            "%1: field '%2' is missing or out of range; the checkpoint is damaged: resume from the "
                            "one before it (delete this one) or start the run again"),
                     {where, field});
}

template <typename T>
T int_field(const json& j, const char* key, std::int64_t lo, std::int64_t hi, const std::string& where) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number_integer()) bad_field(where, key);
    if (j[key].is_number_unsigned() && j[key].get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) bad_field(where, key);
    const std::int64_t v = j[key].get<std::int64_t>();
    if (v < lo || v > hi) bad_field(where, key);
    return static_cast<T>(v);
}

double real_field(const json& j, const char* key, double lo, double hi, const std::string& where, bool null_ok = false) {
    if (!j.is_object() || !j.contains(key)) bad_field(where, key);
    if (null_ok && j[key].is_null()) return NAN;
    if (!j[key].is_number()) bad_field(where, key);
    const double v = j[key].get<double>();
    if (!std::isfinite(v) || v < lo || v > hi) bad_field(where, key);
    return v;
}

}  // namespace

std::string run_config_path(const std::string& dir) { return (fs::path(dir) / "config.json").string(); }

void write_run_config(const std::string& dir, const TrainConfig& config) {
    fs::create_directories(dir);
    write_file_atomic(run_config_path(dir), train_config_to_json(config).dump(2) + "\n");
}

TrainConfig read_run_config(const std::string& dir) {
    const std::string path = run_config_path(dir);
    if (!fs::exists(path))
        throw InputError(HR_MSG("resume.no_config",
                                "%1 has no config.json, so it is not a Headroom run folder (or was written before "
                                "runs could be resumed); give the folder a run was trained into (--out)"),
                         {dir});
    json j;
    try {
        j = json::parse(read_text(path));
    } catch (const json::exception& e) {
        throw InputError(HR_MSG("resume.config_json", "%1 is not valid JSON (%2); the run folder is damaged"),
                         {path, e.what()});
    }
    return train_config_from_json(j);
}

bool has_checkpoint(const std::string& dir) { return !checkpoint_steps(dir).empty(); }

Checkpoint parse_checkpoint_json(const std::string& text, const std::string& where) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw InputError(HR_MSG("resume.checkpoint_json", "%1 is not valid JSON (%2); the checkpoint is damaged"),
                         {where, e.what()});
    }
    if (!j.is_object()) bad_field(where, "(the file)");
    Checkpoint ck;
    if (int_field<int>(j, "version", 1, 1000, where) > kCheckpointVersion)
        throw InputError(HR_MSG("resume.newer_version",
                                "%1 was written by a newer Headroom (checkpoint version %2); resume it with that "
                                "version"),
                         {where, std::to_string(j["version"].get<std::int64_t>())});
    RunCursor& c = ck.cursor;
    c.step = int_field<std::int64_t>(j, "step", 0, kMaxSteps, where);
    c.epoch = int_field<int>(j, "epoch", 1, kMaxEpochs + 1, where);
    c.step_in_epoch = int_field<std::int64_t>(j, "step_in_epoch", 0, c.step, where);
    c.total_steps = int_field<std::int64_t>(j, "total_steps", 0, kMaxSteps, where);
    c.loss_sum = real_field(j, "epoch_loss_sum", -1e300, 1e300, where);
    c.correct = int_field<std::int64_t>(j, "epoch_correct", 0, std::int64_t{1} << 60, where);
    c.seen = int_field<std::int64_t>(j, "epoch_seen", 0, std::int64_t{1} << 60, where);
    if (c.correct > c.seen) bad_field(where, "epoch_correct");
    c.epoch_train_seconds = real_field(j, "epoch_train_seconds", 0, 1e12, where);
    c.train_seconds = real_field(j, "train_seconds", 0, 1e12, where);
    c.samples_trained = int_field<std::int64_t>(j, "samples_trained", 0, std::int64_t{1} << 60, where);
    ck.loss_scale = real_field(j, "loss_scale", 1e-30, 1e30, where);
    ck.good_steps = int_field<std::int64_t>(j, "good_steps", 0, kMaxSteps, where);
    ck.skipped_steps = int_field<std::int64_t>(j, "skipped_steps", 0, c.step, where);
    ck.optimizer_steps = int_field<std::int64_t>(j, "optimizer_steps", 0, c.step, where);
    if (!j.contains("seed") || !j["seed"].is_number_unsigned()) {
        if (!(j.contains("seed") && j["seed"].is_number_integer() && j["seed"].get<std::int64_t>() >= 0)) bad_field(where, "seed");
    }
    ck.seed = j["seed"].get<std::uint64_t>();
    if (j.contains("world_size")) ck.world_size = int_field<int>(j, "world_size", 1, 1 << 20, where);  // absent: one process
    if (!j.contains("epochs") || !j["epochs"].is_array() || j["epochs"].size() > static_cast<std::size_t>(kMaxEpochs))
        bad_field(where, "epochs");
    for (const json& e : j["epochs"]) {
        // a damaged line is refused by name here; its values are read by the epoch's one reader
        // (train/record_json.h, whose writer wrote it)
        int_field<int>(e, "epoch", 1, kMaxEpochs, where);
        int_field<std::int64_t>(e, "step", 0, kMaxSteps, where);
        real_field(e, "train_loss", -1e300, 1e300, where, true);
        real_field(e, "train_accuracy", 0, 1, where, true);
        real_field(e, "test_loss", -1e300, 1e300, where, true);
        real_field(e, "test_accuracy", 0, 1, where, true);
        real_field(e, "seconds", 0, 1e12, where, true);
        real_field(e, "images_per_second", 0, 1e15, where, true);
        if (e.contains("tokens_per_second")) real_field(e, "tokens_per_second", 0, 1e15, where, true);  // since issue 55
        c.epochs.push_back(e.get<EpochEvent>());
    }
    return ck;
}

Checkpoint read_latest_checkpoint(const std::string& dir) {
    Checkpoint ck = read_latest_checkpoint_json(dir);
    ck.tensors = read_safetensors(ck.path.substr(0, ck.path.size() - 5) + ".safetensors");
    return ck;
}

Checkpoint read_latest_checkpoint_json(const std::string& dir) {
    const std::vector<std::int64_t> steps = checkpoint_steps(dir);
    if (steps.empty())
        throw InputError(HR_MSG("resume.no_checkpoint",
                                "%1 holds no checkpoint (checkpoint-STEP.json), so there is nothing to resume; the run "
                                "ended before its first checkpoint (--save-every): start it again"),
                         {dir});
    const std::string stem = checkpoint_stem(dir, steps.back());
    Checkpoint ck = parse_checkpoint_json(read_text(stem + ".json"), stem + ".json");
    if (ck.cursor.step != steps.back()) bad_field(stem + ".json", "step");
    ck.path = stem + ".json";
    return ck;
}

void check_checkpoint(const TrainingState& state, const Checkpoint& ck, const std::string& where) {
    const std::string tensors_path = where.size() > 5 ? where.substr(0, where.size() - 5) + ".safetensors" : where;
    const std::vector<TrainingState::CheckpointTensor> want = state.checkpoint_tensors();
    // the master copy and optimizer state must be this configuration's (model.* names are the model's)
    for (const SafeTensor& t : ck.tensors.tensors) {
        if (t.name.rfind("model.", 0) == 0) continue;
        if (state.fp32_master(t.name)) continue;  // (offload's f32 master: the parameters again)
        bool known = false;
        for (const auto& e : want) known = known || e.name == t.name;
        if (!known)
            throw InputError(HR_MSG("resume.unexpected_tensor",
                                    "%1: unexpected tensor '%2'; the checkpoint was written for another "
                                    "configuration (optimizer or precision) than the run's config.json"),
                             {tensors_path, t.name});
    }
    for (const auto& e : want) {
        const SafeTensor* t = ck.tensors.find(e.name);
        if (!t && e.tied) continue;  // the token embedding's weight is enough
        if (!t && state.fp32_master(e.name)) continue;  // made from the parameters
        if (!t)
            throw InputError(HR_MSG("resume.missing_tensor",
                                    "%1: tensor '%2' is missing; the checkpoint was written for another configuration "
                                    "(optimizer or precision) than the run's config.json"),
                             {tensors_path, e.name});
        // a checkpoint is exact: the run's dtype and shape (the shape of the master copy and optimizer
        // state is one process's flat layout, the same on any number of ranks)
        if (t->shape != e.shape || t->dtype != e.dtype ||
            t->data.size() != static_cast<std::size_t>(shape_numel(e.shape)) * dtype_size(e.dtype))
            throw InputError(HR_MSG("resume.tensor_mismatch",
                                    "%1: tensor '%2' is %3 %4 but the run needs %5 %6; the checkpoint was written for "
                                    "another configuration than the run's config.json"),
                             {tensors_path, e.name, dtype_name(t->dtype), shape_str(t->shape), dtype_name(e.dtype),
                              shape_str(e.shape)});
    }
}

void restore_checkpoint(TrainingState& state, const Checkpoint& ck, const std::string& where) {
    check_checkpoint(state, ck, where);
    state.restore_checkpoint([&](const std::string& name) -> const std::uint8_t* {
        const SafeTensor* t = ck.tensors.find(name);
        return t ? t->data.data() : nullptr;
    });
    state.restore_scalars({ck.loss_scale, ck.good_steps, ck.skipped_steps, ck.optimizer_steps});
}

void broadcast_checkpoint(TrainingState& state, Checkpoint& ck) {
    Communicator* comm = state.communicator();
    if (!comm || comm->world_size() <= 1) return;
    const bool root = comm->rank() == 0;
    // the JSON part as rank 0 read it (the same cursor on every rank)
    std::string text = root ? read_text(ck.path) : std::string();
    const auto n = static_cast<std::size_t>(comm->all_reduce_value(root ? static_cast<double>(text.size()) : 0.0, ReduceOp::max));
    text.resize(n);
    state.broadcast_bytes(reinterpret_cast<std::uint8_t*>(text.data()), n);
    const std::string where = root ? ck.path : std::string("rank 0's checkpoint");
    if (!root) {
        ck = parse_checkpoint_json(text, where);
        ck.path = where;
    }
    // the tensors the run needs, in the order every rank knows (checked on rank 0: present, this shape)
    SafeTensorsFile all;
    for (const auto& e : state.checkpoint_tensors()) {
        const SafeTensor* have = root ? ck.tensors.find(e.name) : nullptr;
        const double present = comm->all_reduce_value(root && have ? 1.0 : 0.0, ReduceOp::max);
        if (present < 1) continue;  // a tied head rank 0's file does not hold
        SafeTensor t;
        if (root) {
            t = *have;
        } else {
            t.name = e.name;
            t.dtype = e.dtype;
            t.shape = e.shape;
            t.data.resize(static_cast<std::size_t>(shape_numel(e.shape)) * dtype_size(e.dtype));
        }
        state.broadcast_bytes(t.data.data(), t.data.size());
        all.tensors.push_back(std::move(t));
    }
    ck.tensors = std::move(all);
}

std::string write_checkpoint(const std::string& dir, TrainingState& state, const RunCursor& c, std::uint64_t seed,
                             int keep) {
    // every rank: the whole tensors, gathered from the shards (collective on several ranks); rank 0 writes each
    // as it comes, so that it holds one tensor (or one state buffer's flat copy) at a time, not the checkpoint.
    // A failure on rank 0 is kept until the walk ends: the other ranks are in its collectives.
    const bool root = state.strategy().rank == 0;
    std::optional<SafeTensorsStream> out;
    std::exception_ptr failed;
    auto attempt = [&](const auto& f) {
        if (failed) return;
        try {
            f();
        } catch (...) {
            failed = std::current_exception();
        }
    };
    const std::string stem = checkpoint_stem(dir, c.step);
    if (root)
        attempt([&] {
            fs::create_directories(dir);
            SafeTensorsFile layout;
            for (const TrainingState::CheckpointTensor& e : state.checkpoint_tensors()) {
                SafeTensor t;
                t.name = e.name;
                t.dtype = e.dtype;
                t.shape = e.shape;
                layout.tensors.push_back(std::move(t));
            }
            layout.metadata["format"] = "pt";
            layout.metadata["producer"] = std::string("headroom ") + HEADROOM_VERSION;
            layout.metadata["model_spec"] = model_spec_to_json(state.model().spec()).dump();
            out.emplace(stem + ".safetensors", layout);
        });
    state.gather_checkpoint([&](const std::string& name, DType, const Shape&, const std::uint8_t* bytes, std::size_t n) {
        attempt([&] { out->append(name, bytes, n); });
    });
    if (!root) return {};
    if (failed) std::rethrow_exception(failed);
    out->commit();
    const TrainingState::ResumeScalars s = state.resume_scalars();
    json epochs = json::array();
    for (const auto& e : c.epochs) epochs.push_back(json(e));
    json j = {{"version", kCheckpointVersion},
              {"step", c.step},
              {"epoch", c.epoch},
              {"step_in_epoch", c.step_in_epoch},
              {"total_steps", c.total_steps},
              {"epoch_loss_sum", c.loss_sum},
              {"epoch_correct", c.correct},
              {"epoch_seen", c.seen},
              {"epoch_train_seconds", c.epoch_train_seconds},
              {"train_seconds", c.train_seconds},
              {"samples_trained", c.samples_trained},
              {"loss_scale", s.loss_scale},
              {"good_steps", s.good_steps},
              {"skipped_steps", s.skipped},
              {"optimizer_steps", s.optimizer_steps},
              {"seed", seed},
              {"world_size", state.strategy().world_size},
              {"shard", shard_stage_name(state.strategy().shard)},
              {"tensors", fs::path(stem + ".safetensors").filename().string()},
              {"epochs", epochs}};
    write_file_atomic(stem + ".json", j.dump(1) + "\n");  // last: the checkpoint is complete
    // the newest `keep` stay (json first: a checkpoint without its json is not one)
    const std::vector<std::int64_t> steps = checkpoint_steps(dir);
    for (std::size_t i = 0; i + static_cast<std::size_t>(std::max(1, keep)) < steps.size(); ++i) {
        const std::string old = checkpoint_stem(dir, steps[i]);
        std::error_code ec;
        fs::remove(old + ".json", ec);
        fs::remove(old + ".safetensors", ec);
    }
    return stem + ".json";
}

void parse_save_every(const std::string& text, std::int64_t& steps, double& seconds) {
    auto bad = [&] {
        throw InputError(HR_MSG("resume.save_every",
                                "--save-every expects a number of steps (500) or of minutes (10m) or seconds (30s), "
                                "got '%1'"),
                         {text});
    };
    if (text.empty() || text.size() > 15) bad();
    const char unit = text.back();
    const bool timed = unit == 'm' || unit == 's' || unit == 'h';
    const std::string digits = timed ? text.substr(0, text.size() - 1) : text;
    if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }))
        bad();
    const std::int64_t n = std::stoll(digits);
    if (n < 1 || n > kMaxSteps) bad();
    if (timed) {
        steps = 0;
        seconds = static_cast<double>(n) * (unit == 'h' ? 3600 : unit == 'm' ? 60 : 1);
    } else {
        steps = n;
    }
}

// ---- weights in -------------------------------------------------------------------------------------------

namespace {

// "conv10.weight" -> ("conv10", "weight")
std::pair<std::string, std::string> split_name(const std::string& n) {
    const auto dot = n.rfind('.');
    if (dot == std::string::npos) return {"", n};
    return {n.substr(0, dot), n.substr(dot + 1)};
}

int kind_rank(const std::string& k) {
    static const char* order[] = {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"};
    for (int i = 0; i < 5; ++i)
        if (k == order[i]) return i;
    return 5;
}

// Natural order: digit runs compare as numbers ("fc2" < "fc10", "3" < "10").
bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
        if (da && db) {
            std::size_t i2 = i, j2 = j;
            while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
            while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
            std::string na = a.substr(i, i2 - i), nb = b.substr(j, j2 - j);
            na.erase(0, std::min(na.find_first_not_of('0'), na.size()));
            nb.erase(0, std::min(nb.find_first_not_of('0'), nb.size()));
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = i2;
            j = j2;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

bool module_order_less(const SafeTensor* x, const SafeTensor* y) {
    auto [mx, kx] = split_name(x->name);
    auto [my, ky] = split_name(y->name);
    if (mx != my) return natural_less(mx, my);
    if (kind_rank(kx) != kind_rank(ky)) return kind_rank(kx) < kind_rank(ky);
    return kx < ky;
}

}  // namespace

WeightsMatch load_weights_into(Model& model, const std::string& path) {
    return load_weights_into(model, read_safetensors(path), path);
}

WeightsMatch load_weights_into(Model& model, SafeTensorsFile file, const std::string& path) {
    WeightsMatch m;
    // DDP: every name starts with "module."
    if (!file.tensors.empty() &&
        std::all_of(file.tensors.begin(), file.tensors.end(), [](const SafeTensor& t) { return t.name.rfind("module.", 0) == 0; })) {
        for (auto& t : file.tensors) t.name = t.name.substr(7);
        m.stripped_module = true;
    }
    const auto sd = model.state_dict();
    bool names_match = true;
    for (const auto& nt : sd) names_match = names_match && (file.find(nt.name) || nt.tied || is_lora_adapter(nt.name));
    if (names_match) {
        load_model_state(model, file, path);
        return m;
    }
    // by order: the model's state_dict order against the file's (header order, then module order)
    std::vector<const NamedTensor*> want;
    for (const auto& nt : sd)
        if (!nt.tied && !(is_lora_adapter(nt.name) && !file.find(nt.name))) want.push_back(&nt);
    if (want.size() != file.tensors.size())
        throw InputError(HR_MSG("weights.count_mismatch",
                                "%1 has %2 tensors and its names are not the model's, and the model has %3 tensors "
                                "(weights, biases and batch-norm buffers), so they cannot be matched by order either; "
                                "pick the model the file was trained for (--preset or --model)"),
                         {path, std::to_string(file.tensors.size()), std::to_string(want.size())});
    std::vector<const SafeTensor*> in_file, in_module_order;
    for (const auto& t : file.tensors) in_file.push_back(&t);
    in_module_order = in_file;
    std::stable_sort(in_module_order.begin(), in_module_order.end(), module_order_less);
    auto fits = [&](const std::vector<const SafeTensor*>& order) {
        for (std::size_t i = 0; i < want.size(); ++i)
            if (order[i]->shape != want[i]->value_shape()) return false;
        return true;
    };
    const std::vector<const SafeTensor*>* chosen = fits(in_file) ? &in_file : fits(in_module_order) ? &in_module_order : nullptr;
    if (!chosen) {
        std::string list;
        for (std::size_t i = 0; i < want.size(); ++i)
            if (in_module_order[i]->shape != want[i]->value_shape())
                list += (list.empty() ? "" : "; ") + in_module_order[i]->name + " " + shape_str(in_module_order[i]->shape) +
                        " vs " + want[i]->name + " " + shape_str(want[i]->value_shape());
        throw InputError(HR_MSG("weights.shape_mismatch",
                                "%1: its names are not the model's, and matched by order these tensors differ in "
                                "shape (file vs model): %2; pick the model the file was trained for"),
                         {path, list});
    }
    SafeTensorsFile renamed;
    renamed.metadata = file.metadata;
    for (std::size_t i = 0; i < want.size(); ++i) {
        SafeTensor t = *(*chosen)[i];
        m.table.push_back({t.name, want[i]->name});
        t.name = want[i]->name;
        renamed.tensors.push_back(std::move(t));
    }
    m.by_order = true;
    load_model_state(model, renamed, path);
    return m;
}

std::vector<std::string> describe_weights_match(const WeightsMatch& m) {
    std::vector<std::string> lines;
    if (m.stripped_module) lines.push_back("the file's names start with DDP's 'module.' prefix: stripped");
    if (m.by_order) {
        lines.push_back("the file's names are not the model's: matched by order and shape (check this table):");
        std::size_t w = 4;
        for (const auto& [a, b] : m.table) w = std::max(w, a.size());
        std::string head = "  file";
        head.resize(w + 4, ' ');
        lines.push_back(head + "model");
        for (const auto& [a, b] : m.table) {
            std::string l = "  " + a;
            l.resize(w + 4, ' ');
            lines.push_back(l + b);
        }
    }
    return lines;
}

}  // namespace hr

namespace hr {

void RunCheckpointer::configure(std::string dir, const TrainConfig& c, Log warn, Communicator* ranks) {
    dir_ = std::move(dir);
    comm_ = ranks && ranks->world_size() > 1 ? ranks : nullptr;
    active_ = !dir_.empty() || comm_ != nullptr;
    every_steps_ = c.save_every_steps;
    every_seconds_ = c.save_every_seconds;
    seed_ = c.seed;
    warn_ = std::move(warn);
    last_time_ = std::chrono::steady_clock::now();
}

bool RunCheckpointer::rank0_says(bool mine) {
    if (!comm_) return mine;
    const double before = comm_->stats().wait_seconds;
    const bool yes = comm_->all_reduce_value(comm_->rank() == 0 && mine ? 1.0 : 0.0, ReduceOp::max) > 0;
    comm_seconds_ += comm_->stats().wait_seconds - before;  // not the step's communication
    return yes;
}

bool RunCheckpointer::due(std::int64_t step, std::int64_t total_steps) {
    if (!enabled()) return false;
    // by steps (and the run's last step) every rank knows alike; by time, rank 0's clock decides
    bool d = step >= total_steps || (every_steps_ > 0 && step % every_steps_ == 0);
    if (!d && every_steps_ == 0)
        d = rank0_says(std::chrono::duration<double>(std::chrono::steady_clock::now() - last_time_).count() >= every_seconds_);
    return d;
}

void RunCheckpointer::after_step(TrainingState& state, RunCursor cursor) {
    if (!enabled()) return;
    pending_ = std::move(cursor);
    if (due(pending_.step, pending_.total_steps)) write(state, pending_);
}

void RunCheckpointer::note(RunCursor cursor) {
    if (enabled()) pending_ = std::move(cursor);
}

void RunCheckpointer::on_stop(TrainingState& state, const std::vector<EpochEvent>& epochs) {
    if (!enabled()) return;
    if (!rank0_says(pending_.step > 0 && pending_.step != last_step_)) return;
    pending_.epochs = epochs;
    write(state, pending_);
}

void RunCheckpointer::after_epoch(const std::vector<EpochEvent>& epochs) {
    if (!enabled() || last_path_.empty() || last_step_ != pending_.step) return;  // rank 0 alone has a path
    pending_.epochs = epochs;
    try {
        json j = json::parse(read_text(last_path_));
        json list = json::array();
        for (const auto& e : epochs) list.push_back(json(e));
        j["epochs"] = list;
        write_file_atomic(last_path_, j.dump(1) + "\n");
    } catch (const std::exception& e) {
        if (warn_) warn_(std::string("could not update the checkpoint ") + last_path_ + ": " + e.what());
    }
}

void RunCheckpointer::write(TrainingState& state, const RunCursor& cursor) {
    const CommStats before = comm_ ? comm_->stats() : CommStats{};
    try {
        const std::string path = write_checkpoint(dir_, state, cursor, seed_);
        if (!path.empty()) last_path_ = path;
        last_step_ = cursor.step;
    } catch (const std::exception& e) {
        if (warn_) warn_(std::string("could not write a checkpoint at step ") + std::to_string(cursor.step) + ": " + e.what());
    }
    if (comm_) {
        comm_bytes_ += comm_->stats().bytes - before.bytes;
        comm_seconds_ += comm_->stats().wait_seconds - before.wait_seconds;
    }
    last_time_ = std::chrono::steady_clock::now();
}

}  // namespace hr
