#pragma once
// A Hugging Face `tokenizer.json` byte-level BPE (GPT-2, Llama 3, Qwen2), read without the `tokenizers`
// library, following its published algorithm:
//   1. added tokens (added_tokens[].content) are cut out of the text first, leftmost and longest first, and
//      become their own ids (special or not; their lstrip/rstrip/normalized flags are not applied);
//   2. each piece between them is split by the pre-tokenizer: a Split with a Regex pattern and behavior
//      "Isolated" (what Llama 3 and Qwen2 write) run through PCRE2 (UTF + Unicode properties, as the Rust
//      library's Oniguruma does), and/or ByteLevel (use_regex true: GPT-2's own pattern; add_prefix_space);
//   3. each split's UTF-8 bytes are mapped to characters by GPT-2's bytes_to_unicode table and merged by
//      model.merges in rank order (the lowest-ranked adjacent pair first, its occurrences left to right;
//      with model.ignore_merges a split that is itself a vocabulary entry is kept whole, as Llama 3 asks);
//   4. the pieces become ids by model.vocab.
// Decoding maps the pieces back to bytes (added tokens as their text). The normalizer must be null or NFC
// (Qwen2; Headroom does not normalise, so text that is not already NFC tokenizes differently); a
// post_processor (Llama 3's bos) is not applied: chat templates (data/chat_template.h) place bos.
// Loading checks what encoding relies on (every byte's character and every merge's parts and result in
// the vocabulary, ids below the number of entries), so a loaded tokenizer encodes any text.
#include <memory>
#include <string>

#include "data/tokenizer.h"

namespace hr {

// Parses the JSON text of a tokenizer.json (`where` names it in messages). InputError naming the field
// and what to do when it is not a byte-level BPE this reader supports.
std::unique_ptr<Tokenizer> parse_hf_tokenizer(const std::string& json_text, const std::string& where);

}  // namespace hr
