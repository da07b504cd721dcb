// Resume (issue 13): a run trained N steps, checkpointed into its run folder and resumed to M steps ends
// with the same weights, byte for byte, as the same run trained M steps without stopping (the
// reference: the uninterrupted run), on the CPU with fixed threads -- at f32, through activation
// checkpointing, gradient accumulation, Adam's state and bf16 with f32 master weights; from a
// checkpoint mid-epoch and at an epoch's end; and from an older checkpoint (a kill after it). Also the
// folder's files (config.json, the last two checkpoints, no temporary names), the refusals (a
// checkpoint of another configuration, a damaged JSON) and weights in by name, DDP prefix and order.
#include <QtTest>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "base/atomic_file.h"
#include "base/error.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"
#include "backend/cpu/cpu_backend.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "train/resume.h"
#include "train/trainer.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

TrainConfig config(const std::string& preset, std::int64_t steps) {
    TrainConfig c;
    c.model = preset_model(preset, {1, 28, 28}, 10);
    c.data = "synthetic";
    c.train_limit = 96;  // 6 steps of 16 per epoch
    c.test_limit = 32;
    c.batch = 16;
    c.steps = steps;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.05;
    c.optimizer.momentum = 0.9;
    c.threads = 1;
    c.device = "cpu";
    c.save_every_steps = 4;
    return c;
}

SafeTensorsFile train(const TrainConfig& c, const std::string& dir, bool resume, TrainResult* out = nullptr) {
    Trainer t(c);
    t.set_run_folder(dir, resume);
    TrainResult r = t.run();
    if (out) *out = r;
    if (r.status != "finished") qWarning("run: %s %s", r.status.c_str(), r.error.c_str());
    const std::string path = dir + "/model.safetensors";
    t.save_weights(path);
    return read_safetensors(path);
}

int differing(const SafeTensorsFile& a, const SafeTensorsFile& b) {
    if (a.tensors.size() != b.tensors.size()) return 1000;
    int n = 0;
    for (const SafeTensor& t : a.tensors) {
        const SafeTensor* u = b.find(t.name);
        if (!u || u->shape != t.shape || u->dtype != t.dtype || u->data != t.data) ++n;
    }
    return n;
}

