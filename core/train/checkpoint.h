#pragma once
// Weights as safetensors with PyTorch state_dict names and layouts (docs/design.md decision 6).
//
// GPT-shaped models use nanoGPT's names (nn/transformer_spec.h is_gpt_layout); their tied head is
// written twice, as transformer.wte.weight and lm_head.weight (safetensors has no aliases), and either
// is enough on reading. Reading also accepts Hugging Face GPT-2 files: names without the
// "transformer." prefix (GPT2Model) or with it (GPT2LMHeadModel), the Conv1D weights stored [in, out]
// (attn.c_attn, attn.c_proj, mlp.c_fc, mlp.c_proj: transposed on reading), and their attention-mask
// buffers (.attn.bias, .attn.masked_bias: ignored).
#include <string>

#include "io/safetensors.h"
#include "nn/model.h"

namespace hr {

// Every parameter and buffer of the model, copied to the host; metadata carries the model spec.
// A quantised base weight (QLoRA, NamedTensor::quantized) is written dequantised, f32: the values the
// run computed with, readable by anything that reads the model.
SafeTensorsFile model_state_file(Model& model);
// The same of given tensors (a consolidated state of several ranks) of a model of `spec`.
SafeTensorsFile state_file(const std::vector<NamedTensor>& named, Backend& be, const ModelSpec& spec);
// Loads a state written by model_state_file (or by PyTorch for the equivalent model, or a Hugging Face
// GPT-2 file for a GPT layout). Strict: every tensor must be present with the same shape; f32/f64/bf16/f16
// are converted; a quantised base weight (QLoRA) is quantised from the file's values. Throws InputError naming
// the file, the tensor and what to do; the model is unchanged on error.
void load_model_state(Model& model, const SafeTensorsFile& file, const std::string& path);
// A LoRA run's file with its adapters merged into the weights they adapt (W + lora_scale * B A, PEFT's
// merge_and_unload) and left out; the file as it is when it has none. InputError naming `path` when they do not fit.
SafeTensorsFile merge_lora_adapters(const SafeTensorsFile& file, const std::string& path);
// The same in place (the file is not copied; nothing changes when it has no adapters).
void merge_lora_adapters_in_place(SafeTensorsFile& file, const std::string& path);
// (is_lora_adapter, nn/layer.h: a LoRA adapter's state_dict name is optional when a file is read into a model)

// The model a weights file was written for: its metadata's model_spec, or, for files without one (a
// Hugging Face or nanoGPT GPT-2 checkpoint), the GPT that its tensors' names and shapes describe (head
// size 64, as every GPT-2; LayerNorm and projection biases when the file has them). InputError otherwise.
ModelSpec model_spec_of(const SafeTensorsFile& file, const std::string& path);

}  // namespace hr
