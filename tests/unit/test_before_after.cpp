// Before and after (train/before_after.h; issue 57 item 5). The adapters-off switch
// (Model::set_adapters_enabled) against models built without LoRA: a LLaMA model with adapters on all seven
// projections (their B moved off zero so that they change the output), a QLoRA one (NF4 base) and an MLP of
// `linear` layers give, with the adapters off, the logits of a plain model (no LoRA code in it) loaded with the
// same base weights, and with them on something else; the cached decoding path too. Then the runs: a LoRA run
// and a full run from --init-from on llama-tiny. The "before" Generator of each (start_generator) greedy- and
// sample-decodes exactly what a Generator of the base weights file alone does; the step-0 validation loss
// (TrainResult::loss_before, run.json's "before") equals evaluate_weights of the base file, an evaluation with
// no trainer in it; the after Generator of the LoRA run (adapters on, not merged) decodes what the merged
// weights decode; its peft adapter exported equals the one the run wrote, and a full run's is refused.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "nn/transformer_spec.h"
#include "tensor/quantized_format.h"
#include "test_support.h"
#include "train/before_after.h"
#include "train/checkpoint.h"
#include "train/eval_weights.h"
#include "train/generate.h"
#include "train/peft_export.h"
#include "train/run_summary.h"
#include "train/trainer.h"

using namespace hr;

namespace {

std::vector<float> host(Backend& be, const Tensor& t) {
    std::vector<float> v(static_cast<std::size_t>(t.numel()));
    be.copy_to_host(t, v.data());
    return v;
}

double maxDiff(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
    return d;
}

// Every lora_B of the model set to small random values (PEFT starts them at zero: the adapters would change nothing)
void moveAdapters(Model& m, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<float> n(0.0f, 0.05f);
    for (NamedTensor& nt : m.state_dict()) {
        if (last_name_component(nt.name) != "lora_B") continue;
        std::vector<float> v(static_cast<std::size_t>(nt.tensor.numel()));
        for (float& x : v) x = n(gen);
        m.backend().copy_from_host(v.data(), nt.tensor);
    }
}

// The model's state file without its adapters (and their scale): the base alone
SafeTensorsFile baseOnly(Model& m) {
    SafeTensorsFile f = model_state_file(m);
    SafeTensorsFile out;
    out.metadata = f.metadata;
    out.metadata.erase("lora_scale");
    for (SafeTensor& t : f.tensors)
        if (!is_lora_adapter(t.name)) out.tensors.push_back(std::move(t));
    return out;
}

Tensor tokens(Backend& be, CpuAllocator& host_alloc, std::int64_t n, std::int64_t vocab) {
    Tensor x = Tensor::empty(host_alloc, {1, n}, DType::i64, MemCategory::data);
    for (std::int64_t i = 0; i < n; ++i) x.data<std::int64_t>()[i] = (i * 37 + 11) % vocab;
    Tensor d = Tensor::empty(be.allocator(), {1, n}, DType::i64, MemCategory::data);
    be.copy_from_host(x.raw(), d);
    return d;
}

// the base's text, and another the fine-tuning runs learn (so that they change what the model says)
std::string text_file(bool tuning = false) {
    const std::string dir = hrtest::temp_dir(tuning ? "before-after-tune" : "before-after-text");
    if (!std::filesystem::exists(dir + "/text.txt")) {
        std::ofstream f(dir + "/text.txt");
        const char* lines[] = {"the cat sat on the mat\n", "a dog ran in the fog\n", "one two three four five\n",
                               "red green blue yellow\n"};
        const char* tune[] = {"the cat is a zebra now\n", "the cat says moo\n"};
        for (int i = 0; i < 3000; ++i) f << (tuning ? tune[i % 2] : lines[(i * 7) % 4]);
    }
    return dir + "/text.txt";
}

TrainConfig lmConfig(const std::string& init_from) {
    TrainConfig c;
    c.model = preset_model("llama-tiny");
    c.data = "text:" + text_file(!init_from.empty());
    c.steps = 80;
    c.batch = 8;
    c.threads = 2;
    c.seed = 3;
    c.optimizer.kind = "adamw";
    c.optimizer.lr = 1e-2;
    c.eval_every = 0;
    c.eval_tokens = 512;
    c.init_from = init_from;
    return c;
}

TrainResult runIn(const TrainConfig& c, const std::string& dir) {
    Trainer t(c);
    t.set_run_folder(dir);
    TrainResult r = t.run();
    if (r.status != "finished") throw std::runtime_error("training: " + r.error);
    t.save_weights(dir + "/model.safetensors");
    return r;
}

std::vector<std::int32_t> decode(Generator& g, double temperature) {
    GenerateOptions o;
    o.prompt = "the cat";
    o.tokens = 24;
    o.temperature = temperature;
    o.top_k = 0;
    o.seed = 7;
    return g.generate(o).ids;
}

}  // namespace

