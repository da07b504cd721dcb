#pragma once
// LoRA's target projections in a LLaMA-family model by peft's names (--lora-targets): a comma list of
// q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, as a bit mask in that order (the order
// llama_block declares its adapters in, nn/transformer_layers.cpp). Empty: q_proj,v_proj, peft's default for
// the family.
#include <string>
#include <vector>

namespace hr {

// peft's names, in bit order
const std::vector<std::string>& lora_target_names();
// The mask of a comma list; InputError naming an unknown or repeated name and listing the known ones.
int parse_lora_targets(const std::string& list);
// The comma list of a mask (0: the default, q_proj,v_proj).
std::string lora_targets_text(int mask);

}  // namespace hr
