#pragma once
// Text generation from a trained language model (the `headroom generate` command and the GUI's Sample
// panel call this).
//
// A Generator owns a CPU backend of its own (its own threads and memory ledger) and an f32 copy of the
// model for batch 1, so it runs on any thread, including while a training run goes on elsewhere; one
// Generator serves one thread at a time. It decodes by re-running the model over the last T tokens for
// every new token (T: the sequence length the model was trained with), which costs O(T) per token;
// there is no key/value cache. Temperature 0 picks the most likely token (greedy, deterministic);
// otherwise logits / temperature, optionally only the top_k most likely, are sampled with a generator
// seeded by `seed` (the same seed, weights and prompt give the same text). Tokens the tokenizer cannot
// decode (a vocabulary padded past the tokenizer's, as GPT-2's 50304) are never sampled.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/tokenizer.h"
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
};

struct GenerateResult {
    std::string text;                      // prompt + completion, valid UTF-8
    std::string completion;                // the generated part, valid UTF-8
    std::vector<std::int32_t> prompt_ids;  // the prompt as the model saw it (the last T tokens at most)
    std::vector<std::int32_t> ids;         // the generated tokens
    double seconds = 0;
    double tokens_per_second = 0;
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

class Generator {
public:
    // From a run folder (its model.safetensors and the tokenizer file beside it), from a weights file
    // (the spec from its metadata, the tokenizer it names from the same folder; a GPT-2 file without
    // metadata takes the byte tokenizer unless `tokenizer_dir` holds one), or from a snapshot.
    // threads: the CPU threads of the Generator's backend (0: all cores).
    static std::unique_ptr<Generator> from_run(const std::string& run_dir, int threads = 1);
    static std::unique_ptr<Generator> from_weights(const std::string& path, int threads = 1);
    static std::unique_ptr<Generator> from_snapshot(const WeightsSnapshot& snapshot, int threads = 1);
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
    std::int64_t context() const { return context_; }  // T

private:
    Generator(const SafeTensorsFile& weights, std::shared_ptr<const Tokenizer> tokenizer, const std::string& where,
              int threads);
    ModelSpec spec_;
    std::shared_ptr<const Tokenizer> tokenizer_;
    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Model> model_;
    std::int64_t context_ = 0;
};

}  // namespace hr
