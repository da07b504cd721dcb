// Language models end to end on the CPU: the trainer on text (validation every eval_every steps and at
// the end, tokens/s, run.json fields), the tokenizer stored next to the weights, generation from the
// weights file and from a snapshot taken during the run on another thread (deterministic for a seed,
// greedy at temperature 0), and the errors a person meets.
#include <QtTest>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/error.h"
#include "io/safetensors.h"
#include "nn/transformer_spec.h"
#include "test_support.h"
#include "train/generate.h"
#include "train/run_record.h"
#include "train/trainer.h"

using namespace hr;

namespace {

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

ModelSpec small_gpt(int vocab = 256) {
    ModelSpec s;
    s.name = "gpt-test";
    s.input_shape = {32};
    s.num_classes = vocab;
    s.layers = {L("token_embedding", {{"vocab_size", vocab}, {"dim", 32}}),
                L("position_embedding", {{"max_positions", 64}, {"dim", 32}}),
                L("dropout", {{"p", 0.0}}),
                L("transformer_block", {{"dim", 32}, {"heads", 2}}),
                L("transformer_block", {{"dim", 32}, {"heads", 2}}),
                L("layernorm", {{"dim", 32}}),
                L("lm_head", {{"dim", 32}, {"vocab_size", vocab}})};
    return s;
}

// A text with strong regularities: a model learns it within a few dozen steps.
std::string text_file() {
    static const std::string path = [] {
        const std::string dir = hrtest::temp_dir("lm-text");
        std::ofstream f(dir + "/abc.txt");
        for (int i = 0; i < 3000; ++i) f << "abcabc " << char('a' + i % 3) << "xyz\n";
        return dir + "/abc.txt";
    }();
    return path;
}

TrainConfig config(const std::string& tokenizer = "byte") {
    TrainConfig c;
    c.model = small_gpt();
    c.data = "text:" + text_file();
    c.steps = 100;
    c.batch = 8;
    c.threads = 2;
    c.seed = 3;
    c.optimizer.kind = "adamw";
    c.optimizer.lr = 1e-2;
    c.schedule.kind = "cosine";
    c.schedule.warmup_steps = 10;
    c.optimizer.weight_decay = 0.1;
    c.optimizer.grad_clip = 1.0;
    c.seq = 24;  // shorter than the model's 32: apply_sequence_length
    c.tokenizer = tokenizer;
    c.eval_every = 20;
    c.eval_tokens = 2048;
    return c;
}

}  // namespace

