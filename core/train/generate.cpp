#include "train/generate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "nn/layer.h"
#include "nn/lora_targets.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "train/checkpoint.h"
#include "train/gguf_export.h"

namespace hr {

namespace {
// The length of s without a trailing UTF-8 sequence that is begun but not complete (a character whose
// bytes come from several tokens): streamed text then only grows, never shows a replacement character
// that the next token would take back.
std::size_t complete_utf8_length(const std::string& s) {
    const std::size_t n = s.size();
    for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto c = static_cast<unsigned char>(s[n - back]);
        if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back for the lead
        const std::size_t need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
        return need > back ? n - back : n;
    }
    return n;
}

// A LoRA run's file: its adapters' rank, alpha and (LLaMA) targets, from the tensors' names and shapes and the
// metadata's lora_scale (train/trainer.cpp writes it). Nothing (rank 0) for a file without adapters or scale.
void lora_options_of(const SafeTensorsFile& f, ModelOptions& o) {
    const auto scale = f.metadata.find("lora_scale");
    if (scale == f.metadata.end()) return;
    const std::vector<std::string>& names = lora_target_names();
    for (const SafeTensor& t : f.tensors) {
        if (!is_lora_a(t.name) || t.shape.size() != 2) continue;
        if (o.lora_rank == 0) o.lora_rank = static_cast<int>(t.shape[0]);
        const std::string stem = t.name.substr(0, t.name.rfind('.'));  // "model.layers.0.self_attn.q_proj"
        const std::string proj = stem.substr(stem.rfind('.') + 1);
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == proj) o.lora_targets |= 1 << i;
    }
    if (o.lora_rank > 0) o.lora_alpha = std::strtod(scale->second.c_str(), nullptr) * o.lora_rank;
}

std::string folder_of(const std::string& path) {
    const std::string d = std::filesystem::path(path).parent_path().string();
    return d.empty() ? "." : d;
}
}  // namespace

Generator::Generator(const SafeTensorsFile& weights, std::shared_ptr<const Tokenizer> tokenizer,
                     const std::string& where, int threads)
    : tokenizer_(std::move(tokenizer)) {
    spec_ = model_spec_of(weights, where);
    if (!is_token_model(spec_))
        throw InputError(HR_MSG("generate.not_lm",
                                "%1 holds model '%2', which is not a language model (it does not start with a "
                                "token_embedding); only language models generate text"),
                         {where, spec_.name});
    if (!tokenizer_) tokenizer_ = make_tokenizer("byte", "");
    if (tokenizer_->vocab_size() > model_vocabulary(spec_))
        throw InputError(HR_MSG("generate.vocab",
                                "the %1 tokenizer has %2 tokens but the model only %3; the tokenizer file does not "
                                "belong to these weights"),
                         {tokenizer_->kind(), std::to_string(tokenizer_->vocab_size()),
                          std::to_string(model_vocabulary(spec_))});
    context_ = model_sequence_length(spec_);
    ledger_ = std::make_shared<MemoryLedger>();
    backend_ = make_cpu_backend(threads, ledger_);
    if (auto* cpu = dynamic_cast<CpuBackend*>(backend_.get())) cpu->use_gemv_for_one_row(true);
    ModelOptions o;
    o.batch = 1;
    o.dtype = DType::f32;
    lora_options_of(weights, o);  // a LoRA run's adapters stay adapters (set_adapters_enabled)
    model_ = std::make_unique<Model>(spec_, *backend_, o);
    load_model_state(*model_, weights, where);
    if (model_->can_decode_cached()) model_->allocate_kv_cache(context_);
}

bool Generator::has_kv_cache() const { return model_->kv_cache_positions() > 0; }
std::size_t Generator::kv_cache_bytes() const { return model_->kv_cache_bytes(); }
std::size_t Generator::kv_cache_workspace_bytes() const { return model_->kv_cache_workspace_bytes(); }

