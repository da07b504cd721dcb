// RunController, the lifecycle both front ends share: events survive their JSON form; a run relayed as
// JSON lines through deliver() lands in the history exactly like the same run trained locally; a run
// whose input is refused leaves no trace (or is kept, as the window asks); out of memory comes back
// with advice that fits; outputs are written model.safetensors first and run.json last; the webhook
// message arrives at a local server; a config that does not validate is refused before anything.
#include <QtTest>

#include <QJsonDocument>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>

#include "http_sink.h"
#include "io/safetensors.h"
#include "nn/model_spec.h"
#include "notify/webhook_notifier.h"
#include "session/RunController.h"
#include "session/RunEvent.h"
#include "store/run_store.h"

using namespace hrapp;

namespace {

hr::TrainConfig smallConfig(std::int64_t steps = 12) {
    hr::TrainConfig c = defaultTrainConfig();
    c.model = hr::preset_model("mlp");
    c.model_source = "preset:mlp";
    c.data = "synthetic";
    c.train_limit = 512;
    c.test_limit = 128;
    c.steps = steps;
    c.batch = 32;
    c.threads = 2;
    c.device = "cpu";
    return c;
}

// Runs to the end; returns the outcome.
RunOutcome runToEnd(RunController& c, const hr::TrainConfig& config, const RunOptions& o) {
    QSignalSpy finished(&c, &RunController::runFinished);
    QString error;
    if (!c.start(config, o, &error)) qFatal("start refused: %s", qPrintable(error));
    if (!finished.wait(300000)) qFatal("the run did not finish");
    return finished.first().first().value<RunOutcome>();
}

bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace

class TestRunController : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void eventsRoundTripThroughJson() {
        hr::StepEvent s;
        s.step = 7;
        s.total_steps = 100;
        s.epoch = 2;
        s.step_in_epoch = 3;
        s.steps_per_epoch = 50;
        s.loss = 1.25;
        s.accuracy = 0.5;
        s.lr = 0.01;
        s.step_seconds = 0.125;
        s.images_per_second = 512;
        s.elapsed_seconds = 3.5;
        s.eta_seconds = std::nan("");
        s.loss_scale = 65536;
        s.skipped = true;
        s.tokens_per_second = 65536;  // a language model's step
        s.grad_norm = 0.75;
        hr::EpochEvent e{3, 0.75, 0.8, std::nan(""), std::nan(""), 12.5, 900, 150};
        e.tokens_per_second = 115200;
        hr::MemoryEvent m;
        m.step = 9;
        m.elapsed_seconds = 1.5;
        m.device_capacity = std::size_t(8) << 30;
        hr::at(m.ledger.live, hr::MemCategory::activations) = 4096;
        hr::at(m.ledger.peak, hr::MemCategory::parameters) = 1024;
        hr::at(m.ledger.at_peak, hr::MemCategory::gradients) = 512;
        m.ledger.live_total = 4096;
        m.ledger.peak_total = 9000;
        m.ledger.reserved_free = 77;
        m.ledger.peak_reserved = 9077;
        m.ledger.peak_phase = "backward";
        m.ledger.peak_step = 4;
        m.ledger.layers[2] = {100, 200};
        hr::at(m.ledger.layer_peak_split[2], hr::MemCategory::activations) = 150;
        hr::TrainResult r;
        r.status = "failed";
        r.error = "out of memory";
        r.error_messages = {hr::Message(HR_MSG("x.y", "out of %1"), {"memory"})};
        r.bad_input = true;
        r.test_accuracy = std::nan("");
        r.steps = 42;
        r.epochs = {e};
        r.ledger = m.ledger;
        r.device_name = "cpu (test)";
        r.out_of_memory = true;
        r.oom_limit = 3 << 20;
        r.oom_category = "activations";
        RunEnded end;
        end.result = r;
        end.refused = true;
        end.predicted.valid = true;
        hr::at(end.predicted.device, hr::MemCategory::activations) = 123;
        end.predicted.deviceTotal = 123;
        end.outDir = "/x";
        end.written = {"/x/model.safetensors", "/x/run.json"};
        end.writeError = "disk full";
        hr::EvalEvent v;
        v.step = 250;
        v.epoch = 1;
        v.loss = 2.02;
        v.accuracy = std::nan("");
        v.tokens = 65536;
        v.samples = 256;
        v.seconds = 1.25;
        const std::vector<RunEvent> events = {hr::DeviceEvent{"cuda:1", "cuda:1 (H200)", "device auto: using cuda:1"}, s, e, m,
                                              hr::LogEvent{hr::LogLevel::warning, "careful"}, end, v};
        for (const RunEvent& ev : events) {
            // through text, as a JSON line on a pipe
            const std::string line = runEventToJson(ev).dump();
            QVERIFY(line.find('\n') == std::string::npos);
            const RunEvent back = runEventFromJson(nlohmann::json::parse(line));
            QCOMPARE(back.index(), ev.index());
            QCOMPARE(runEventToJson(back).dump(), line);
        }
        // the device note crosses as a translatable sentence (the rank's or child's language is not the window's)
        hr::DeviceEvent dev{"cpu", "cpu (OpenBLAS)", "", {}};
        dev.text = hr::Message(HR_MSG("device.auto_no_gpu", "device auto: no GPU (%1); training on the CPU"), {"no driver"});
        dev.note = dev.text.english();
        const auto dev2 = std::get<hr::DeviceEvent>(runEventFromJson(runEventToJson(dev)));
        QCOMPARE(dev2.text.id, std::string("device.auto_no_gpu"));
        QCOMPARE(dev2.text.args, std::vector<std::string>{"no driver"});
        QCOMPARE(dev2.note, std::string("device auto: no GPU (no driver); training on the CPU"));
        const auto s2 = std::get<hr::StepEvent>(runEventFromJson(runEventToJson(s)));
        QCOMPARE(s2.step, s.step);
        QVERIFY(std::isnan(s2.eta_seconds));
        QVERIFY(s2.skipped);
        QCOMPARE(s2.loss_scale, 65536.0);
        QCOMPARE(s2.tokens_per_second, 65536.0);  // a language model's figures cross between ranks too
        QCOMPARE(s2.grad_norm, 0.75);
        const auto e2 = std::get<hr::EpochEvent>(runEventFromJson(runEventToJson(e)));
        QCOMPARE(e2.tokens_per_second, 115200.0);
        QCOMPARE(e2.images_per_second, 900.0);
        const auto v2 = std::get<hr::EvalEvent>(runEventFromJson(runEventToJson(v)));
        QCOMPARE(v2.step, v.step);
        QCOMPARE(v2.epoch, v.epoch);
        QCOMPARE(v2.loss, v.loss);
        QVERIFY(std::isnan(v2.accuracy));
        QCOMPARE(v2.tokens, v.tokens);
        QCOMPARE(v2.samples, v.samples);
        QCOMPARE(v2.seconds, v.seconds);
        const auto m2 = std::get<hr::MemoryEvent>(runEventFromJson(runEventToJson(m)));
        QCOMPARE(hr::at(m2.ledger.live, hr::MemCategory::activations), std::size_t(4096));
        QCOMPARE(m2.ledger.layers.at(2).peak, std::size_t(200));
        QCOMPARE(hr::at(m2.ledger.layer_peak_split.at(2), hr::MemCategory::activations), std::size_t(150));
        QCOMPARE(m2.ledger.peak_phase, std::string("backward"));
        const auto end2 = std::get<RunEnded>(runEventFromJson(runEventToJson(end)));
        QCOMPARE(end2.result.error, std::string("out of memory"));
        QCOMPARE(end2.result.status, std::string("failed"));
        QCOMPARE(end2.result.error_messages.size(), std::size_t(1));
        QCOMPARE(end2.result.error_messages.at(0).id, std::string("x.y"));
        QCOMPARE(end2.result.error_messages.at(0).english(), std::string("out of memory"));
        QVERIFY(std::isnan(end2.result.test_accuracy));
        QVERIFY(std::isnan(end2.result.epochs.at(0).test_loss));
        QCOMPARE(end2.result.oom_limit, std::size_t(3 << 20));
        QCOMPARE(end2.written, end.written);
        QVERIFY(end2.refused);
        QCOMPARE(hr::at(end2.predicted.device, hr::MemCategory::activations), std::size_t(123));
        // malformed lines are refused with a message, not a crash
        QVERIFY_THROWS_EXCEPTION(hr::InputError, runEventFromJson(nlohmann::json::parse(R"({"event":"warp"})")));
        QVERIFY_THROWS_EXCEPTION(hr::InputError, runEventFromJson(nlohmann::json::parse(R"({"event":"step","step":"x"})")));
        QVERIFY_THROWS_EXCEPTION(hr::InputError, runEventFromJson(nlohmann::json::parse("[1,2]")));
    }

