// Generation with a key/value cache (train/generate.h, Model::forward_cached): for gpt-tiny and
// llama-tiny (grouped-query attention, 4 query / 2 key-value heads) trained briefly, and a llama-tiny with
// Llama 3's rope scaling, the tokens at temperature 0 (and sampled, same seed) are exactly those of the
// path without a cache that re-runs the whole window for every token (GenerateOptions::kv_cache false,
// today's path, kept as the reference), also past the context where both slide the window; the logits of
// each cached one-token forward match the whole sequence's forward; and the cache's bytes in the ledger
// are the formula's: 2 x layers x T x KV heads x head size x 4 (activations) plus the attention's scratch
// (workspace).
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "backend/cpu/cpu_backend.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "test_support.h"
#include "train/generate.h"
#include "train/trainer.h"

using namespace hr;

namespace {

std::string text_file() {
    static const std::string path = [] {
        const std::string dir = hrtest::temp_dir("kv-text");
        std::ofstream f(dir + "/text.txt");
        const char* lines[] = {"the cat sat on the mat\n", "a dog ran in the fog\n", "one two three four five\n",
                               "red green blue yellow\n"};
        for (int i = 0; i < 4000; ++i) f << lines[(i * 7) % 4];
        return dir + "/text.txt";
    }();
    return path;
}

// Trains `model` for a few steps on the text and returns its weights file.
std::string trained(const ModelSpec& model, const std::string& name) {
    TrainConfig c;
    c.model = model;
    c.data = "text:" + text_file();
    c.steps = 40;
    c.batch = 8;
    c.threads = 2;
    c.seed = 5;
    c.optimizer.kind = "adamw";
    c.optimizer.lr = 3e-3;
    c.eval_every = 0;
    c.eval_tokens = 1024;
    Trainer t(c);
    const TrainResult r = t.run();
    if (r.status != "finished") throw std::runtime_error("training " + name + ": " + r.error);
    const std::string dir = hrtest::temp_dir("kv-" + name);
    t.save_weights(dir + "/model.safetensors");
    return dir + "/model.safetensors";
}

// llama-tiny with Llama 3's rope scaling (factor 8, low 1, high 4, original context 32: every regime of
// the frequencies is met within 128 positions)
ModelSpec llama_scaled() {
    ModelSpec s = preset_model("llama-tiny");
    s.name = "llama-tiny-scaled";
    for (LayerSpec& l : s.layers)
        if (l.type == "llama_block") {
            l.attrs["rope_factor"] = 8.0;
            l.attrs["rope_low_freq_factor"] = 1.0;
            l.attrs["rope_high_freq_factor"] = 4.0;
            l.attrs["rope_original_max_positions"] = 32.0;
        }
    return s;
}

std::int64_t attr(const ModelSpec& s, const char* type, const char* name) {
    for (const LayerSpec& l : s.layers)
        if (l.type == type) return std::llround(l.attrs.at(name).get<double>());
    throw std::runtime_error(std::string("no ") + type);
}

}  // namespace

class KvCacheGenerationTest : public QObject {
    Q_OBJECT

    // The same tokens with and without the cache, greedy and sampled, within the context and past it.
    void sameTokens(const std::string& weights) {
        auto g = Generator::from_weights(weights, 2);
        QVERIFY(g->has_kv_cache());
        const std::int64_t T = g->context();
        QCOMPARE(T, std::int64_t(128));
        GenerateOptions o;
        o.prompt = "the cat ";
        o.tokens = 100;
        o.temperature = 0;
        GenerateResult cached = g->generate(o);
        o.kv_cache = false;
        GenerateResult full = g->generate(o);
        QCOMPARE(full.cached_tokens, std::int64_t(0));
        const auto p = static_cast<std::int64_t>(cached.prompt_ids.size());
        QCOMPARE(cached.cached_tokens, o.tokens - 1);  // all but the first (the prompt's forward)
        QCOMPARE(cached.ids, full.ids);
        QCOMPARE(cached.text, full.text);
        // past the context: the window slides, as without the cache
        o.tokens = T + 40;
        o.kv_cache = false;
        full = g->generate(o);
        o.kv_cache = true;
        cached = g->generate(o);
        QCOMPARE(cached.cached_tokens, T - p);  // positions p + 1 .. T one token each, then whole windows
        QCOMPARE(cached.ids, full.ids);
        // sampled: the same draws (the same seed) from the same probabilities
        o.tokens = 60;
        o.temperature = 0.9;
        o.top_k = 20;
        o.seed = 7;
        cached = g->generate(o);
        o.kv_cache = false;
        full = g->generate(o);
        QCOMPARE(cached.ids, full.ids);
        // a generator used again starts a new sequence: the same tokens once more
        o.kv_cache = true;
        QCOMPARE(g->generate(o).ids, full.ids);
    }

