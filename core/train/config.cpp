#include "train/config.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "base/error.h"
#include "base/json_limits.h"
#include "data/chat_template.h"
#include "data/instruct_data.h"
#include "nn/transformer_spec.h"

namespace hr {

using json = nlohmann::json;

json train_config_to_json(const TrainConfig& c) {
    json j;
    j["model"] = model_spec_to_json(c.model);
    j["model_source"] = c.model_source;
    j["data"] = c.data;
    if (!c.target.empty()) j["target"] = c.target;  // tables only: older runs' configurations stay as they were
    j["train_limit"] = c.train_limit;
    j["test_limit"] = c.test_limit;
    j["epochs"] = c.epochs;
    j["steps"] = c.steps;
    j["batch"] = c.batch;
    j["optimizer"] = {{"kind", c.optimizer.kind},         {"lr", c.optimizer.lr},
                      {"momentum", c.optimizer.momentum}, {"dampening", c.optimizer.dampening},
                      {"nesterov", c.optimizer.nesterov}, {"weight_decay", c.optimizer.weight_decay},
                      {"beta1", c.optimizer.beta1},       {"beta2", c.optimizer.beta2},
                      {"eps", c.optimizer.eps},           {"decay_scope", c.optimizer.decay_scope},
                      {"grad_clip", c.optimizer.grad_clip}};
    j["schedule"] = {{"kind", c.schedule.kind},         {"step_size", c.schedule.step_size},
                     {"gamma", c.schedule.gamma},       {"min_lr", c.schedule.min_lr},
                     {"warmup_steps", c.schedule.warmup_steps}};
    j["strategy"] = {{"precision", c.strategy.precision},
                     {"checkpoint", c.strategy.checkpoint},
                     {"micro_batch", c.strategy.micro_batch},
                     {"accumulate", c.strategy.accumulate},
                     {"offload_optimizer", c.strategy.offload_optimizer},
                     {"offload_parameters", c.strategy.offload_parameters},
                     {"lora_rank", c.strategy.lora_rank},
                     {"lora_alpha", c.strategy.lora_alpha},
                     {"lora_dropout", c.strategy.lora_dropout},
                     {"lora_targets", c.strategy.lora_targets},
                     {"quantize_base", c.strategy.quantize_base},
                     {"loss_scale_init", c.strategy.loss_scale_init},
                     {"loss_scale_growth_interval", c.strategy.loss_scale_growth_interval},
                     {"shard", c.strategy.shard},
                     {"rank_batch", c.strategy.rank_batch},
                     {"tp_head", c.strategy.tp_head},
                     {"pipeline", c.strategy.pipeline},
                     {"pipeline_split", c.strategy.pipeline_split}};
    j["rank_timeout"] = c.rank_timeout;
    j["seed"] = c.seed;
    j["device"] = c.device;
    j["threads"] = c.threads;
    j["evaluate_each_epoch"] = c.evaluate_each_epoch;
    j["memory_limit"] = c.memory_limit;
    j["seq"] = c.seq;
    j["tokenizer"] = c.tokenizer;
    j["chat_template"] = c.chat_template;
    j["sequences"] = c.sequences;
    j["eval_every"] = c.eval_every;
    j["eval_tokens"] = c.eval_tokens;
    j["timeline_step"] = c.timeline_step;  // a resumed run records the same step's timeline
    j["save_every_steps"] = c.save_every_steps;
    j["save_every_seconds"] = c.save_every_seconds;
    j["init_from"] = c.init_from;
    j["init_base"] = c.init_base;
    j["what_if"] = {{"prune", c.what_if.prune},
                    {"quantize", quantize_name(c.what_if.bits)},
                    {"group", c.what_if.group}};
    return j;
}

namespace {

// Field readers: each checks the JSON type and that the value fits the C++ field without narrowing
// (get<int>() turned 4294967297 into 1); ranges are validate_train_config's. `where` is the section
// ("" for the top level, "optimizer", ...), so messages name the field as "optimizer.lr".
std::string field_name(const std::string& where, const char* key) { return where.empty() ? key : where + "." + key; }

// `msg` is one whole sentence per expected type (so a translation never splices an English phrase in):
// %1 the field's name, %2 the value found.
[[noreturn]] void wrong_type(MessageText msg, const std::string& where, const char* key, const json& v) {
    throw InputError(msg, {field_name(where, key), json_brief(v)});
}

void get(const json& j, const char* key, std::string& out, const std::string& where) {
    if (!j.contains(key)) return;
    const json& v = j.at(key);
    if (!v.is_string())
        wrong_type(HR_MSG("config.field_not_string", "run configuration: field '%1' must be a string, got %2"),
                   where, key, v);
    out = v.get<std::string>();
}

void get(const json& j, const char* key, bool& out, const std::string& where) {
    if (!j.contains(key)) return;
    const json& v = j.at(key);
    if (!v.is_boolean())
        wrong_type(HR_MSG("config.field_not_bool", "run configuration: field '%1' must be true or false, got %2"),
                   where, key, v);
    out = v.get<bool>();
}

void get(const json& j, const char* key, double& out, const std::string& where) {
    if (!j.contains(key)) return;
    const json& v = j.at(key);
    if (!v.is_number())
        wrong_type(HR_MSG("config.field_not_number", "run configuration: field '%1' must be a number, got %2"),
                   where, key, v);
    out = v.get<double>();
    if (!std::isfinite(out))
        wrong_type(HR_MSG("config.field_not_finite", "run configuration: field '%1' must be a finite number, got %2"),
                   where, key, v);
}

template <class T>
    requires std::is_integral_v<T>
void get(const json& j, const char* key, T& out, const std::string& where) {
    if (!j.contains(key)) return;
    const json& v = j.at(key);
    if (!v.is_number_integer())
        wrong_type(HR_MSG("config.field_not_integer", "run configuration: field '%1' must be an integer, got %2"),
                   where, key, v);
    bool fits = false;
    if (v.is_number_unsigned()) {
        const std::uint64_t u = v.get<std::uint64_t>();
        fits = u <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    } else {  // stored signed (parsed negative, or built in code)
        const std::int64_t i = v.get<std::int64_t>();
        fits = i >= 0 ? static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                      : std::is_signed_v<T> && i >= static_cast<std::int64_t>(std::numeric_limits<T>::min());
    }
    if (!fits)
        throw InputError(HR_MSG("config.field_integer_range",
                                "run configuration: field '%1' must be an integer from %2 to %3, got %4"),
                         {field_name(where, key), std::to_string(std::numeric_limits<T>::min()),
                          std::to_string(std::numeric_limits<T>::max()), json_brief(v)});
    out = v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>()) : static_cast<T>(v.get<std::int64_t>());
}

// A list of integers (strategy.rank_batch): each element as get<T> above.
void get(const json& j, const char* key, std::vector<std::int64_t>& out, const std::string& where) {
    if (!j.contains(key)) return;
    const json& v = j.at(key);
    if (!v.is_array())
        wrong_type(HR_MSG("config.field_not_list", "run configuration: field '%1' must be a list of integers, got %2"),
                   where, key, v);
    std::vector<std::int64_t> list;
    for (const json& e : v) {
        std::int64_t x = 0;
        get(json{{"element", e}}, "element", x, field_name(where, key));
        list.push_back(x);
    }
    out = std::move(list);
}

void get(const json& j, const char* key, std::vector<int>& out, const std::string& where) {
    if (!j.contains(key)) return;
    std::vector<std::int64_t> wide;
    get(j, key, wide, where);
    std::vector<int> list;
    for (std::int64_t x : wide) {
        if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
            throw InputError(HR_MSG("config.field_integer_range",
                                    "run configuration: field '%1' must be an integer from %2 to %3, got %4"),
                             {field_name(where, key), std::to_string(std::numeric_limits<int>::min()),
                              std::to_string(std::numeric_limits<int>::max()), std::to_string(x)});
        list.push_back(static_cast<int>(x));
    }
    out = std::move(list);
}

// A section ("optimizer", ...) must be an object when present; null when absent.
const json* section(const json& j, const char* key) {
    if (!j.contains(key)) return nullptr;
    const json& v = j.at(key);
    if (!v.is_object())
        wrong_type(HR_MSG("config.field_not_object", "run configuration: field '%1' must be an object, got %2"),
                   "", key, v);
    return &v;
}

}  // namespace