bool Generator::has_adapters() const { return model_->lora_param_count() > 0; }
void Generator::set_adapters_enabled(bool on) { model_->set_adapters_enabled(on); }
bool Generator::adapters_enabled() const { return model_->adapters_enabled(); }

Generator::~Generator() = default;

std::unique_ptr<Generator> Generator::from_file(const SafeTensorsFile& weights, std::shared_ptr<const Tokenizer> tokenizer,
                                                const std::string& where, int threads) {
    return std::unique_ptr<Generator>(new Generator(weights, std::move(tokenizer), where, threads));
}

std::unique_ptr<Generator> Generator::from_weights(const std::string& path, int threads,
                                                   std::optional<GgufTensorType> as_exported) {
    SafeTensorsFile f = read_safetensors(path);
    if (as_exported) {
        if (!is_llama_layout(model_spec_of(f, path)))
            throw InputError(HR_MSG("generate.as_exported",
                                    "%1 is not a LLaMA-family model, which GGUF export does not write; --as-exported "
                                    "is for the weights of a model headroom export --gguf can write"),
                             {path});
        round_as_gguf(f, *as_exported, path);
    }
    std::shared_ptr<const Tokenizer> tok;
    if (auto it = f.metadata.find("tokenizer"); it != f.metadata.end()) tok = load_tokenizer(it->second, folder_of(path));
    return std::unique_ptr<Generator>(new Generator(f, std::move(tok), path, threads));
}

std::unique_ptr<Generator> Generator::from_run(const std::string& run_dir, int threads,
                                               std::optional<GgufTensorType> as_exported) {
    const std::string path = run_dir + "/model.safetensors";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw InputError(HR_MSG("generate.no_weights",
                                "%1 holds no model.safetensors; pass the folder of a finished run (headroom train "
                                "--out DIR) or --weights FILE"),
                         {run_dir});
    return from_weights(path, threads, as_exported);
}

std::unique_ptr<Generator> Generator::from_snapshot(const WeightsSnapshot& s, int threads) {
    return std::unique_ptr<Generator>(new Generator(s.weights, s.tokenizer, "the weights of step " +
                                                                                std::to_string(s.step), threads));
}

GenerateResult Generator::generate(const GenerateOptions& o,
                                   const std::function<bool(const std::string&)>& on_token) {
    if (!on_token) return generate_streaming(o, {});
    const std::string prompt = o.prompt;
    return generate_streaming(o, [&](const GeneratedToken& t) { return on_token(valid_utf8(prompt) + *t.completion); });
}

