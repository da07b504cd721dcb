#pragma once
// Model-spec helpers for transformers (GPT and ViT): what makes a spec a language model, nanoGPT's
// state_dict names, and the sequence length and vocabulary of a GPT spec. Cheap and backend-free, like nn/model_spec.h.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/model_spec.h"

namespace hr {

// A language model: its first layer is a token embedding, so it takes token ids (T) per sample and
// ends with (T, V) logits, V = num_classes, trained with a per-token cross-entropy.
bool is_token_model(const ModelSpec& spec);
// The number of transformer blocks (transformer_block layers; else self_attention layers): GPT-2's n_layer.
int transformer_layer_count(const ModelSpec& spec);

// nanoGPT's layout: token_embedding, [position_embedding], [dropout], transformer_block..., layernorm,
// lm_head at the top level. Such a model's state_dict uses nanoGPT's names (transformer.wte, .wpe,
// .h.K, .ln_f, lm_head), so its weights load into nanoGPT's GPT (and GPT-2 checkpoints into it).
bool is_gpt_layout(const ModelSpec& spec);
// Hugging Face's LlamaForCausalLM layout (Mistral's and Qwen2's alike): token_embedding, llama_block...,
// rmsnorm, lm_head. Its state_dict uses Hugging Face's names (model.embed_tokens, model.layers.K,
// model.norm, lm_head; inside a block input_layernorm, self_attn.{q,k,v,o}_proj, post_attention_layernorm,
// mlp.{gate,up,down}_proj).
bool is_llama_layout(const ModelSpec& spec);
// The state_dict prefix of every top-level layer: "0", "1", ... or, for the GPT layout, nanoGPT's, for the
// LLaMA layout Hugging Face's.
std::vector<std::string> state_dict_prefixes(const ModelSpec& spec);

// The sequence length a token model is built for (its "input" [T]); 0 for other models.
std::int64_t model_sequence_length(const ModelSpec& spec);
// The longest sequence the position embedding has rows for, or a llama_block is built for (0: neither).
std::int64_t model_max_positions(const ModelSpec& spec);
// Sets the sequence length of a token model (1 <= seq <= its position embedding's max_positions).
// InputError for other models or a sequence out of range. seq 0 leaves the spec as it is.
void apply_sequence_length(ModelSpec& spec, std::int64_t seq);
// The vocabulary of a token model (its token embedding's vocab_size), 0 for other models.
std::int64_t model_vocabulary(const ModelSpec& spec);
// Sets the vocabulary of a token model: token embedding, a tied or untied lm_head, num_classes.
void resize_vocabulary(ModelSpec& spec, std::int64_t vocab);

}  // namespace hr