    // The logits of one-token forwards against the cache match those of the whole sequence's forward.
    void sameLogits(const ModelSpec& spec) {
        auto backend = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        ModelOptions mo;
        mo.batch = 1;
        mo.seed = 11;
        Model m(spec, *backend, mo);
        QVERIFY(m.can_decode_cached());
        const std::int64_t T = spec.input_shape[0], V = spec.num_classes;
        m.allocate_kv_cache(T);
        Tensor ids = Tensor::empty(backend->allocator(), {1, T}, DType::i64, MemCategory::data);
        std::int64_t* pi = ids.data<std::int64_t>();
        for (std::int64_t t = 0; t < T; ++t) pi[t] = (t * 37 + 11) % V;
        std::vector<float> whole(static_cast<std::size_t>(T * V)), row(static_cast<std::size_t>(V));
        backend->copy_to_host(m.forward(ids, false), whole.data());
        // a prompt of 5 tokens at once, then one token at a time
        const std::int64_t prompt = 5;
        double worst = 0, scale = 0;
        for (std::int64_t pos = 0; pos < T;) {
            const std::int64_t n = pos == 0 ? prompt : 1;
            Tensor x = Tensor::empty(backend->allocator(), {1, n}, DType::i64, MemCategory::data);
            for (std::int64_t i = 0; i < n; ++i) x.data<std::int64_t>()[i] = pi[pos + i];
            Tensor logits = m.forward_cached(x, pos);
            QCOMPARE(logits.shape(), (Shape{1, n, V}));
            for (std::int64_t i = 0; i < n; ++i) {
                backend->copy_to_host(logits.view(i * V, {V}), row.data());
                for (std::int64_t v = 0; v < V; ++v) {
                    const double ref = whole[static_cast<std::size_t>((pos + i) * V + v)];
                    worst = std::max(worst, std::abs(double(row[static_cast<std::size_t>(v)]) - ref));
                    scale = std::max(scale, std::abs(ref));
                }
            }
            pos += n;
        }
        QVERIFY2(worst <= 1e-5 * std::max(1.0, scale), qPrintable(QStringLiteral("max |diff| %1 (logits up to %2)")
                                                                      .arg(worst).arg(scale)));
    }

private slots:
    void gptTinySameTokens() { sameTokens(trained(preset_model("gpt-tiny"), "gpt")); }
    void llamaTinySameTokens() { sameTokens(trained(preset_model("llama-tiny"), "llama")); }
    void llamaRopeScalingSameTokens() { sameTokens(trained(llama_scaled(), "llama-scaled")); }

    void gptTinySameLogits() { sameLogits(preset_model("gpt-tiny")); }
    void llamaTinySameLogits() { sameLogits(preset_model("llama-tiny")); }
    void llamaRopeScalingSameLogits() { sameLogits(llama_scaled()); }

    // The cache's bytes in the Generator's ledger are the formula's, in activations and workspace.
    void ledgerHoldsTheCache() {
        for (const char* name : {"gpt-tiny", "llama-tiny"}) {
            const ModelSpec spec = preset_model(name);
            const bool llama = std::string(name) == "llama-tiny";
            const char* block = llama ? "llama_block" : "transformer_block";
            const std::int64_t layers = 2, T = 128, C = attr(spec, block, "dim"), H = attr(spec, block, "heads");
            const std::int64_t KV = llama ? attr(spec, block, "kv_heads") : H, D = C / H;
            QCOMPARE(C, std::int64_t(128));
            QCOMPARE(KV, std::int64_t(llama ? 2 : 4));
            const std::size_t expect = static_cast<std::size_t>(2 * layers * T * KV * D * 4);  // f32 keys and values
            QCOMPARE(expect, std::size_t(llama ? 131072 : 262144));
            // the Generator's model without a cache, built the same way, for the ledger's other bytes
            auto backend = make_cpu_backend(1, std::make_shared<MemoryLedger>());
            ModelOptions mo;
            mo.batch = 1;
            Model bare(spec, *backend, mo);
            const CategoryBytes model_bytes = bare.allocated_bytes();
            // a weights file for the Generator
            const std::string dir = hrtest::temp_dir(std::string("kv-ledger-") + name);
            {
                TrainConfig c;
                c.model = spec;
                c.data = "text:" + text_file();
                c.steps = 1;
                c.batch = 2;
                c.threads = 1;
                c.eval_every = 0;
                c.eval_tokens = 256;
                Trainer t(c);
                QVERIFY(t.run().status == "finished");
                t.save_weights(dir + "/model.safetensors");
            }
            auto g = Generator::from_weights(dir + "/model.safetensors", 1);
            QCOMPARE(g->kv_cache_bytes(), expect);
            // the scratch: one thread's Q and O tiles (64 x D each) and scores (64 x T), f32
            const std::size_t ws = static_cast<std::size_t>((2 * 64 * D + 64 * T) * 4);
            QCOMPARE(g->kv_cache_workspace_bytes(), ws);
            const MemoryLedger& l = g->ledger();
            QCOMPARE(l.live_bytes(MemCategory::activations), at(model_bytes, MemCategory::activations) + expect);
            QCOMPARE(l.live_bytes(MemCategory::workspace), at(model_bytes, MemCategory::workspace) + ws);
            QCOMPARE(l.live_bytes(MemCategory::parameters), at(model_bytes, MemCategory::parameters));
        }
    }
};

QTEST_GUILESS_MAIN(KvCacheGenerationTest)
#include "test_kv_cache_generation.moc"