GenerateResult Generator::generate_streaming(const GenerateOptions& o, const TokenCallback& on_token) {
    if (o.tokens < 0 || o.tokens > 1000000)
        throw InputError(HR_MSG("generate.tokens", "the number of tokens to generate must be 0 to 1000000 (--tokens)"));
    if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
        throw InputError(HR_MSG("generate.temperature", "the temperature must be 0 (greedy) or positive (--temperature)"));
    if (o.top_k < 0) throw InputError(HR_MSG("generate.top_k", "top-k must be 0 (all tokens) or positive (--top-k)"));
    const auto t0 = std::chrono::steady_clock::now();
    GenerateResult r;
    std::vector<std::int32_t> ids = tokenizer_->encode(o.prompt.empty() ? std::string("\n") : o.prompt);
    if (ids.empty()) ids = tokenizer_->encode("\n");
    if (static_cast<std::int64_t>(ids.size()) > context_)
        ids.erase(ids.begin(), ids.end() - static_cast<std::ptrdiff_t>(context_));
    r.prompt_ids = ids;
    const std::int64_t V = model_vocabulary(spec_), usable = tokenizer_->vocab_size();
    CpuAllocator host;
    Tensor x = Tensor::empty(host, {1, context_}, DType::i64, MemCategory::data);
    Tensor xdev = Tensor::empty(backend_->allocator(), {1, context_}, DType::i64, MemCategory::data);
    std::vector<float> row(static_cast<std::size_t>(V));
    std::vector<double> p(static_cast<std::size_t>(usable));
    std::vector<std::int32_t> order(static_cast<std::size_t>(usable));
    std::mt19937_64 gen(o.seed * 0x9E3779B97F4A7C15ull + 0x5EEDull);
    const bool use_cache = o.kv_cache && has_kv_cache();
    std::int64_t cached = 0;  // positions of the sequence whose keys and values the cache holds
    for (std::int64_t k = 0; k < o.tokens; ++k) {
        const auto len = static_cast<std::int64_t>(ids.size());
        if (use_cache && len <= context_) {
            // the tokens the cache has not seen (the prompt, then the last one) at their positions
            const std::int64_t n = len - cached;
            Tensor xt = x.view(0, {1, n});
            std::int64_t* px = xt.data<std::int64_t>();
            for (std::int64_t i = 0; i < n; ++i) px[i] = ids[static_cast<std::size_t>(cached + i)];
            Tensor xd = xdev.view(0, {1, n});
            backend_->copy_from_host(px, xd);
            Tensor logits = model_->forward_cached(xd, cached);  // (1, n, V)
            backend_->copy_to_host(logits.view((n - 1) * V, {V}), row.data());
            if (n == 1) ++r.cached_tokens;
            cached = len;
        } else {
            // the window: the last T tokens
            const std::int64_t t = std::min<std::int64_t>(context_, len);
            Tensor xt = x.view(0, {1, t});
            std::int64_t* px = xt.data<std::int64_t>();
            for (std::int64_t i = 0; i < t; ++i) px[i] = ids[ids.size() - static_cast<std::size_t>(t) + static_cast<std::size_t>(i)];
            Tensor xd = xdev.view(0, {1, t});
            backend_->copy_from_host(px, xd);
            Tensor logits = model_->forward(xd, false);  // (1, t, V)
            backend_->copy_to_host(logits.view((t - 1) * V, {V}), row.data());
        }
        std::int32_t next = 0;
        if (o.temperature == 0) {
            next = static_cast<std::int32_t>(std::max_element(row.begin(), row.begin() + usable) - row.begin());
        } else {
            for (std::int64_t i = 0; i < usable; ++i) order[i] = static_cast<std::int32_t>(i);
            std::int64_t keep = usable;
            if (o.top_k > 0 && o.top_k < usable) {
                keep = o.top_k;
                std::nth_element(order.begin(), order.begin() + (keep - 1), order.end(),
                                 [&](std::int32_t a, std::int32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
                std::sort(order.begin(), order.begin() + keep);
            }
            double mx = -INFINITY;
            for (std::int64_t i = 0; i < keep; ++i) mx = std::max(mx, double(row[order[i]]) / o.temperature);
            double sum = 0;
            for (std::int64_t i = 0; i < keep; ++i) {
                p[i] = std::exp(double(row[order[i]]) / o.temperature - mx);
                sum += p[i];
            }
            const double u = static_cast<double>(gen() >> 11) * 0x1.0p-53 * sum;
            double acc = 0;
            next = order[keep - 1];
            for (std::int64_t i = 0; i < keep; ++i) {
                acc += p[i];
                if (u < acc) {
                    next = order[i];
                    break;
                }
            }
        }
        ids.push_back(next);
        r.ids.push_back(next);
        if (on_token) {
            const std::string bytes = tokenizer_->decode(r.ids);
            const std::size_t whole = complete_utf8_length(bytes);
            const std::string completion = valid_utf8(whole == bytes.size() ? bytes : bytes.substr(0, whole));
            GeneratedToken t;
            t.id = next;
            t.index = k;
            t.requested = o.tokens;
            t.completion = &completion;
            if (!on_token(t)) break;
        }
    }
    r.completion = valid_utf8(tokenizer_->decode(r.ids));
    r.text = valid_utf8(o.prompt) + r.completion;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.tokens_per_second = r.seconds > 0 ? static_cast<double>(r.ids.size()) / r.seconds : 0;
    return r;
}

}  // namespace hr