class LanguageModelTest : public QObject {
    Q_OBJECT

private slots:
    void trainsEvaluatesAndRecords() {
        TrainConfig c = config();
        std::vector<EvalEvent> seen;
        std::vector<double> grad_norms;
        TrainCallbacks cb;
        cb.on_eval = [&](const EvalEvent& e) { seen.push_back(e); };
        std::vector<DeviceEvent> devices;  // the device line, once, before the first step (as for images)
        cb.on_device = [&](const DeviceEvent& e) { devices.push_back(e); };
        cb.on_step = [&](const StepEvent& e) {
            QCOMPARE(devices.size(), std::size_t(1));
            QVERIFY(e.tokens_per_second > 0);
            QCOMPARE(e.tokens_per_second, e.images_per_second * 24);
            grad_norms.push_back(e.grad_norm);
        };
        Trainer t(c, cb);
        TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(devices.size(), std::size_t(1));
        QCOMPARE(devices[0].device, std::string("cpu"));
        QCOMPARE(devices[0].name, r.device_name);
        QCOMPARE(r.steps, std::int64_t(100));
        QCOMPARE(r.seq, std::int64_t(24));
        QCOMPARE(r.tokenizer, std::string("byte"));
        // every 20 steps and at the end (100 is both: evaluated once)
        QCOMPARE(static_cast<int>(r.evals.size()), 5);
        QCOMPARE(static_cast<int>(seen.size()), 5);
        QCOMPARE(r.evals[0].step, std::int64_t(20));
        QCOMPARE(r.evals[4].step, std::int64_t(100));
        QCOMPARE(r.evals[0].tokens, std::int64_t(2048 / 24 * 24));
        QVERIFY2(r.evals[4].loss < 0.6 * r.evals[0].loss,
                 qPrintable(QStringLiteral("%1 -> %2").arg(r.evals[0].loss).arg(r.evals[4].loss)));
        QCOMPARE(r.test_loss, r.evals.back().loss);
        QVERIFY(r.tokens_per_second > 0);
        QVERIFY(grad_norms.size() == 100 && grad_norms.front() > 0);  // clipping computes the norm
        // run.json
        const nlohmann::json j = make_run_record(c, r);
        QCOMPARE(j["final"]["test_loss"].get<double>(), r.test_loss);
        QCOMPARE(j["final"]["tokens_per_second"].get<double>(), r.tokens_per_second);
        QCOMPARE(j["evals"].size(), std::size_t(5));
        QCOMPARE(j["data"]["tokenizer"].get<std::string>(), std::string("byte"));
        QCOMPARE(j["config"]["seq"].get<std::int64_t>(), std::int64_t(24));
        QCOMPARE(train_config_from_json(j["config"]).eval_every, std::int64_t(20));
        // weights: the model was trained with 24 tokens; the file says so
        const std::string dir = hrtest::temp_dir("lm-run");
        t.save_weights(dir + "/model.safetensors");
        SafeTensorsFile f = read_safetensors(dir + "/model.safetensors");
        QCOMPARE(f.metadata.at("tokenizer"), std::string("byte"));
        QVERIFY(f.find("transformer.wte.weight") && f.find("lm_head.weight") && f.find("transformer.h.1.mlp.c_fc.bias"));
        // generation: greedy is deterministic; sampling is deterministic for a seed
        auto g = Generator::from_run(dir, 1);
        QCOMPARE(g->context(), std::int64_t(24));
        GenerateOptions o;
        o.prompt = "abcabc a";
        o.tokens = 30;
        o.temperature = 0;
        const GenerateResult a = g->generate(o), b = g->generate(o);
        QCOMPARE(a.text, b.text);
        QCOMPARE(static_cast<int>(a.ids.size()), 30);
        QVERIFY(a.text.rfind("abcabc a", 0) == 0);
        // after 100 steps the model has learned the lines' shape: "xyz" follows
        QVERIFY2(a.completion.find("xyz") != std::string::npos, a.completion.c_str());
        o.temperature = 1.0;
        o.top_k = 5;
        o.seed = 11;
        const GenerateResult s1 = g->generate(o), s2 = g->generate(o);
        QCOMPARE(s1.text, s2.text);
        // stopping early from the callback
        int calls = 0;
        const GenerateResult early = g->generate(o, [&](const std::string&) { return ++calls < 5; });
        QCOMPARE(static_cast<int>(early.ids.size()), 5);
    }

    void charTokenizerFileNextToWeights() {
        TrainConfig c = config("char");
        c.steps = 10;
        Trainer t(c);
        TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(r.vocab_size, std::int64_t(8));  // a b c x y z ' ' '\n'
        const std::string dir = hrtest::temp_dir("lm-char");
        t.save_weights(dir + "/model.safetensors");
        QVERIFY(std::filesystem::exists(dir + "/tokenizer.json"));
        SafeTensorsFile f = read_safetensors(dir + "/model.safetensors");
        QCOMPARE(f.metadata.at("tokenizer"), std::string("char"));
        QCOMPARE(f.metadata.at("tokenizer_file"), std::string("tokenizer.json"));
        auto g = Generator::from_weights(dir + "/model.safetensors");
        QCOMPARE(g->tokenizer().kind(), std::string("char"));
        GenerateOptions o;
        o.prompt = "abc";
        o.tokens = 8;
        const GenerateResult res = g->generate(o);
        for (char ch : res.completion) QVERIFY(std::string("abcxyz \n").find(ch) != std::string::npos);
        o.prompt = "Q";  // not in the vocabulary
        QVERIFY_THROWS_EXCEPTION(InputError, g->generate(o));
    }

