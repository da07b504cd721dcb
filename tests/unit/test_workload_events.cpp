// One training loop for every workload (train/workload.h): an image run and a language-model run go
// through the same event checks. Each says its device once before the first step, sends memory events
// from the start to the end, one step event per step and an evaluation event for every evaluation
// (--eval-every included: image runs honour it too), ends with the same final figures, stops and pauses
// between steps alike, and ends a run whose loss stopped being a number with the same message.
#include <QtTest>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "nn/model_spec.h"
#include "test_support.h"
#include "train/run_record.h"
#include "train/trainer.h"

using namespace hr;

namespace {

LayerSpec L(const std::string& type, std::initializer_list<std::pair<const char*, nlohmann::json>> a = {}) {
    LayerSpec s = default_layer(type);
    for (auto& [k, v] : a) s.attrs[k] = v;
    return s;
}

std::string text_file() {
    static const std::string path = [] {
        const std::string dir = hrtest::temp_dir("workload-text");
        std::ofstream f(dir + "/abc.txt");
        for (int i = 0; i < 2000; ++i) f << "abcabc " << char('a' + i % 3) << "xyz\n";
        return dir + "/abc.txt";
    }();
    return path;
}

// 12 steps of either workload on 2 threads, SGD.
TrainConfig config(const QString& workload) {
    TrainConfig c;
    c.threads = 2;
    c.seed = 7;
    c.optimizer.kind = "sgd";
    c.optimizer.lr = 0.05;
    c.optimizer.momentum = 0.9;
    if (workload == QLatin1String("image")) {
        c.model = preset_model("seed-cnn");
        c.data = "synthetic";
        c.batch = 16;
        c.train_limit = 96;  // 6 steps per epoch, 2 epochs
        c.test_limit = 48;
        c.epochs = 2;
    } else {
        ModelSpec s;
        s.name = "gpt-events";
        s.input_shape = {16};
        s.num_classes = 256;
        s.layers = {L("token_embedding", {{"vocab_size", 256}, {"dim", 16}}),
                    L("position_embedding", {{"max_positions", 16}, {"dim", 16}}),
                    L("transformer_block", {{"dim", 16}, {"heads", 2}}),
                    L("layernorm", {{"dim", 16}}),
                    L("lm_head", {{"dim", 16}, {"vocab_size", 256}})};
        c.model = s;
        c.data = "text:" + text_file();
        c.batch = 4;
        c.steps = 12;
        c.eval_tokens = 256;
    }
    return c;
}

struct Recorded {
    std::vector<DeviceEvent> devices;
    std::vector<StepEvent> steps;
    std::vector<EpochEvent> epochs;
    std::vector<EvalEvent> evals;
    std::vector<MemoryEvent> memory;
    std::vector<std::string> logs;
    std::size_t steps_before_device = 0;
    TrainCallbacks callbacks(const std::function<void(const StepEvent&)>& also = {}) {
        TrainCallbacks cb;
        cb.on_device = [this](const DeviceEvent& e) {
            steps_before_device = steps.size();
            devices.push_back(e);
        };
        cb.on_step = [this, also](const StepEvent& e) {
            steps.push_back(e);
            if (also) also(e);
        };
        cb.on_epoch = [this](const EpochEvent& e) { epochs.push_back(e); };
        cb.on_eval = [this](const EvalEvent& e) { evals.push_back(e); };
        cb.on_memory = [this](const MemoryEvent& e) { memory.push_back(e); };
        cb.on_log = [this](const LogEvent& e) { logs.push_back(e.message); };
        return cb;
    }
    bool logged(const std::string& part) const {
        for (const auto& l : logs)
            if (l.find(part) != std::string::npos) return true;
        return false;
    }
};

}  // namespace

class WorkloadEventsTest : public QObject {
    Q_OBJECT