class TestBeforeAfter : public QObject {
    Q_OBJECT
private slots:
    // A LLaMA model with adapters on all seven projections, plain LoRA and QLoRA (NF4 base)
    void adaptersOffIsTheBaseModel_data() {
        QTest::addColumn<int>("bits");
        QTest::newRow("lora") << 0;
        QTest::newRow("qlora-nf4") << kQuantNf4;
    }
    void adaptersOffIsTheBaseModel() {
        QFETCH(int, bits);
        auto be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        const ModelSpec spec = preset_model("llama-tiny");
        ModelOptions lo;
        lo.batch = 1;
        lo.seed = 9;
        lo.lora_rank = 4;
        lo.lora_alpha = 8;
        lo.lora_targets = 0x7f;
        lo.lora_base_bits = bits;
        Model lora(spec, *be, lo);
        moveAdapters(lora, 21);
        // the reference: a model without LoRA, loaded with the base the LoRA model holds (QLoRA's dequantised)
        ModelOptions po;
        po.batch = 1;
        po.seed = 1;  // (other initial weights: everything comes from the file)
        Model plain(spec, *be, po);
        QCOMPARE(plain.lora_param_count(), std::int64_t(0));
        load_model_state(plain, baseOnly(lora), "base");
        CpuAllocator h;
        const std::int64_t T = 24;
        const Tensor x = tokens(*be, h, T, 256);
        const std::vector<float> ref = host(*be, plain.forward(x, false));
        const std::vector<float> on = host(*be, lora.forward(x, false));
        QVERIFY2(maxDiff(on, ref) > 1e-3, "the moved adapters change the logits");
        lora.set_adapters_enabled(false);
        QVERIFY(!lora.adapters_enabled());
        const std::vector<float> off = host(*be, lora.forward(x, false));
        QVERIFY2(maxDiff(off, ref) < 1e-5, qPrintable(QString::number(maxDiff(off, ref))));
        // the cached decoding path (generation): the whole prompt, then one token against the cache
        QVERIFY(lora.can_decode_cached() && plain.can_decode_cached());
        lora.allocate_kv_cache(T);
        plain.allocate_kv_cache(T);
        const std::vector<float> offc = host(*be, lora.forward_cached(x.view(0, {1, T - 1}), 0));
        const std::vector<float> refc = host(*be, plain.forward_cached(x.view(0, {1, T - 1}), 0));
        QVERIFY(maxDiff(offc, refc) < 1e-5);
        const Tensor last = x.view(T - 1, {1, 1});
        QVERIFY(maxDiff(host(*be, lora.forward_cached(last, T - 1)), host(*be, plain.forward_cached(last, T - 1))) < 1e-5);
        // on again: the adapted model's logits again (nothing was changed by switching)
        lora.set_adapters_enabled(true);
        QCOMPARE(host(*be, lora.forward(x, false)), on);
    }

    // `linear` layers (an MLP): the same switch in the other layer that carries adapters
    void adaptersOffInLinearLayers() {
        auto be = make_cpu_backend(2, std::make_shared<MemoryLedger>());
        const ModelSpec spec = preset_model("mlp");
        ModelOptions lo;
        lo.batch = 3;
        lo.lora_rank = 2;
        Model lora(spec, *be, lo);
        moveAdapters(lora, 5);
        ModelOptions po;
        po.batch = 3;
        Model plain(spec, *be, po);
        load_model_state(plain, baseOnly(lora), "base");
        CpuAllocator h;
        Tensor xh = Tensor::empty(h, {3, 1, 28, 28}, DType::f32, MemCategory::data);
        for (std::int64_t i = 0; i < xh.numel(); ++i) xh.data<float>()[i] = float((i * 13) % 17) / 17.0f;
        Tensor x = Tensor::empty(be->allocator(), xh.shape(), DType::f32, MemCategory::data);
        be->copy_from_host(xh.raw(), x);
        const std::vector<float> ref = host(*be, plain.forward(x, false));
        QVERIFY(maxDiff(host(*be, lora.forward(x, false)), ref) > 1e-4);
        lora.set_adapters_enabled(false);
        QVERIFY(maxDiff(host(*be, lora.forward(x, false)), ref) < 1e-6);
    }

    // The runs: a LoRA run and a full run, both from the same base file
    void runsBeforeAndAfter() {
        const std::string root = hrtest::temp_dir("before-after-runs");
        // the base: llama-tiny trained briefly (a model that says something), written as a plain weights file
        const std::string baseDir = root + "/base";
        std::filesystem::create_directories(baseDir);
        runIn(lmConfig(""), baseDir);
        const std::string base = baseDir + "/model.safetensors";
        // a run trained from fresh weights with no step-0 checkpoint has no "before": one message
        try {
            run_start_weights(baseDir);
            QFAIL("a fresh run has no before");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("freshly initialised") != std::string::npos, e.what());
        }
        auto baseGen = Generator::from_weights(base, 1);
        QVERIFY(!baseGen->has_adapters());
        const auto refGreedy = decode(*baseGen, 0), refSampled = decode(*baseGen, 0.9);
        // the independent evaluation of the base file
        const WeightsEvaluation ev = evaluate_weights(lmConfig(base), base);  // (on the fine-tuning text)
        QVERIFY(ev.language_model && std::isfinite(ev.test_loss));