TrainConfig train_config_from_json(const json& j) {
    if (!j.is_object())
        throw InputError(HR_MSG("config.not_object", "run configuration: must be a JSON object, got %1"), {json_brief(j)});
    TrainConfig c;
    if (j.contains("model")) c.model = model_spec_from_json(j["model"]);
    get(j, "model_source", c.model_source, "");
    get(j, "data", c.data, "");
    get(j, "target", c.target, "");
    get(j, "train_limit", c.train_limit, "");
    get(j, "test_limit", c.test_limit, "");
    get(j, "epochs", c.epochs, "");
    get(j, "steps", c.steps, "");
    get(j, "batch", c.batch, "");
    if (const json* o = section(j, "optimizer")) {
        get(*o, "kind", c.optimizer.kind, "optimizer");
        get(*o, "lr", c.optimizer.lr, "optimizer");
        get(*o, "momentum", c.optimizer.momentum, "optimizer");
        get(*o, "dampening", c.optimizer.dampening, "optimizer");
        get(*o, "nesterov", c.optimizer.nesterov, "optimizer");
        get(*o, "weight_decay", c.optimizer.weight_decay, "optimizer");
        get(*o, "beta1", c.optimizer.beta1, "optimizer");
        get(*o, "beta2", c.optimizer.beta2, "optimizer");
        get(*o, "eps", c.optimizer.eps, "optimizer");
        get(*o, "decay_scope", c.optimizer.decay_scope, "optimizer");
        get(*o, "grad_clip", c.optimizer.grad_clip, "optimizer");
    }
    if (const json* s = section(j, "schedule")) {
        get(*s, "kind", c.schedule.kind, "schedule");
        get(*s, "step_size", c.schedule.step_size, "schedule");
        get(*s, "gamma", c.schedule.gamma, "schedule");
        get(*s, "min_lr", c.schedule.min_lr, "schedule");
        get(*s, "warmup_steps", c.schedule.warmup_steps, "schedule");
    }
    if (const json* s = section(j, "strategy")) {
        get(*s, "precision", c.strategy.precision, "strategy");
        get(*s, "checkpoint", c.strategy.checkpoint, "strategy");
        get(*s, "micro_batch", c.strategy.micro_batch, "strategy");
        get(*s, "accumulate", c.strategy.accumulate, "strategy");
        get(*s, "offload_optimizer", c.strategy.offload_optimizer, "strategy");
        get(*s, "offload_parameters", c.strategy.offload_parameters, "strategy");
        get(*s, "lora_rank", c.strategy.lora_rank, "strategy");
        get(*s, "lora_alpha", c.strategy.lora_alpha, "strategy");
        get(*s, "lora_dropout", c.strategy.lora_dropout, "strategy");
        get(*s, "lora_targets", c.strategy.lora_targets, "strategy");
        get(*s, "quantize_base", c.strategy.quantize_base, "strategy");
        get(*s, "loss_scale_init", c.strategy.loss_scale_init, "strategy");
        get(*s, "loss_scale_growth_interval", c.strategy.loss_scale_growth_interval, "strategy");
        get(*s, "shard", c.strategy.shard, "strategy");
        get(*s, "rank_batch", c.strategy.rank_batch, "strategy");
        get(*s, "tp_head", c.strategy.tp_head, "strategy");
        get(*s, "pipeline", c.strategy.pipeline, "strategy");
        get(*s, "pipeline_split", c.strategy.pipeline_split, "strategy");
    }
    get(j, "rank_timeout", c.rank_timeout, "");
    get(j, "seed", c.seed, "");
    get(j, "device", c.device, "");
    get(j, "threads", c.threads, "");
    get(j, "evaluate_each_epoch", c.evaluate_each_epoch, "");
    get(j, "memory_limit", c.memory_limit, "");
    get(j, "seq", c.seq, "");
    get(j, "tokenizer", c.tokenizer, "");
    get(j, "chat_template", c.chat_template, "");
    get(j, "sequences", c.sequences, "");
    get(j, "eval_every", c.eval_every, "");
    get(j, "eval_tokens", c.eval_tokens, "");
    get(j, "timeline_step", c.timeline_step, "");
    get(j, "save_every_steps", c.save_every_steps, "");
    get(j, "save_every_seconds", c.save_every_seconds, "");
    get(j, "init_from", c.init_from, "");
    get(j, "init_base", c.init_base, "");
    if (const json* w = section(j, "what_if")) {
        get(*w, "prune", c.what_if.prune, "what_if");
        std::string q = "none";
        get(*w, "quantize", q, "what_if");
        c.what_if.bits = quantize_bits(q);
        get(*w, "group", c.what_if.group, "what_if");
    }
    return c;
}

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// An integer field in [lo, hi]; `flag` is the command-line flag that sets it (the window's field has
// the same name in its label).
void check_int(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* field, const char* flag) {
    if (v < lo || v > hi)
        throw InputError(HR_MSG("config.range", "%1 must be between %2 and %3, got %4 (%5)"),
                         {field, std::to_string(lo), std::to_string(hi), std::to_string(v), flag});
}

