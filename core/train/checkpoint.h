#pragma once
// Weights as safetensors with PyTorch state_dict names and layouts (DESIGN.md decision 6).
#include <string>

#include "io/safetensors.h"
#include "nn/model.h"

namespace hr {

// Every parameter and buffer of the model, copied to the host; metadata carries the model spec.
SafeTensorsFile model_state_file(Model& model);
// Loads a state written by model_state_file (or by PyTorch for the equivalent model). Strict: every
// tensor must be present with the same shape; f32/f64/bf16/f16 are converted. Throws InputError naming
// the file, the tensor and what to do; the model is unchanged on error.
void load_model_state(Model& model, const SafeTensorsFile& file, const std::string& path);

}  // namespace hr
