#pragma once
// What a run trains with when nothing says otherwise, and what a preset brings: its dataset, tokenizer,
// optimizer, learning-rate schedule, batch and step budget. Both front ends start a run from the same
// function, default_train_config(preset) (app/session/RunDefaults.h): the window when a preset is
// loaded, `headroom train --preset NAME` before its flags, which override any of it. `headroom presets`
// prints what a preset brings.
//
// The language-model presets carry settings of their own (docs/transformers.md, "Presets train with
// their defaults"): AdamW with a warm-up and a cosine decay, a batch and a number of steps sized so that
// the model, on 2 CPU cores, ends well trained in a few minutes. resnet20 brings CIFAR-10 and the settings of
// He et al. (SGD momentum 0.9, weight decay 1e-4, batch 128) at lr 0.05 with a cosine decay over its epochs;
// tabular-mlp Adam, batch 32 and 30 epochs (tables are small; its data is the user's table). The other image
// presets bring none: the generic defaults (TrainConfig, with the app's SGD momentum 0.9) already train them
// well in one epoch.
#include <cstdint>
#include <string>

#include "nn/model_spec.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

namespace hr {

struct TrainConfig;

struct PresetTraining {
    bool has_training = false;    // false: the preset brings no training settings (the generic ones apply)
    std::string data;             // dataset spec ("text:fortunes")
    std::string tokenizer;        // byte | char | bpe:N
    OptimizerConfig optimizer;    // kind, lr, betas, weight decay, grad_clip
    LrSchedule schedule;          // warm-up and decay
    std::int64_t batch = 0;       // sequences per step
    std::int64_t steps = 0;       // the run's length in steps (epochs do not apply); 0: in epochs
    int epochs = 1;               // the run's length when steps is 0
    std::int64_t eval_every = 0;  // validation loss every N steps: preset_eval_interval(steps)
};

// A preset's evaluations follow the run's length: four a run, so the validation loss costs the same share
// of a run of any length (a run of `steps` steps evaluates every steps / 4; 0 for a run measured in epochs:
// at the end of each). The front ends apply it again when the steps are changed and the interval is not.
std::int64_t preset_eval_interval(std::int64_t steps);
// After c's length changed from `previous_steps`: an evaluation interval that was the rule's for the old
// length follows the new one (the window's Steps field; the command line checks its flags instead). An
// interval of 0 (image runs: at the end of each epoch) or one set by hand stays.
void follow_eval_interval(TrainConfig& c, std::int64_t previous_steps);

// The preset a run trains when the person names none (no --preset or --model; the window until a model is
// chosen), decided by its data alone, the same in both front ends: a table (csv:, tsv:) tabular-mlp, text
// (text:) gpt-tiny, anything else (images, synthetic) seed-cnn. A preset the person names is kept, and a
// mismatch is refused by the model's own checks with their reason.
std::string default_preset_for_data(const std::string& data);

// The defaults of a run of `preset` (its model not included: the front ends build it): TrainConfig's
// own, except SGD momentum 0.9 (plain SGD at lr 0.01 learns seed-cnn too slowly for one epoch) and device
// "auto" (the GPU when one works, else the CPU); then the preset's training where it brings its own.
TrainConfig default_train_config(const std::string& preset = "seed-cnn");

// The optimizer a run starts from when it names another kind than its preset's: the generic settings at
// that kind's own learning rate (SGD 0.01, Adam and AdamW 1e-3).
OptimizerConfig default_optimizer(const std::string& kind);

// The preset's training settings; has_training false for an unknown name or an image preset.
PresetTraining preset_training(const std::string& preset);

// Writes the preset's training settings (where it has any) into c: data and tokenizer (where it names them),
// optimizer, schedule, batch, steps or epochs, eval_every. Leaves the model, device, strategies and the rest alone.
void apply_preset_training(const std::string& preset, TrainConfig& c);

// The preset's model drawn for c's data (both front ends): an image or table preset takes the data's sample
// shape and classes as probe_dataset finds them (headers and sizes; a table is read once), else (a data set
// that cannot be probed: the run then says what is wrong with it) the preset's own input. A language model
// preset is its own.
ModelSpec preset_model_for_data(const std::string& preset, const TrainConfig& c);

// Copies the same fields from one configuration to another (the window, loading another preset, keeps
// its device and strategies and takes the preset's training).
void copy_training_settings(const TrainConfig& from, TrainConfig& to);

}  // namespace hr
