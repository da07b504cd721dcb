#pragma once
// Text generation from a trained language model (the `headroom generate` command and the GUI's Sample
// panel call this).
//
// A Generator owns a CPU backend of its own (its own threads and memory ledger) and an f32 copy of the
// model for batch 1, so it runs on any thread, including while a training run goes on elsewhere; one
// Generator serves one thread at a time.
//
// GPT and LLaMA-family models decode with a key/value cache (Model::forward_cached): the prompt goes
// through the model once, filling each attention layer's keys and values, and each new token is then a
// one-token forward that attends over the cached positions (O(1) model work per token besides that
// attention). The cache holds T positions (T: the sequence length the model was trained with) and lives
// in the Generator's memory ledger: 2 x T x (KV heads x head size) f32 values per attention layer,
// category activations, plus the attention's scratch (workspace); kv_cache_bytes() says how much. Once
// prompt and completion exceed T tokens, each further token re-runs the model over the last T tokens, as
// every token did before the cache (a sliding window: the same tokens as without a cache, O(T) per
// token). Models with other layers always decode that way. Temperature 0 picks the most likely token (greedy, deterministic);
// otherwise logits / temperature, optionally only the top_k most likely, are sampled with a generator
// seeded by `seed` (the same seed, weights and prompt give the same text). Tokens the tokenizer cannot
// decode (a vocabulary padded past the tokenizer's, as GPT-2's 50304) are never sampled.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/tokenizer.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"

namespace hr {

// The weights of a model at one step, copied to the host (Trainer::request_snapshot), with its tokenizer.
struct WeightsSnapshot {
    SafeTensorsFile weights;                     // metadata: model_spec, tokenizer
    std::shared_ptr<const Tokenizer> tokenizer;  // null for image models
    std::int64_t step = 0;
};

struct GenerateOptions {
    std::string prompt;         // may be empty: generation then starts after a newline
    std::int64_t tokens = 200;  // new tokens to generate
    double temperature = 0.8;   // 0: greedy
    int top_k = 0;              // 0: the whole vocabulary
    std::uint64_t seed = 1;
    // false: never use the key/value cache, re-run the model over the last T tokens for every token (the
    // reference the cache is tested against; the same tokens at temperature 0)
    bool kv_cache = true;
};

struct GenerateResult {
    std::string text;                      // prompt + completion, valid UTF-8
    std::string completion;                // the generated part, valid UTF-8
    std::vector<std::int32_t> prompt_ids;  // the prompt as the model saw it (the last T tokens at most)
    std::vector<std::int32_t> ids;         // the generated tokens
    double seconds = 0;
    double tokens_per_second = 0;
    std::int64_t cached_tokens = 0;  // tokens computed by a one-token forward against the key/value cache
};

// One new token, as generate() hands it to a per-token callback (on the generating thread, right after
// the token is chosen and before the next one is computed).
struct GeneratedToken {
    std::int32_t id = 0;             // the token
    std::int64_t index = 0;          // 0 for the first new token
    std::int64_t requested = 0;      // GenerateOptions::tokens
    const std::string* completion = nullptr;  // the generated text so far, valid UTF-8; a character whose
                                              // bytes span tokens shows once complete, so it only grows.
                                              // Valid during the call only.
};
// Returning false stops generation after this token; the result then holds the tokens so far.
using TokenCallback = std::function<bool(const GeneratedToken& token)>;

class Model;
class Backend;
class MemoryLedger;

class Generator {
public:
    // From a run folder (its model.safetensors and the tokenizer file beside it), from a weights file
    // (the spec from its metadata, the tokenizer it names from the same folder; a GPT-2 file without
    // metadata takes the byte tokenizer unless `tokenizer_dir` holds one), or from a snapshot.
    // threads: the CPU threads of the Generator's backend (0: all cores).
    // as_exported: compute on the weights as `headroom export --gguf --type T` stores them (LoRA merged,
    // matrices rounded as that type; train/gguf_export.h round_as_gguf), rounded in place on load: the
    // tokens llama.cpp should give for that file, up to its own arithmetic.
    static std::unique_ptr<Generator> from_run(const std::string& run_dir, int threads = 1,
                                               std::optional<GgufTensorType> as_exported = std::nullopt);
    static std::unique_ptr<Generator> from_weights(const std::string& path, int threads = 1,
                                                   std::optional<GgufTensorType> as_exported = std::nullopt);
    static std::unique_ptr<Generator> from_snapshot(const WeightsSnapshot& snapshot, int threads = 1);
    // From a weights file's metadata (model spec, tokenizer) with another file's tensors: a run's starting
    // weights (train/before_after.h). `where` names them in messages.
    static std::unique_ptr<Generator> from_file(const SafeTensorsFile& weights, std::shared_ptr<const Tokenizer> tokenizer,
                                                const std::string& where, int threads = 1);
    ~Generator();

    // on_token, when given, receives the text so far after every token; returning false stops early.
    // An empty prompt starts from a newline (encoded by the tokenizer). InputError for a prompt the
    // tokenizer cannot encode or options out of range.
    GenerateResult generate(const GenerateOptions& options,
                            const std::function<bool(const std::string& text_so_far)>& on_token = {});
    // The same with a per-token callback (streaming: the GUI's Sample panel). The tokens, and so the
    // text, are those of generate() without a callback for the same options; the callback only watches.
    GenerateResult generate_streaming(const GenerateOptions& options, const TokenCallback& on_token);

    const ModelSpec& spec() const { return spec_; }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    // A LoRA run's weights (adapters "X.lora_A"/"X.lora_B" and the metadata's lora_scale) are kept as the
    // model's adapters, not merged: the rank from A's rows, alpha = lora_scale x rank, the LLaMA targets from
    // the names (a QLoRA run's file holds its base dequantised: the values it computed with). Switching them
    // off (Model::set_adapters_enabled) gives the base model the run started from, with no second copy.
    bool has_adapters() const;
    void set_adapters_enabled(bool on);
    bool adapters_enabled() const;
    std::int64_t context() const { return context_; }  // T
    // Whether this model decodes with a key/value cache, and the cache's bytes (keys and values; its scratch)
    bool has_kv_cache() const;
    std::size_t kv_cache_bytes() const;
    std::size_t kv_cache_workspace_bytes() const;
    // The memory ledger of the Generator's backend (the model for batch 1 and the cache)
    const MemoryLedger& ledger() const { return *ledger_; }

private:
    Generator(const SafeTensorsFile& weights, std::shared_ptr<const Tokenizer> tokenizer, const std::string& where,
              int threads);
    ModelSpec spec_;
    std::shared_ptr<const Tokenizer> tokenizer_;
    std::shared_ptr<MemoryLedger> ledger_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Model> model_;
    std::int64_t context_ = 0;
};

}  // namespace hr
