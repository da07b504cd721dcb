// End to end on the CPU: seed-cnn on Fashion-MNIST learns; the same seed gives identical weights;
// a diverging run stops with a message naming the step; stop and pause take effect between steps.
#include <QtTest>

#include <atomic>
#include <fstream>
#include <iterator>
#include <thread>

#include "base/error.h"
#include "io/safetensors.h"
#include "test_support.h"
#include "train/run_record.h"
#include "train/trainer.h"

using namespace hr;

namespace {
TrainConfig base_config(const std::string& data) {
    TrainConfig c;
    c.model = preset_model("seed-cnn");
    c.data = data;
    c.batch = 64;
    c.optimizer.lr = 0.01;
    c.optimizer.momentum = 0.5;
    c.threads = 2;
    return c;
}
std::string read_all(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}
}  // namespace

class TrainE2ETest : public QObject {
    Q_OBJECT

private slots:
    void seedCnnLearnsFashionMnist() {
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        TrainConfig c = base_config("fashion-mnist");
        c.steps = 300;
        c.test_limit = 2000;
        std::vector<double> losses;
        TrainCallbacks cb;
        cb.on_step = [&](const StepEvent& e) { losses.push_back(e.loss); };
        Trainer t(c, cb);
        TrainResult r = t.run();
        QCOMPARE(r.status, std::string("finished"));
        QCOMPARE(r.steps, std::int64_t(300));
        QCOMPARE(losses.size(), std::size_t(300));
        double first = 0, last = 0;
        for (int i = 0; i < 30; ++i) {
            first += losses[i] / 30;
            last += losses[losses.size() - 1 - i] / 30;
        }
        qInfo("mean loss of the first 30 steps %.4f, of the last 30 %.4f; test accuracy %.4f", first, last,
              r.test_accuracy);
        QVERIFY(first > 2.0);         // chance level is log(10) = 2.30
        QVERIFY(last < 0.75 * first);
        QVERIFY(r.test_accuracy > 0.6);
        QVERIFY(r.ledger.peak_total > 0);
        // seed-cnn's 8 tensors (250, 10, 5000, 20, 16000, 50, 500, 10 values) each start on a 256-byte
        // boundary (64 f32 values): 256 + 64 + 5056 + 64 + 16000 + 64 + 512 + 64 = 22,080 values
        QCOMPARE(at(r.ledger.peak, MemCategory::parameters), std::size_t(22080 * 4));
        nlohmann::json rec = make_run_record(c, r);
        QCOMPARE(rec["final"]["steps"].get<std::int64_t>(), std::int64_t(300));
        QCOMPARE(rec["memory"]["measured"]["peak"]["gradients"].get<std::size_t>(), std::size_t(22080 * 4));
    }

    void sameSeedSameWeights() {
        std::string dir = hrtest::temp_dir("e2e");
        auto run = [&](std::uint64_t seed, const std::string& path) -> TrainResult {
            TrainConfig c = base_config("synthetic");
            c.model.layers.insert(c.model.layers.begin() + 8, default_layer("dropout"));  // RNG in the graph too
            c.steps = 40;
            c.seed = seed;
            Trainer t(c);
            TrainResult r = t.run();
            t.save_weights(path);
            return r;
        };
        TrainResult a = run(7, dir + "/a.safetensors");
        TrainResult b = run(7, dir + "/b.safetensors");
        TrainResult d = run(8, dir + "/c.safetensors");
        QCOMPARE(a.status, std::string("finished"));
        QCOMPARE(d.status, std::string("finished"));
        QCOMPARE(a.test_loss, b.test_loss);
        QVERIFY(read_all(dir + "/a.safetensors") == read_all(dir + "/b.safetensors"));
        QVERIFY(read_all(dir + "/a.safetensors") != read_all(dir + "/c.safetensors"));
        SafeTensorsFile f = read_safetensors(dir + "/a.safetensors");
        QVERIFY(f.find("0.weight") && f.find("0.weight")->shape == (Shape{10, 1, 5, 5}));
        QVERIFY(f.find("7.weight") && f.find("7.weight")->shape == (Shape{50, 320}));
        QCOMPARE(f.metadata.at("format"), std::string("pt"));
    }

    void divergingLossStopsWithTheStep() {
        TrainConfig c = base_config("synthetic");
        c.optimizer.lr = 1e6;
        c.steps = 50;
        Trainer t(c);
        TrainResult r = t.run();
        QCOMPARE(r.status, std::string("failed"));
        QVERIFY(r.bad_input);
        QVERIFY2(r.error.find("at step ") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("--lr") != std::string::npos, r.error.c_str());
        QCOMPARE(r.error_messages.size(), std::size_t(1));
        QCOMPARE(std::string(r.error_messages[0].id), std::string("train.loss_not_finite"));
    }

    void stopAndPause() {
        TrainConfig c = base_config("synthetic");
        c.epochs = 50;
        std::atomic<std::int64_t> last{0};
        std::atomic<Trainer*> tp{nullptr};
        TrainCallbacks cb;
        std::atomic<bool> paused_seen{false}, stop_sent{false};
        cb.on_step = [&](const StepEvent& e) {
            last = e.step;
            if (e.step == 5) tp.load()->set_paused(true);
            // step 12 waits for the other thread's stop request, so a loaded machine (ctest -j) cannot let
            // more steps run before the request arrives: what is tested is where the stop takes effect
            if (e.step == 12)
                while (!stop_sent) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        };
        Trainer t(c, cb);
        tp = &t;
        std::thread th([&] {
            // while paused, no step may happen
            while (last < 5) std::this_thread::sleep_for(std::chrono::milliseconds(5));
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            paused_seen = last.load() == 5;
            t.set_paused(false);
            while (last < 12) std::this_thread::sleep_for(std::chrono::milliseconds(2));
            t.request_stop();
            stop_sent = true;
        });
        TrainResult r = t.run();
        th.join();
        QVERIFY(paused_seen.load());
        QCOMPARE(r.status, std::string("stopped"));
        QVERIFY(r.steps >= 12 && r.steps <= 13);  // within one step of the request
    }

    void badDataIsInputError() {
        TrainConfig c = base_config("idx:/nonexistent/folder");
        Trainer t(c);
        QVERIFY_THROWS_EXCEPTION(InputError, t.run());
        c = base_config("cifar-100");
        Trainer t2(c);
        QVERIFY_THROWS_EXCEPTION(InputError, t2.run());
    }
};

QTEST_APPLESS_MAIN(TrainE2ETest)
#include "test_train_e2e.moc"
