#pragma once
// Before and after: a fine-tuning run's starting model beside the trained one (the Sample tab's comparison,
// `headroom generate RUN --before`, the report's "before" figures).
//
// What "before" is, by the run (run_start_weights):
//   LoRA / QLoRA   the trained weights with the adapters switched off (Model::set_adapters_enabled(false),
//                  Generator::set_adapters_enabled): the frozen base the adapters were added to. No second copy
//                  of the model: one Generator answers both, switching a flag. A QLoRA run's file holds its base
//                  dequantised, so "before" is the quantised base the run computed with.
//   full training  the run's initial weights: its --init-from source (a .safetensors file, a Hugging Face model
//                  folder or an earlier run's folder) when it has one, else a checkpoint written at step 0
//                  (checkpoint-0.safetensors) when there is one. A run that started from freshly initialised
//                  weights and kept no step-0 checkpoint has no "before" to show: InputError saying so.
#include <memory>
#include <string>

#include "train/generate.h"

namespace hr {

struct StartWeights {
    enum class Kind { adapters_off, init_from, step0_checkpoint };
    Kind kind = Kind::adapters_off;
    std::string path;  // the run's model.safetensors (adapters off), the --init-from source, the checkpoint
};

// Where a run folder's starting model comes from (above). InputError naming the folder when it holds no
// finished run (model.safetensors), or, for full training, no starting weights that still exist.
StartWeights run_start_weights(const std::string& run_dir);

// The starting model of a run as a Generator (the tokenizer and model spec the run's model.safetensors names):
// for LoRA the run's own weights with the adapters off. InputError as run_start_weights, or when the starting
// weights do not fit the run's model.
std::unique_ptr<Generator> start_generator(const std::string& run_dir, int threads = 1);

}  // namespace hr