// A real field, finite and in [lo, hi] (hi_open: [lo, hi)).
void check_real(double v, double lo, double hi, bool hi_open, const char* field, const char* flag) {
    if (!std::isfinite(v) || v < lo || v > hi || (hi_open && v == hi))
        throw InputError(HR_MSG("config.real_range", "%1 must be a number in [%2, %3%4, got %5 (%6)"),
                         {field, num(lo), num(hi), hi_open ? ")" : "]", num(v), flag});
}

}  // namespace

void validate_train_config(const TrainConfig& c) {
    // The bounds keep the trainer's arithmetic (steps * batch, epochs * steps per epoch, the epoch
    // count as an int) far from overflow whatever front end filled the config (docs/run-json.md).
    check_int(c.batch, 1, kMaxBatch, "batch size", "--batch");
    check_int(c.steps, 0, kMaxSteps, "steps", "--steps; 0 trains --epochs instead");
    if (c.steps == 0)
        check_int(c.epochs, 1, kMaxEpochs, "epochs", "--epochs");
    else
        check_int(c.epochs, 0, kMaxEpochs, "epochs", "--epochs");
    const bool table = c.data.rfind("csv:", 0) == 0 || c.data.rfind("tsv:", 0) == 0;
    if (!c.target.empty() && !table)
        throw InputError(HR_MSG("config.target_not_table", "--target names a table's class column, but the data is "
                                                           "'%1'; use it with --data csv:FILE or tsv:FILE, or leave it out"),
                         {c.data});
    check_int(c.train_limit, 0, INT64_MAX, "the training sample limit", "--train-limit; 0 = all");
    check_int(c.test_limit, 0, INT64_MAX, "the test sample limit", "--test-limit; 0 = all");
    check_int(c.threads, 0, 1024, "threads", "--threads; 0 = all cores");
    check_int(c.memory_events_per_second, 0, 1000, "memory events per second", "memory_events_per_second");
    check_real(c.model.loss.label_smoothing, 0, 1, true, "label smoothing", "--label-smoothing");
    const auto& o = c.optimizer;
    // NaN passes comparisons such as `momentum < 0`: every real is checked finite first.
    if (!std::isfinite(o.lr) || !(o.lr > 0))
        throw InputError(HR_MSG("config.lr", "learning rate must be a positive number, got %1 (--lr)"), {num(o.lr)});
    check_real(o.momentum, 0, 1, true, "momentum", "--momentum");
    check_real(o.dampening, 0, 1, false, "dampening", "optimizer.dampening");
    check_real(o.weight_decay, 0, std::numeric_limits<double>::max(), false, "weight decay", "--weight-decay");
    check_real(o.grad_clip, 0, std::numeric_limits<double>::max(), false, "gradient clipping norm", "--grad-clip; 0 = off");
    check_real(o.beta1, 0, 1, true, "Adam beta1", "--beta1");
    check_real(o.beta2, 0, 1, true, "Adam beta2", "--beta2");
    if (!std::isfinite(o.eps) || !(o.eps > 0))
        throw InputError(HR_MSG("config.eps", "Adam eps must be a positive number, got %1 (--eps)"), {num(o.eps)});
    validate_optimizer(c.optimizer);
    const auto& sc = c.schedule;
    check_int(sc.step_size, 1, kMaxSteps, "LR schedule step size", "--step-size");
    check_int(sc.warmup_steps, 0, kMaxSteps, "warm-up steps", "--warmup");
    check_real(sc.gamma, 0, 1, false, "LR schedule gamma", "--gamma");
    check_real(sc.min_lr, 0, std::numeric_limits<double>::max(), false, "minimum learning rate", "--min-lr");
    validate_schedule(c.schedule);
    const auto& s = c.strategy;
    if (s.precision != "fp32" && s.precision != "tf32" && s.precision != "bf16" && s.precision != "fp16")
        throw InputError(HR_MSG("config.precision", "unknown precision '%1'; use fp32, tf32, bf16 or fp16 (--precision)"),
                         {s.precision});
    check_int(s.accumulate, 1, c.batch, "accumulation steps", "--accumulate; at most the batch size");
    check_int(s.micro_batch, 0, c.batch, "micro-batch", "--micro-batch; 0 = off, at most the batch size");
    check_real(s.loss_scale_init, 1e-30, 1e38, false, "initial loss scale", "strategy.loss_scale_init");
    check_real(s.lora_dropout, 0, 1, true, "LoRA dropout", "--lora-dropout; 0 = none");
    check_int(s.loss_scale_growth_interval, 1, kMaxSteps, "loss scale growth interval",
              "strategy.loss_scale_growth_interval");
    if (s.shard != "none" && s.shard != "dp" && s.shard != "zero1" && s.shard != "zero2" && s.shard != "zero3")
        throw InputError(HR_MSG("config.shard", "unknown sharding stage '%1'; use none, dp, zero1, zero2 or zero3 (--shard)"),
                         {s.shard});
    if (s.rank_batch.size() > 4096)
        throw InputError(HR_MSG("config.rank_batch_count", "--rank-batch lists %1 ranks; at most 4096"),
                         {std::to_string(s.rank_batch.size())});
    check_int(s.tp_head, 1, 4096, "tensor-parallel head ranks", "--tp-head; 1 = off");
    check_int(s.pipeline, 1, 4096, "pipeline stages", "--pipeline; 1 = off");
    if (s.pipeline_split.size() > 4096)
        throw InputError(HR_MSG("config.pipeline_split_count", "--pipeline-split lists %1 stages; at most 4096"),
                         {std::to_string(s.pipeline_split.size())});
    for (int n : s.pipeline_split)  // their count and sum against the model: resolve_strategy
        check_int(n, 1, 1 << 20, "a stage's layers", "--pipeline-split; each at least 1");
    for (std::int64_t b : s.rank_batch)  // their sum and count against the ranks: resolve_strategy
        check_int(b, 1, c.batch, "a rank's batch", "--rank-batch; each at least 1, together the batch size");
    check_real(c.rank_timeout, 1, 1e6, false, "rank timeout", "--rank-timeout (seconds)");
    check_int(c.seq, 0, 1 << 24, "sequence length", "--seq; 0 = the model's");
    validate_chat_template(c.chat_template);
    validate_sequence_layout(c.sequences);
    check_int(c.eval_every, 0, kMaxSteps, "evaluation interval", "--eval-every; 0 = at the end only");
    check_int(c.eval_tokens, 0, std::int64_t(1) << 40, "evaluation tokens", "--eval-tokens; 0 = the whole split");
    check_int(c.timeline_step, -1, kMaxSteps, "timeline step", "--timeline-step; 0 = the first steady step, -1 = none");
    check_int(c.save_every_steps, 0, kMaxSteps, "checkpoint interval (steps)", "--save-every N");
    if (!std::isfinite(c.save_every_seconds) || c.save_every_seconds <= 0 || c.save_every_seconds > 1e9)
        throw InputError(HR_MSG("config.save_every_seconds",
                                "the checkpoint interval must be a positive number of seconds, got %1; set it with "
                                "--save-every 10m (minutes) or --save-every N (steps)"),
                         {std::to_string(c.save_every_seconds)});
    validate_compression(c.what_if);
    bool device_ok = c.device == "auto" || c.device == "cpu" || c.device == "cuda";
    if (!device_ok && c.device.rfind("cuda:", 0) == 0) {
        // cuda:N, or cuda:N,M,... (one GPU per rank of this machine)
        const std::string list = c.device.substr(5);
        device_ok = !list.empty() && list.size() <= 4096;
        std::size_t start = 0;
        while (device_ok) {
            const std::size_t comma = list.find(',', start);
            const std::string n = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            device_ok = !n.empty() && n.size() <= 4 &&
                        std::all_of(n.begin(), n.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    if (!device_ok)
        throw InputError(HR_MSG("config.device", "unknown device '%1'; use auto, cpu or cuda:N (--device)"), {c.device});
}

}  // namespace hr