        // LoRA r 4 on q and v, from the base
        {
            TrainConfig c = lmConfig(base);
            c.strategy.lora_rank = 4;
            c.strategy.lora_alpha = 8;
            c.optimizer.lr = 3e-2;
            c.steps = 60;
            const std::string dir = root + "/lora";
            std::filesystem::create_directories(dir);
            const TrainResult r = runIn(c, dir);
            QCOMPARE(r.evals.front().step, std::int64_t(0));
            QVERIFY2(std::abs(r.loss_before - ev.test_loss) < 1e-4 * std::max(1.0, ev.test_loss),
                     qPrintable(QStringLiteral("%1 vs %2").arg(r.loss_before).arg(ev.test_loss)));
            QCOMPARE(run_final_summary(r)["before"]["test_loss"].get<double>(), r.loss_before);
            const StartWeights s = run_start_weights(dir);
            QVERIFY(s.kind == StartWeights::Kind::adapters_off);
            auto before = start_generator(dir, 1);
            QVERIFY(before->has_adapters() && !before->adapters_enabled());
            QCOMPARE(decode(*before, 0), refGreedy);
            QCOMPARE(decode(*before, 0.9), refSampled);
            // after: the adapters on, as the merged weights decode
            auto after = Generator::from_run(dir, 1);
            QVERIFY(after->has_adapters() && after->adapters_enabled());
            const SafeTensorsFile merged = merge_lora_adapters(read_safetensors(dir + "/model.safetensors"), dir);
            SafeTensorsFile mergedMeta = merged;
            mergedMeta.metadata.erase("lora_scale");
            std::shared_ptr<const Tokenizer> tok = load_tokenizer(merged.metadata.at("tokenizer"), dir);
            auto mergedGen = Generator::from_file(mergedMeta, tok, "merged", 1);
            QVERIFY(!mergedGen->has_adapters());
            const auto afterGreedy = decode(*after, 0);
            qInfo("before %s | after %s | loss %g -> %g", after->tokenizer().decode(refGreedy).c_str(),
                  after->tokenizer().decode(afterGreedy).c_str(), r.loss_before, r.test_loss);
            QCOMPARE(afterGreedy, decode(*mergedGen, 0));
            QVERIFY2(afterGreedy != refGreedy, "the adapters trained: the greedy text changed");
            // one Generator, switched: before, then after again
            after->set_adapters_enabled(false);
            QCOMPARE(decode(*after, 0), refGreedy);
            after->set_adapters_enabled(true);
            QCOMPARE(decode(*after, 0), afterGreedy);
            // its peft adapter, exported: the files the run wrote beside its weights, byte for byte
            const PeftExportResult pe = export_peft_adapter(dir, root + "/peft");
            QCOMPARE(pe.rank, 4);
            QCOMPARE(pe.alpha, 8.0);
            for (const std::string& f : pe.files) {
                std::ifstream a(dir + "/" + f, std::ios::binary), b(root + "/peft/" + f, std::ios::binary);
                const std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
                QVERIFY2(!sa.empty() && sa == sb, f.c_str());
            }
        }
        // full training from the base
        {
            const std::string dir = root + "/full";
            std::filesystem::create_directories(dir);
            const TrainResult r = runIn(lmConfig(base), dir);
            QVERIFY(std::isnan(r.lora_before_loss));
            QVERIFY2(std::abs(r.loss_before - ev.test_loss) < 1e-4 * std::max(1.0, ev.test_loss),
                     qPrintable(QStringLiteral("%1 vs %2").arg(r.loss_before).arg(ev.test_loss)));
            const StartWeights s = run_start_weights(dir);
            QVERIFY(s.kind == StartWeights::Kind::init_from);
            QCOMPARE(s.path, base);
            auto before = start_generator(dir, 1);
            QCOMPARE(decode(*before, 0), refGreedy);
            QCOMPARE(decode(*before, 0.9), refSampled);
            QVERIFY(decode(*Generator::from_run(dir, 1), 0) != refGreedy);
            // no adapters: no peft adapter, one message, nothing written
            try {
                export_peft_adapter(dir, root + "/peft-full");
                QFAIL("a full run has no adapters");
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("not a LoRA run") != std::string::npos, e.what());
            }
            QVERIFY(!std::filesystem::exists(root + "/peft-full"));
            // the starting file gone: one message naming it
            const std::string moved = root + "/moved.safetensors";
            std::filesystem::rename(base, moved);
            try {
                start_generator(dir, 1);
                QFAIL("the init-from file is gone");
            } catch (const InputError& e) {
                QVERIFY2(std::string(e.what()).find("no longer there") != std::string::npos, e.what());
            }
            std::filesystem::rename(moved, base);
        }
    }
};

QTEST_GUILESS_MAIN(TestBeforeAfter)
#include "test_before_after.moc"