    void relayedEventsRecordLikeLocalOnes() {
        RunStore a, b;
        QVERIFY(a.open(m_dir.filePath("a.sqlite")));
        QVERIFY(b.open(m_dir.filePath("b.sqlite")));
        RunController local, relay;
        // every event of the local run, as the JSON lines a rank would write
        QStringList lines;
        auto add = [&](const RunEvent& e) { lines << QString::fromStdString(runEventToJson(e).dump()); };
        connect(&local, &RunController::deviceChosen, this, [&](const hr::DeviceEvent& e) { add(e); });
        connect(&local, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& v) {
            for (const auto& e : v) add(e);
        });
        connect(&local, &RunController::epochFinished, this, [&](const hr::EpochEvent& e) { add(e); });
        connect(&local, &RunController::memoryUpdated, this, [&](const hr::MemoryEvent& e) { add(e); });
        connect(&local, &RunController::logMessage, this, [&](const hr::LogEvent& e) { add(e); });
        RunOptions o;
        o.store = &a;
        o.sampleTelemetry = false;
        o.name = "relay test";
        const hr::TrainConfig config = smallConfig();
        const RunOutcome mine = runToEnd(local, config, o);
        add(mine.ended);
        QCOMPARE(QString::fromStdString(mine.result().status), QStringLiteral("finished"));
        QVERIFY(lines.size() > 12);