std::vector<std::string> files(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

class ResumeTest : public QObject {
    Q_OBJECT

private:
    // first run of `first` steps, resume to `total`; against `total` steps uninterrupted
    void checkBitwise(TrainConfig c, std::int64_t first, std::int64_t total, const char* tag, std::string* runDir = nullptr) {
        const std::string ref = hrtest::temp_dir(std::string("resume-ref-") + tag);
        const std::string dir = hrtest::temp_dir(std::string("resume-run-") + tag);
        if (runDir) *runDir = dir;
        c.steps = total;
        TrainResult whole;
        const SafeTensorsFile a = train(c, ref, false, &whole);
        QCOMPARE(whole.status, std::string("finished"));
        c.steps = first;
        TrainResult part;
        train(c, dir, false, &part);
        QCOMPARE(part.steps, first);
        QVERIFY(has_checkpoint(dir));
        c.steps = total;
        TrainResult resumed;
        const SafeTensorsFile b = train(c, dir, true, &resumed);
        QCOMPARE(resumed.status, std::string("finished"));
        QCOMPARE(resumed.resumed_from_step, first);
        QCOMPARE(resumed.steps, total);
        QCOMPARE(differing(a, b), 0);
        // the epochs' lines are those of the uninterrupted run (loss sums carried over)
        QCOMPARE(resumed.epochs.size(), whole.epochs.size());
        for (std::size_t i = 0; i < whole.epochs.size(); ++i) {
            QCOMPARE(resumed.epochs[i].epoch, whole.epochs[i].epoch);
            QCOMPARE(resumed.epochs[i].train_loss, whole.epochs[i].train_loss);
        }
        QCOMPARE(resumed.test_accuracy, whole.test_accuracy);
    }

private slots:
    // A language model (gpt-tiny, char tokenizer, random windows keyed on the step, eval every 7 steps
    // across the checkpoint, AdamW): 20 steps + resume to 40 against 40 uninterrupted; the tokenizer
    // comes from the run's folder. Without it the resume is refused, nothing trained.
    void languageModel() {
        const std::string text = hrtest::temp_dir("resume-text") + "/text.txt";
        {
            std::ofstream f(text);
            for (int i = 0; i < 400; ++i) f << "the quick brown fox " << char('a' + i % 7) << " jumps\n";
        }
        TrainConfig c;
        c.model = preset_model("gpt-tiny");
        c.data = "text:" + text;
        c.tokenizer = "char";
        c.seq = 16;
        c.batch = 4;
        c.steps = 20;
        c.threads = 1;
        c.device = "cpu";
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 1e-3;
        c.schedule.kind = "constant";
        c.eval_every = 7;
        c.eval_tokens = 256;
        std::string dir;
        checkBitwise(c, 20, 40, "gpt", &dir);
        if (QTest::currentTestFailed()) return;
        QVERIFY(fs::exists(dir + "/tokenizer.json"));
        fs::remove(dir + "/tokenizer.json");
        fs::remove(dir + "/run.json");
        c.steps = 60;
        Trainer t(c);
        t.set_run_folder(dir, true);
        try {
            (void)t.run();
            QFAIL("resumed without the tokenizer");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("tokenizer.json") != std::string::npos, e.what());
        }
        QVERIFY(!fs::exists(dir + "/checkpoint-000000060.json"));
    }

    void f32MidEpoch() { checkBitwise(config("mlp", 0), 10, 20, "f32"); }  // step 10: 4 into epoch 2
    void f32AtEpochEnd() { checkBitwise(config("mlp", 0), 12, 20, "f32-epoch"); }
    void checkpointingAccumulationAdam() {
        TrainConfig c = config("seed-cnn", 0);
        c.strategy.checkpoint = "all";
        c.strategy.micro_batch = 8;  // two micro-batches per step
        c.optimizer.kind = "adam";
        c.optimizer.lr = 0.002;
        checkBitwise(c, 7, 14, "ckpt-accum-adam");
    }
    void bf16MasterWeights() {
        TrainConfig c = config("mlp", 0);
        c.strategy.precision = "bf16";
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 0.002;
        c.optimizer.weight_decay = 0.01;
        checkBitwise(c, 9, 16, "bf16");
    }

    // A kill after the checkpoint at step 8 (the newest, step 10, is gone): resuming from 8 still
    // gives the uninterrupted run.
    void olderCheckpointAfterKill() {
        TrainConfig c = config("mlp", 20);
        const std::string ref = hrtest::temp_dir("resume-kill-ref");
        const SafeTensorsFile a = train(c, ref, false);
        const std::string dir = hrtest::temp_dir("resume-kill");
        c.steps = 10;
        train(c, dir, false);
        // keep the last two: 8 and 10 (4 is gone); config.json and no temporary names
        const std::vector<std::string> f = files(dir);
        QVERIFY(std::find(f.begin(), f.end(), "config.json") != f.end());
        QVERIFY(std::find(f.begin(), f.end(), "checkpoint-000000008.json") != f.end());
        QVERIFY(std::find(f.begin(), f.end(), "checkpoint-000000010.safetensors") != f.end());
        QVERIFY(std::find(f.begin(), f.end(), "checkpoint-000000004.json") == f.end());
        for (const auto& n : f) QVERIFY2(!is_atomic_temp_name(n), n.c_str());
        fs::remove(dir + "/checkpoint-000000010.json");
        fs::remove(dir + "/checkpoint-000000010.safetensors");
        fs::remove(dir + "/model.safetensors");
        c.steps = 20;
        TrainResult r;
        const SafeTensorsFile b = train(c, dir, true, &r);
        QCOMPARE(r.resumed_from_step, std::int64_t{8});
        QCOMPARE(differing(a, b), 0);
        // the configuration read back is the run's own
        QCOMPARE(train_config_to_json(read_run_config(dir)).dump(), train_config_to_json(c).dump());
    }

    // A checkpoint's epoch lines are the epoch's one JSON form (train/record_json.h), tokens_per_second
    // included (issue 55: they were written a second way that dropped it): every field of EpochEvent is in the
    // file, a value read back is the value written, a line without it (an older checkpoint) still reads,
    // and one out of range is refused by name.
    void epochLinesAreTheRecords() {
        // 6 steps an epoch: the last checkpoint (step 8, the run's end) holds epoch 1 and the run's last epoch
        TrainConfig c = config("mlp", 8);
        const std::string dir = hrtest::temp_dir("resume-epochs");
        train(c, dir, false);
        const std::string path = dir + "/checkpoint-000000008.json";
        std::ifstream in(path);
        nlohmann::json j = nlohmann::json::parse(in);
        QCOMPARE(int(j["epochs"].size()), 2);
        for (const nlohmann::json& e : j["epochs"])
            for (const char* k : {"epoch", "step", "train_loss", "train_accuracy", "test_loss", "test_accuracy",
                                  "seconds", "images_per_second", "tokens_per_second"})
                QVERIFY2(e.contains(k), k);
        nlohmann::json& line = j["epochs"][0];
        QCOMPARE(line["epoch"].get<int>(), 1);
        QCOMPARE(line["step"].get<std::int64_t>(), std::int64_t(6));
        line["tokens_per_second"] = 1234.5;
        line["images_per_second"] = 678.25;
        Checkpoint ck = parse_checkpoint_json(j.dump(), "test");
        QCOMPARE(int(ck.cursor.epochs.size()), 2);
        QCOMPARE(ck.cursor.epochs[0].tokens_per_second, 1234.5);
        QCOMPARE(ck.cursor.epochs[0].images_per_second, 678.25);
        QCOMPARE(ck.cursor.epochs[0].step, std::int64_t(6));
        line.erase("tokens_per_second");  // an older checkpoint: 0, as an epoch without tokens
        ck = parse_checkpoint_json(j.dump(), "test");
        QCOMPARE(ck.cursor.epochs[0].tokens_per_second, 0.0);
        line["tokens_per_second"] = -1.0;
        try {
            (void)parse_checkpoint_json(j.dump(), "test");
            QFAIL("a negative tokens_per_second was read");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("tokens_per_second") != std::string::npos, e.what());
        }
    }

    // The folder of a multi-rank run written before they wrote checkpoints (run.json, no config.json, no
    // checkpoint): the refusal says what is missing and what to give instead.
    void oldMultiRankFolderRefused() {
        const std::string dir = hrtest::temp_dir("resume-ranks");
        write_file_atomic(dir + "/run.json", R"({"version": 1, "distributed": {"world_size": 2, "stage": "dp"}})");
        try {
            (void)read_run_config(dir);
            QFAIL("a folder without config.json was read as resumable");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("config.json") != std::string::npos && m.find("--out") != std::string::npos, m.c_str());
        }
    }

    void refusals() {
        TrainConfig c = config("mlp", 6);
        const std::string dir = hrtest::temp_dir("resume-refuse");
        train(c, dir, false);
        // already as long as asked
        {
            Trainer t(c);
            t.set_run_folder(dir, true);
            QVERIFY_THROWS_EXCEPTION(InputError, t.run());
        }
        // another optimizer: its state is not in the checkpoint
        c.steps = 12;
        c.optimizer.kind = "adam";
        {
            Trainer t(c);
            t.set_run_folder(dir, true);
            QVERIFY_THROWS_EXCEPTION(InputError, t.run());
        }
        // nothing to resume
        const std::string empty = hrtest::temp_dir("resume-empty");
        QVERIFY_THROWS_EXCEPTION(InputError, read_latest_checkpoint(empty));
        QVERIFY_THROWS_EXCEPTION(InputError, read_run_config(empty));
        // damaged JSON
        QVERIFY_THROWS_EXCEPTION(InputError, parse_checkpoint_json("{\"version\":1,\"step\":-3}", "x.json"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_checkpoint_json("[1,2", "x.json"));
        std::int64_t steps = 0;
        double seconds = 0;
        parse_save_every("10m", steps, seconds);
        QCOMPARE(seconds, 600.0);
        QCOMPARE(steps, std::int64_t{0});
        parse_save_every("250", steps, seconds);
        QCOMPARE(steps, std::int64_t{250});
        QVERIFY_THROWS_EXCEPTION(InputError, parse_save_every("0", steps, seconds));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_save_every("5x", steps, seconds));
    }

    // Weights in: the same tensors under DDP's names and under other names (matched by order) load to
    // the same model; a shape mismatch names the tensors.
    void weightsByPrefixAndOrder() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        ModelSpec spec = preset_model("seed-cnn", {1, 28, 28}, 10);
        ModelOptions mo;
        mo.batch = 4;
        mo.seed = 3;
        Model src(spec, *be, mo);
        SafeTensorsFile f = model_state_file(src);
        const std::string dir = hrtest::temp_dir("weights-in");
        SafeTensorsFile ddp = f, torch = f;
        const std::map<std::string, std::string> names = {{"0", "conv1"}, {"3", "conv2"}, {"7", "fc1"}, {"9", "fc2"}};
        for (auto& t : ddp.tensors) t.name = "module." + t.name;
        for (auto& t : torch.tensors) {
            const auto dot = t.name.find('.');
            t.name = names.at(t.name.substr(0, dot)) + t.name.substr(dot);
        }
        // the torch file in alphabetical order, as the safetensors package writes it
        std::sort(torch.tensors.begin(), torch.tensors.end(), [](const SafeTensor& a, const SafeTensor& b) { return a.name < b.name; });
        write_safetensors(dir + "/ddp.safetensors", ddp);
        write_safetensors(dir + "/torch.safetensors", torch);
        for (const char* file : {"ddp", "torch"}) {
            mo.seed = 99;
            Model dst(spec, *be, mo);
            const WeightsMatch m = load_weights_into(dst, dir + "/" + file + ".safetensors");
            QCOMPARE(m.stripped_module, std::string(file) == "ddp");
            QCOMPARE(m.by_order, std::string(file) == "torch");
            QCOMPARE(differing(model_state_file(dst), f), 0);
            if (m.by_order) {
                QCOMPARE(m.table.front(), (std::pair<std::string, std::string>{"conv1.weight", "0.weight"}));
                QCOMPARE(m.table.back(), (std::pair<std::string, std::string>{"fc2.bias", "9.bias"}));
            }
        }
        // another model: refused, naming the tensors
        ModelSpec other = preset_model("mlp", {1, 28, 28}, 10);
        Model wrong(other, *be, mo);
        try {
            load_weights_into(wrong, dir + "/torch.safetensors");
            QFAIL("accepted weights of another model");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("tensors") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(ResumeTest)
#include "test_resume.moc"
