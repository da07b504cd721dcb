#include "train/preset_training.h"

#include "train/config.h"

#include <algorithm>

#include "data/dataset.h"
#include "data/table.h"
#include "data/text_data.h"

namespace hr {

namespace {

// AdamW as nanoGPT trains its small models: betas (0.9, 0.99), weight decay 0.1 on the matrices, the
// global gradient norm clipped to 1, a linear warm-up and a cosine decay to a tenth of the peak rate.
PresetTraining language_model(double lr, double min_lr, std::int64_t batch, std::int64_t steps, std::int64_t warmup,
                              const std::string& tokenizer) {
    PresetTraining t;
    t.has_training = true;
    t.data = "text:fortunes";
    t.tokenizer = tokenizer;
    t.optimizer.kind = "adamw";
    t.optimizer.lr = lr;
    t.optimizer.beta1 = 0.9;
    t.optimizer.beta2 = 0.99;
    t.optimizer.weight_decay = 0.1;
    t.optimizer.grad_clip = 1.0;
    t.schedule.kind = "cosine";
    t.schedule.warmup_steps = warmup;
    t.schedule.min_lr = min_lr;  // a tenth of lr, written out (the window's fields hold 6 decimals)
    t.batch = batch;
    t.steps = steps;
    t.eval_every = preset_eval_interval(steps);
    return t;
}

}  // namespace

std::int64_t preset_eval_interval(std::int64_t steps) { return steps > 0 ? std::max<std::int64_t>(1, steps / 4) : 0; }

void follow_eval_interval(TrainConfig& c, std::int64_t previous_steps) {
    if (c.eval_every > 0 && c.steps != previous_steps && c.eval_every == preset_eval_interval(previous_steps))
        c.eval_every = preset_eval_interval(c.steps);
}

PresetTraining preset_training(const std::string& preset) {
    // Measured on 2 CPU cores (docs/transformers.md, "Presets train with their defaults"): gpt-tiny 1,000
    // steps in 80 s to 2.02 nats/token; gpt-char 200 steps in 4.7 min to 2.68 (it does not reach 2.3 in
    // minutes: 600 steps, 14 min, gave 2.63; larger and smaller rates and batches did no better).
    if (preset == "gpt-tiny") return language_model(3e-3, 3e-4, 16, 1000, 50, "byte");
    if (preset == "gpt-char") return language_model(2e-3, 2e-4, 8, 200, 20, "char");
    // GPT-2's sizes: GPT-2's own rate, the batch of one card and a budget a GPU finishes in minutes
    if (preset == "gpt2-124m") return language_model(6e-4, 6e-5, 8, 2000, 100, "byte");
    if (preset == "gpt2-350m") return language_model(3e-4, 3e-5, 8, 2000, 100, "byte");
    if (preset == "gpt2-774m") return language_model(2.5e-4, 2.5e-5, 4, 2000, 100, "byte");
    if (preset == "gpt2-1.5b") return language_model(2e-4, 2e-5, 4, 2000, 100, "byte");
    // the LLaMA family: llama-tiny as gpt-tiny (docs/transformers.md measures it); the published models at
    // a fine-tuning rate (they are meant to start from their weights, --init-from)
    if (preset == "llama-tiny") return language_model(3e-3, 3e-4, 16, 1000, 50, "byte");
    if (preset == "llama-3.2-1b" || preset == "llama-3.2-3b") return language_model(2e-4, 2e-5, 4, 1000, 50, "byte");
    if (preset == "llama-3.1-8b" || preset == "llama-3.1-70b" || preset == "qwen2.5-7b" || preset == "mistral-7b")
        return language_model(1e-4, 1e-5, 2, 1000, 50, "byte");
    if (preset == "resnet20") {  // not measured here: the machine holds no CIFAR-10 (docs/datasets.md)
        PresetTraining t;
        t.has_training = true;
        t.data = "cifar10";
        t.optimizer.kind = "sgd";
        t.optimizer.lr = 0.05;
        t.optimizer.momentum = 0.9;
        t.optimizer.weight_decay = 1e-4;
        t.schedule.kind = "cosine";
        t.schedule.min_lr = 0.0005;
        t.batch = 128;
        t.epochs = 10;
        return t;
    }
    if (preset == "tabular-mlp") {
        PresetTraining t;
        t.has_training = true;
        t.optimizer.kind = "adam";
        t.optimizer.lr = 3e-3;
        t.batch = 32;
        t.epochs = 30;
        return t;
    }
    return {};
}

std::string default_preset_for_data(const std::string& data) {
    if (is_table_data(data)) return "tabular-mlp";
    if (is_token_data(data)) return "gpt-tiny";  // trains well in about 80 s on 2 cores (README, transformers.md)
    return "seed-cnn";
}

TrainConfig default_train_config(const std::string& preset) {
    TrainConfig c;
    c.optimizer.momentum = 0.9;
    c.device = "auto";
    apply_preset_training(preset, c);
    return c;
}

OptimizerConfig default_optimizer(const std::string& kind) {
    OptimizerConfig o = default_train_config("").optimizer;
    o.kind = kind;
    if (kind != "sgd") o.lr = 1e-3;
    return o;
}

void apply_preset_training(const std::string& preset, TrainConfig& c) {
    const PresetTraining t = preset_training(preset);
    if (!t.has_training) return;
    if (!t.data.empty()) c.data = t.data;
    if (!t.tokenizer.empty()) c.tokenizer = t.tokenizer;
    c.optimizer = t.optimizer;
    c.schedule = t.schedule;
    c.batch = t.batch;
    c.steps = t.steps;
    c.epochs = t.steps > 0 ? 1 : t.epochs;
    c.eval_every = t.eval_every;
}

ModelSpec preset_model_for_data(const std::string& preset, const TrainConfig& c) {
    const auto& lm = language_model_preset_names();
    if (std::find(lm.begin(), lm.end(), preset) == lm.end() && !is_token_data(c.data)) {
        const DatasetInfo d = probe_dataset(c.data, c.target);
        if (!d.sample_shape.empty() && d.num_classes > 0) return preset_model(preset, d.sample_shape, d.num_classes);
    }
    return preset_model(preset);
}

void copy_training_settings(const TrainConfig& from, TrainConfig& to) {
    to.data = from.data;
    to.tokenizer = from.tokenizer;
    to.optimizer = from.optimizer;
    to.schedule = from.schedule;
    to.batch = from.batch;
    to.steps = from.steps;
    to.epochs = from.epochs;
    to.eval_every = from.eval_every;
}

}  // namespace hr