        RunOptions ro = o;
        ro.store = &b;
        ro.runLocally = false;
        QSignalSpy steps(&relay, &RunController::stepsReady), finished(&relay, &RunController::runFinished);
        QVERIFY(relay.start(config, ro));
        const qint64 relayedId = relay.runId();
        for (const QString& l : lines) relay.deliver(runEventFromJson(nlohmann::json::parse(l.toStdString())));
        QCOMPARE(finished.count(), 1);
        QCOMPARE(steps.count(), 12);
        QVERIFY(!relay.isRunning());

        const auto ia = a.run(mine.runId), ib = b.run(relayedId);
        QVERIFY(ia && ib);
        QCOMPARE(ib->name, ia->name);
        QCOMPARE(ib->status, ia->status);
        QCOMPARE(ib->device, ia->device);
        QCOMPARE(ib->config, ia->config);
        QCOMPARE(ib->spec, ia->spec);
        QCOMPARE(ib->finalMetrics, ia->finalMetrics);
        QCOMPARE(ib->stepCount, qint64(12));
        const auto sa = a.steps(mine.runId), sb = b.steps(relayedId);
        QCOMPARE(sb.size(), sa.size());
        for (int i = 0; i < sa.size(); ++i) {
            QCOMPARE(sb[i].step, sa[i].step);
            QVERIFY(same(sb[i].loss, sa[i].loss));
            QVERIFY(same(sb[i].elapsedSeconds, sa[i].elapsedSeconds));
        }
        const auto ea = a.epochs(mine.runId), eb = b.epochs(relayedId);
        QCOMPARE(eb.size(), ea.size());
        QVERIFY(same(eb.last().testAccuracy, ea.last().testAccuracy));
        const auto ma = a.memory(mine.runId), mb = b.memory(relayedId);
        QCOMPARE(mb.size(), ma.size());
        for (int i = 0; i < ma.size(); ++i) {
            QCOMPARE(mb[i].category, ma[i].category);
            QCOMPARE(mb[i].predicted, ma[i].predicted);
            QCOMPARE(mb[i].peak, ma[i].peak);
            QCOMPARE(mb[i].atPeak, ma[i].atPeak);
        }
        QCOMPARE(b.memorySamples(relayedId).size(), a.memorySamples(mine.runId).size());
    }

    void refusedInputLeavesNoTrace() {
        RunStore store;
        QVERIFY(store.open(m_dir.filePath("refused.sqlite")));
        RunController c;
        hr::TrainConfig config = smallConfig();
        config.data = "idx:/nonexistent/folder";
        RunOptions o;
        o.store = &store;
        o.outDir = m_dir.filePath("refused-out");
        RunOutcome out = runToEnd(c, config, o);
        QVERIFY(out.ended.refused);
        QCOMPARE(out.exitCode(), 2);
        QVERIFY(out.result().error.find("/nonexistent/folder") != std::string::npos);
        QCOMPARE(out.runId, qint64(0));
        QVERIFY(store.listRuns().isEmpty());
        QVERIFY(!QFileInfo::exists(o.outDir));
        // the window keeps it, as failed
        o.recordRefusedRuns = true;
        out = runToEnd(c, config, o);
        QVERIFY(out.runId > 0);
        QCOMPARE(store.run(out.runId)->status, QStringLiteral("failed"));
        QVERIFY(store.run(out.runId)->error.contains("/nonexistent/folder"));
        QVERIFY(!QFileInfo::exists(o.outDir));
    }

    void invalidConfigIsRefusedBeforeAnything() {
        RunStore store;
        QVERIFY(store.open(m_dir.filePath("invalid.sqlite")));
        RunController c;
        QSignalSpy started(&c, &RunController::runStarted);
        hr::TrainConfig config = smallConfig();
        config.batch = 0;
        RunOptions o;
        o.store = &store;
        o.outDir = m_dir.filePath("invalid-out");
        QString error;
        QVERIFY(!c.start(config, o, &error));
        QVERIFY2(error.contains("--batch"), qPrintable(error));
        QCOMPARE(started.count(), 0);
        QVERIFY(!c.isRunning());
        QVERIFY(store.listRuns().isEmpty());
        QVERIFY(!QFileInfo::exists(o.outDir));
        // an output folder that cannot be made
        config.batch = 32;
        o.outDir = "/proc/headroom-test/run";
        QVERIFY(!c.start(config, o, &error));
        QVERIFY2(error.contains("is not a writable folder"), qPrintable(error));
        QVERIFY(store.listRuns().isEmpty());
    }

    void outOfMemoryComesWithAdviceThatFits() {
        RunController c;
        hr::TrainConfig config = smallConfig(3);
        config.model = hr::preset_model("seed-cnn");
        config.batch = 64;
        config.memory_limit = std::size_t(3) << 20;
        RunOptions o;
        o.sampleTelemetry = false;
        o.outDir = m_dir.filePath("oom-out");
        const RunOutcome out = runToEnd(c, config, o);
        QVERIFY(out.result().out_of_memory);
        QCOMPARE(out.exitCode(), 2);
        QVERIFY(out.ended.written.empty());
        QVERIFY(!QFileInfo::exists(o.outDir));
        QVERIFY(out.result().error.find("out of memory") != std::string::npos);
        QVERIFY(out.advice);
        QVERIFY(out.advice->found());
        QVERIFY2(out.advice->summary().startsWith("this fits in 3.00 MiB (predicted "), qPrintable(out.advice->summary()));
        QVERIFY(out.advice->summary().endsWith(out.advice->flags()));
        QVERIFY(out.advice->flags().startsWith("--batch 64 "));
        QCOMPARE(out.advice->changes().size(), 4);
        // and the advice does fit: the same run with its strategy finishes within the limit
        hr::TrainConfig fixed = config;
        fixed.strategy = out.advice->bestCandidate().strategy;
        const RunOutcome ok = runToEnd(c, fixed, o);
        QCOMPARE(QString::fromStdString(ok.result().status), QStringLiteral("finished"));
        QVERIFY(ok.result().ledger.peak_total <= config.memory_limit);
        QCOMPARE(ok.result().ledger.peak_total, out.advice->bestCandidate().plan.device_total);
    }

    void outputsModelFirstRunJsonLast() {
        RunController c;
        RunOptions o;
        o.sampleTelemetry = false;
        o.outDir = m_dir.filePath("out/nested/run");
        const RunOutcome out = runToEnd(c, smallConfig(), o);
        QCOMPARE(out.exitCode(), 0);
        QCOMPARE(out.ended.written.size(), std::size_t(2));
        QVERIFY(QString::fromStdString(out.ended.written[0]).endsWith("/model.safetensors"));
        QVERIFY(QString::fromStdString(out.ended.written[1]).endsWith("/run.json"));
        QCOMPARE(QDir(o.outDir).entryList(QDir::Files | QDir::Hidden),
                 (QStringList{"checkpoint-000000012.json", "checkpoint-000000012.safetensors", "config.json",
                              "model.safetensors", "run.json"}));  // config.json and the last checkpoint (train/resume.h)
        QFile f(o.outDir + "/run.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject record = QJsonDocument::fromJson(f.readAll()).object();
        QCOMPARE(record["status"].toString(), QStringLiteral("finished"));
        QCOMPARE(record["final"].toObject()["steps"].toInt(), 12);
        QCOMPARE(record["memory"].toObject()["predicted"].toObject()["device_total"].toDouble(),
                 double(out.ended.predicted.deviceTotal));
        const hr::SafeTensorsFile weights = hr::read_safetensors((o.outDir + "/model.safetensors").toStdString());
        QVERIFY(!weights.tensors.empty());
        // a stopped run writes what there is
        RunOptions so = o;
        so.outDir = m_dir.filePath("stopped");
        hr::TrainConfig slow = smallConfig(100000);
        QSignalSpy steps(&c, &RunController::stepsReady), finished(&c, &RunController::runFinished);
        QVERIFY(c.start(slow, so));
        QVERIFY(steps.wait(120000));
        c.stop();
        QVERIFY(finished.wait(60000));
        const RunOutcome stopped = finished.first().first().value<RunOutcome>();
        QCOMPARE(QString::fromStdString(stopped.result().status), QStringLiteral("stopped"));
        QCOMPARE(stopped.exitCode(), 1);
        QVERIFY(stopped.result().steps < 100000);
        QStringList files = QDir(so.outDir).entryList(QDir::Files | QDir::Hidden);
        QCOMPARE(files.filter(QStringLiteral("checkpoint-")).size(), 2);  // the stopped step's checkpoint
        for (const QString& f : files.filter(QStringLiteral("checkpoint-"))) files.removeAll(f);
        QCOMPARE(files, (QStringList{"config.json", "model.safetensors", "run.json"}));
    }

    void webhookMessageArrives() {
        hrtest::HttpSink sink;
        RunController c;
        WebhookNotifier::Settings s;
        s.url = sink.url();
        s.format = WebhookNotifier::Template::Generic;
        c.webhook()->setSettings(s);
        QSignalSpy settled(&c, &RunController::notificationsSettled);
        RunOptions o;
        o.sampleTelemetry = false;
        o.name = "hooked";
        const RunOutcome out = runToEnd(c, smallConfig(), o);
        QVERIFY(settled.count() == 1 || settled.wait(20000));
        QCOMPARE(sink.bodies.size(), 1);
        const QJsonObject body = QJsonDocument::fromJson(sink.bodies.first()).object();
        QCOMPARE(body["event"].toString(), QStringLiteral("run_finished"));
        const QJsonObject details = body["details"].toObject();
        QCOMPARE(details["run"].toString(), QStringLiteral("hooked"));
        QCOMPARE(details["status"].toString(), QStringLiteral("finished"));
        QCOMPARE(details["metrics"].toObject(), out.finalMetrics);
        QCOMPARE(details["metrics"].toObject()["test_accuracy"].toDouble(), out.result().test_accuracy);
    }
};

QTEST_MAIN(TestRunController)
#include "test_run_controller.moc"
