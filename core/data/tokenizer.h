#pragma once
// Tokenizers for language models: text <-> token ids.
//
//   byte     the UTF-8 bytes themselves: 256 ids, nothing to learn or store (the default)
//   char     one id per Unicode character of the training text (sorted by code point), like nanoGPT's
//            shakespeare_char; stored as tokenizer.json ({"type": "char", "vocab": ["\n", " ", ...]})
//   bpe:N    a SentencePiece BPE of N pieces trained on the training text (byte fallback, so any text
//            encodes; newlines and spaces are kept exactly); stored as tokenizer.model (SentencePiece's
//            own file, loadable with sentencepiece.SentencePieceProcessor(model_file=...))
//   FILE     a model's own tokenizer (--tokenizer FILE, or a folder holding one):
//              tokenizer.json   a Hugging Face byte-level BPE (GPT-2, Llama 3, Qwen2; data/hf_tokenizer.h),
//                               kind "hf-bpe", stored as the same file
//              tokenizer.model  a SentencePiece model (Llama 2, Mistral), kind "sentencepiece", stored as is
//            A folder is searched for tokenizer.json first, then tokenizer.model.
//
// The trainer writes the tokenizer file next to model.safetensors and names it in the file's metadata
// ("tokenizer": "char", "tokenizer_file": "tokenizer.json"), so generation from a weights file finds it.
// Tokenizers are immutable after construction and safe to use from several threads.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hr {

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    virtual std::string kind() const = 0;             // "byte", "char", "bpe:4000"
    virtual std::int64_t vocab_size() const = 0;
    // InputError when the text holds something the vocabulary cannot represent (char: an unseen character).
    virtual std::vector<std::int32_t> encode(const std::string& text) const = 0;
    // Ids outside the vocabulary decode to U+FFFD. The result may end inside a UTF-8 sequence (byte);
    // valid_utf8() repairs that for display.
    virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;
    // The id of a special (added or control) token whose text is exactly `text`, or -1: how chat templates
    // place <|eot_id|>, <|im_end|>, <s> ... as single tokens (data/chat_template.h).
    virtual std::int32_t special_id(const std::string& text) const {
        (void)text;
        return -1;
    }
    // The file save() writes ("" when there is nothing to store, as for byte).
    virtual std::string file_name() const = 0;
    // Writes file_name() into folder `dir` (atomically); no-op without a file.
    virtual void save(const std::string& dir) const = 0;
};

// "byte", "char", "bpe:N" (N from 260 to 1,000,000), or a tokenizer file or a folder holding one (it must
// exist). InputError otherwise.
void validate_tokenizer_spec(const std::string& spec);
// The file a spec names (a tokenizer.json or tokenizer.model, or the one found in a folder), "" when the
// spec is byte, char or bpe:N (or names no such file).
std::string tokenizer_spec_file(const std::string& spec);
// The kind a spec gives its tokenizer: byte, char, bpe:N as written; a file "hf-bpe" (.json) or
// "sentencepiece" (anything else); what load_tokenizer takes back from a run's folder.
std::string tokenizer_spec_kind(const std::string& spec);
// Loads a tokenizer file (tokenizer.json: Hugging Face byte-level BPE; else a SentencePiece model).
// InputError naming the file and what is wrong.
std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path);
// Builds a tokenizer; char and bpe:N learn from `training_text` (bpe trains SentencePiece, seconds for
// a few MB); a file spec is loaded. InputError for a bad spec or a text SentencePiece cannot train on.
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& spec, const std::string& training_text);
// Loads the tokenizer named `kind` (metadata "tokenizer") from folder `dir` (its file there).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& kind, const std::string& dir);

// Replaces invalid or truncated UTF-8 sequences by U+FFFD.
std::string valid_utf8(const std::string& s);

}  // namespace hr
