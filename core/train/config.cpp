#include "train/config.h"

#include <cmath>

#include "base/error.h"

namespace hr {

using json = nlohmann::json;

json train_config_to_json(const TrainConfig& c) {
    json j;
    j["model"] = model_spec_to_json(c.model);
    j["model_source"] = c.model_source;
    j["data"] = c.data;
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
                     {"loss_scale_init", c.strategy.loss_scale_init},
                     {"loss_scale_growth_interval", c.strategy.loss_scale_growth_interval}};
    j["seed"] = c.seed;
    j["device"] = c.device;
    j["threads"] = c.threads;
    j["evaluate_each_epoch"] = c.evaluate_each_epoch;
    j["memory_limit"] = c.memory_limit;
    j["seq"] = c.seq;
    j["tokenizer"] = c.tokenizer;
    j["eval_every"] = c.eval_every;
    j["eval_tokens"] = c.eval_tokens;
    return j;
}

namespace {
template <class T>
void get(const json& j, const char* key, T& out, const std::string& where) {
    if (!j.contains(key)) return;
    try {
        out = j.at(key).get<T>();
    } catch (const json::exception&) {
        throw InputError(where + ": field '" + key + "' has the wrong type (" + j.at(key).dump() + ")");
    }
}
}  // namespace

TrainConfig train_config_from_json(const json& j) {
    if (!j.is_object()) throw InputError("training config must be a JSON object");
    TrainConfig c;
    if (j.contains("model")) c.model = model_spec_from_json(j["model"]);
    get(j, "model_source", c.model_source, "config");
    get(j, "data", c.data, "config");
    get(j, "train_limit", c.train_limit, "config");
    get(j, "test_limit", c.test_limit, "config");
    get(j, "epochs", c.epochs, "config");
    get(j, "steps", c.steps, "config");
    get(j, "batch", c.batch, "config");
    if (j.contains("optimizer")) {
        const json& o = j["optimizer"];
        get(o, "kind", c.optimizer.kind, "optimizer");
        get(o, "lr", c.optimizer.lr, "optimizer");
        get(o, "momentum", c.optimizer.momentum, "optimizer");
        get(o, "dampening", c.optimizer.dampening, "optimizer");
        get(o, "nesterov", c.optimizer.nesterov, "optimizer");
        get(o, "weight_decay", c.optimizer.weight_decay, "optimizer");
        get(o, "beta1", c.optimizer.beta1, "optimizer");
        get(o, "beta2", c.optimizer.beta2, "optimizer");
        get(o, "eps", c.optimizer.eps, "optimizer");
        get(o, "decay_scope", c.optimizer.decay_scope, "optimizer");
        get(o, "grad_clip", c.optimizer.grad_clip, "optimizer");
    }
    if (j.contains("schedule")) {
        const json& s = j["schedule"];
        get(s, "kind", c.schedule.kind, "schedule");
        get(s, "step_size", c.schedule.step_size, "schedule");
        get(s, "gamma", c.schedule.gamma, "schedule");
        get(s, "min_lr", c.schedule.min_lr, "schedule");
        get(s, "warmup_steps", c.schedule.warmup_steps, "schedule");
    }
    if (j.contains("strategy")) {
        const json& s = j["strategy"];
        get(s, "precision", c.strategy.precision, "strategy");
        get(s, "checkpoint", c.strategy.checkpoint, "strategy");
        get(s, "micro_batch", c.strategy.micro_batch, "strategy");
        get(s, "accumulate", c.strategy.accumulate, "strategy");
        get(s, "offload_optimizer", c.strategy.offload_optimizer, "strategy");
        get(s, "loss_scale_init", c.strategy.loss_scale_init, "strategy");
        get(s, "loss_scale_growth_interval", c.strategy.loss_scale_growth_interval, "strategy");
    }
    get(j, "seed", c.seed, "config");
    get(j, "device", c.device, "config");
    get(j, "threads", c.threads, "config");
    get(j, "evaluate_each_epoch", c.evaluate_each_epoch, "config");
    get(j, "memory_limit", c.memory_limit, "config");
    get(j, "seq", c.seq, "config");
    get(j, "tokenizer", c.tokenizer, "config");
    get(j, "eval_every", c.eval_every, "config");
    get(j, "eval_tokens", c.eval_tokens, "config");
    return c;
}

void validate_train_config(const TrainConfig& c) {
    if (c.batch < 1 || c.batch > (1 << 24)) throw InputError("batch size must be between 1 and 16777216 (--batch)");
    if (c.steps < 0) throw InputError("steps must be 0 or more (--steps)");
    if (c.steps == 0 && (c.epochs < 1 || c.epochs > 100000))
        throw InputError("epochs must be between 1 and 100000 (--epochs)");
    if (c.train_limit < 0 || c.test_limit < 0) throw InputError("sample limits must be 0 or more");
    if (c.threads < 0 || c.threads > 1024) throw InputError("threads must be between 0 (all cores) and 1024 (--threads)");
    validate_optimizer(c.optimizer);
    validate_schedule(c.schedule);
    const auto& s = c.strategy;
    if (s.precision != "fp32" && s.precision != "tf32" && s.precision != "bf16" && s.precision != "fp16")
        throw InputError("unknown precision '" + s.precision + "'; use fp32, tf32, bf16 or fp16 (--precision)");
    if (s.accumulate < 1) throw InputError("accumulation steps must be at least 1 (--accumulate)");
    if (s.micro_batch < 0) throw InputError("micro-batch must be 0 (off) or positive (--micro-batch)");
    if (c.seq < 0 || c.seq > (1 << 24)) throw InputError("sequence length must be 0 (the model's) or positive (--seq)");
    if (c.eval_every < 0) throw InputError("the evaluation interval must be 0 or more steps (--eval-every)");
    if (c.eval_tokens < 0) throw InputError("evaluation tokens must be 0 (all) or more (--eval-tokens)");
    if (c.device != "auto" && c.device != "cpu" && c.device.rfind("cuda:", 0) != 0 && c.device != "cuda")
        throw InputError("unknown device '" + c.device + "'; use auto, cpu or cuda:N (--device)");
}

}  // namespace hr