    void bpeNeedsAVocabularyThatFits() {
        TrainConfig c = config("bpe:280");
        c.steps = 4;
        QVERIFY_THROWS_EXCEPTION(InputError, Trainer(c).run());  // 280 tokens > the model's 256
        resize_vocabulary(c.model, 280);
        QCOMPARE(c.model.num_classes, 280);
        Trainer t(c);
        TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(r.vocab_size, std::int64_t(280));
        const std::string dir = hrtest::temp_dir("lm-bpe");
        t.save_weights(dir + "/model.safetensors");
        QVERIFY(std::filesystem::exists(dir + "/tokenizer.model"));
        auto g = Generator::from_weights(dir + "/model.safetensors");
        QCOMPARE(g->tokenizer().kind(), std::string("bpe:280"));
    }

    void snapshotDuringTheRunOnAnotherThread() {
        TrainConfig c = config();
        c.steps = 30;
        c.eval_every = 0;
        std::vector<std::int64_t> snapshot_steps;
        Trainer* trainer = nullptr;
        TrainCallbacks cb;
        cb.on_step = [&](const StepEvent& e) {
            if (e.step == 10) trainer->request_snapshot();
        };
        cb.on_snapshot = [&](std::shared_ptr<const WeightsSnapshot> s) { snapshot_steps.push_back(s->step); };
        Trainer t(c, cb);
        trainer = &t;
        TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        // the one asked for (taken before step 11) and the final weights
        QCOMPARE(snapshot_steps, (std::vector<std::int64_t>{10, 30}));
        std::shared_ptr<const WeightsSnapshot> snap = t.latest_snapshot();
        QVERIFY(snap && snap->step == 30 && snap->tokenizer);
        // the Sample panel's pattern: generate from a snapshot on a thread of its own
        std::string sampled;
        std::thread sampler([&] {
            auto g = Generator::from_snapshot(*snap, 1);
            GenerateOptions o;
            o.prompt = "abc";
            o.tokens = 10;
            sampled = g->generate(o).text;
        });
        sampler.join();
        QVERIFY(sampled.rfind("abc", 0) == 0);
    }

    void snapshotWhileTraining() {
        // a second thread asks for snapshots and generates from them while the trainer runs
        TrainConfig c = config();
        c.steps = 40;
        c.eval_every = 0;
        Trainer t(c);
        std::atomic<bool> done{false};
        std::atomic<int> generated{0};
        std::thread sampler([&] {
            std::int64_t last = -1;
            while (!done) {
                t.request_snapshot();
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                auto s = t.latest_snapshot();
                if (!s || s->step == last) continue;
                last = s->step;
                GenerateOptions o;
                o.tokens = 4;
                Generator::from_snapshot(*s, 1)->generate(o);
                ++generated;
            }
        });
        TrainResult r = t.run();
        done = true;
        sampler.join();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QVERIFY(generated > 0);
    }

    void divergingLossNamesTheStep() {
        // the same account as an image model's (one translatable sentence), at the step it happened
        TrainConfig c = config();
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 1e30;
        c.optimizer.grad_clip = 0;
        c.schedule.kind = "constant";
        c.schedule.warmup_steps = 0;
        c.steps = 20;
        const TrainResult r = Trainer(c).run();
        QCOMPARE(r.status, std::string("failed"));
        QVERIFY(r.bad_input);
        QCOMPARE(r.error_messages.size(), std::size_t(1));
        QCOMPARE(std::string(r.error_messages[0].id), std::string("train.loss_not_finite"));
        QVERIFY2(r.error.find("at step ") != std::string::npos && r.error.find("--lr") != std::string::npos,
                 r.error.c_str());
        QVERIFY(r.steps < 20);
    }

    void errorsSayWhatToDo() {
        TrainConfig c = config();
        c.data = "synthetic";
        try {
            Trainer(c).run();
            QFAIL("a language model on image data must be refused");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("text:fortunes") != std::string::npos, e.what());
        }
        c = config();
        c.seq = 65;  // more than the 64 learned positions
        QVERIFY_THROWS_EXCEPTION(InputError, Trainer(c).run());
        c = config();
        c.tokenizer = "words";
        QVERIFY_THROWS_EXCEPTION(InputError, Trainer(c).run());
        c = config();
        c.model = preset_model("seed-cnn");
        QVERIFY_THROWS_EXCEPTION(InputError, Trainer(c).run());  // text for an image model
    }
};

QTEST_GUILESS_MAIN(LanguageModelTest)
#include "test_language_model.moc"
