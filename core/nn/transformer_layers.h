#pragma once
// The transformer layers (GPT and ViT), as Layer classes over the backend's transformer ops:
//
//   token_embedding     (T) token ids (i64)      -> (T, C)       weight (V, C)
//   position_embedding  (T, C)                   -> (T, C)       weight (max_positions, C), added
//   layernorm           (..., C)                 -> (..., C)     weight, bias (C)
//   self_attention      (T, C)                   -> (T, C)       c_attn (3C, C) + (3C), c_proj (C, C) + (C)
//   mlp                 (T, C)                   -> (T, C)       c_fc (F, C) + (F), c_proj (C, F) + (C)
//   transformer_block   (T, C)                   -> (T, C)       ln_1, attn, ln_2, mlp (nanoGPT's Block)
//   lm_head             (T, C)                   -> (T, V)       weight (V, C), tied: the token embedding's
//   patch_embedding     (C_in, H, W)             -> (P, C)       weight (C, C_in, p, p), bias (C)
//   class_token         (P, C)                   -> (P + 1, C)   weight (1, 1, C), put in front
//   class_token_pool    (T, C)                   -> (C)          the class token (position 0)
//
// transformer_block is one unit (for activation checkpointing and sharding): it keeps what its backward
// needs and no more (docs/transformers.md lists every tensor and compares with Korthikanti et al.).
// Every layer here handles sequences shorter than the one it was built for (generation).
#include <memory>

#include "nn/layer.h"

namespace hr {

// Their registry entries (shape rules, FLOPs, construction, palette text) are at the end of
// transformer_layers.cpp: transformer_layer_entries() (nn/layer_registry.h).

}  // namespace hr