    static void workloads() {
        QTest::addColumn<QString>("workload");
        QTest::newRow("image") << QStringLiteral("image");
        QTest::newRow("token") << QStringLiteral("token");
    }

private slots:
    void eventsOfAWholeRun_data() { workloads(); }
    void eventsOfAWholeRun() {
        QFETCH(QString, workload);
        TrainConfig c = config(workload);
        c.eval_every = 5;  // evaluations at steps 5 and 10, and at the end (12)
        Recorded rec;
        Trainer t(c, rec.callbacks());
        const TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        // the device line: once, before the first step, naming the backend of the result
        QCOMPARE(rec.devices.size(), std::size_t(1));
        QCOMPARE(rec.steps_before_device, std::size_t(0));
        QCOMPARE(rec.devices[0].device, std::string("cpu"));
        QCOMPARE(rec.devices[0].name, r.device_name);
        QVERIFY(rec.logged("training " + c.model.name + " ("));
        // a step event per step, in order, with its figures
        QCOMPARE(r.steps, std::int64_t(12));
        QCOMPARE(rec.steps.size(), std::size_t(12));
        for (std::size_t i = 0; i < rec.steps.size(); ++i) {
            const StepEvent& e = rec.steps[i];
            QCOMPARE(e.step, std::int64_t(i + 1));
            QCOMPARE(e.total_steps, std::int64_t(12));
            QVERIFY(std::isfinite(e.loss) && e.loss > 0);
            QVERIFY(e.accuracy >= 0 && e.accuracy <= 1);
            QVERIFY(e.images_per_second > 0 && e.step_seconds > 0);
            QVERIFY(e.lr > 0);
            QCOMPARE(e.tokens_per_second > 0, workload == QLatin1String("token"));
        }
        // memory: the ledger at the start (step 0) and at the end (the run's last step)
        QVERIFY(rec.memory.size() >= 2);
        QCOMPARE(rec.memory.front().step, std::int64_t(0));
        QCOMPARE(rec.memory.back().step, std::int64_t(12));
        QVERIFY(rec.memory.back().ledger.peak_total > 0);
        QVERIFY(rec.memory.back().device_capacity > 0);
        // evaluations every 5 steps and at the end, for images as for text
        QCOMPARE(rec.evals.size(), std::size_t(3));
        QCOMPARE(rec.evals[0].step, std::int64_t(5));
        QCOMPARE(rec.evals[1].step, std::int64_t(10));
        QCOMPARE(rec.evals[2].step, std::int64_t(12));
        QCOMPARE(r.evals.size(), std::size_t(3));
        for (const EvalEvent& e : rec.evals) {
            QVERIFY(std::isfinite(e.loss) && e.samples > 0 && e.seconds >= 0);
            QCOMPARE(e.tokens > 0, workload == QLatin1String("token"));
        }
        // the epochs and the final figures
        QVERIFY(!rec.epochs.empty());
        QCOMPARE(rec.epochs.back().step, std::int64_t(12));
        QCOMPARE(r.epochs_completed, rec.epochs.back().epoch);
        QCOMPARE(r.test_loss, rec.evals.back().loss);
        QCOMPARE(r.test_accuracy, rec.evals.back().accuracy);
        QCOMPARE(rec.epochs.back().test_loss, rec.evals.back().loss);
        QCOMPARE(r.train_loss, rec.epochs.back().train_loss);
        QVERIFY(std::isfinite(r.train_loss));
        QVERIFY(r.seconds > 0 && r.images_per_second > 0 && r.param_count > 0);
        QCOMPARE(r.tokens_per_second > 0, workload == QLatin1String("token"));
        QVERIFY(r.ledger.peak_total > 0);
        QVERIFY(r.train_samples > 0 && r.test_samples > 0);
        // run.json has every evaluation, with what it counted
        const nlohmann::json j = make_run_record(c, r);
        QCOMPARE(j["evals"].size(), std::size_t(3));
        QCOMPARE(j["evals"][1]["step"].get<std::int64_t>(), std::int64_t(10));
        QCOMPARE(j["evals"][2]["samples"].get<std::int64_t>(), rec.evals[2].samples);
        QCOMPARE(j["evals"][2]["test_loss"].get<double>(), r.test_loss);
        QCOMPARE(j["final"]["test_loss"].get<double>(), r.test_loss);
        // final.train_seconds: the step times summed (the steps' own figures), a part of the run's seconds
        double step_time = 0;
        for (const StepEvent& e : rec.steps) step_time += e.step_seconds;
        QVERIFY(std::abs(j["final"]["train_seconds"].get<double>() - step_time) <= 1e-9 * step_time);
        QVERIFY(r.train_seconds > 0 && r.train_seconds < r.seconds);
        // the epoch's mean training loss is the mean of its steps' losses (every step a full batch here)
        const EpochEvent& last = rec.epochs.back();
        double sum = 0;
        int n = 0;
        for (const StepEvent& e : rec.steps)
            if (e.epoch == last.epoch) sum += e.loss, ++n;
        QVERIFY(std::abs(last.train_loss - sum / n) < 1e-9 * std::abs(last.train_loss));
    }

    void stopAndPauseBetweenSteps_data() { workloads(); }
    void stopAndPauseBetweenSteps() {
        QFETCH(QString, workload);
        TrainConfig c = config(workload);
        Trainer* self = nullptr;
        std::thread resumer;
        Recorded rec;
        Trainer t(c, rec.callbacks([&](const StepEvent& e) {
            if (e.step == 2) {  // pause; another thread resumes the run 0.3 s later
                self->set_paused(true);
                resumer = std::thread([&] {
                    std::this_thread::sleep_for(std::chrono::milliseconds(300));
                    self->set_paused(false);
                });
            }
            if (e.step == 4) self->request_stop();
        }));
        self = &t;
        const auto t0 = std::chrono::steady_clock::now();
        const TrainResult r = t.run();
        resumer.join();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        QCOMPARE(r.status, std::string("stopped"));
        QCOMPARE(r.steps, std::int64_t(4));
        QCOMPARE(rec.steps.size(), std::size_t(4));
        QVERIFY2(seconds >= 0.29, qPrintable(QString::number(seconds)));  // it waited while paused
        QVERIFY(rec.logged("stopped at step 4"));
        // the figures of the epoch it stopped in: the mean of its four steps
        double sum = 0;
        for (const StepEvent& e : rec.steps) sum += e.loss;
        QVERIFY(std::abs(r.train_loss - sum / 4) < 1e-9 * sum);
        QCOMPARE(rec.memory.back().step, std::int64_t(4));
    }

    void lossThatStopsBeingANumber_data() { workloads(); }
    void lossThatStopsBeingANumber() {
        QFETCH(QString, workload);
        TrainConfig c = config(workload);
        c.optimizer.lr = 1e30;  // the weights leave the floats within a few steps
        c.optimizer.momentum = 0;
        Recorded rec;
        Trainer t(c, rec.callbacks());
        const TrainResult r = t.run();
        QCOMPARE(r.status, std::string("failed"));
        QVERIFY(r.bad_input);
        QCOMPARE(r.error_messages.size(), std::size_t(1));
        QCOMPARE(r.error_messages[0].id, std::string("train.loss_not_finite"));
        // the step it happened at is the one after the last step event
        QVERIFY(r.error.find("at step " + std::to_string(rec.steps.size() + 1) + ";") != std::string::npos);
        QCOMPARE(r.steps, std::int64_t(rec.steps.size()));
        QVERIFY(r.steps < 12);
        QVERIFY(rec.evals.empty());
    }
};

QTEST_GUILESS_MAIN(WorkloadEventsTest)
#include "test_workload_events.moc"
