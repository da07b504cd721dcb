// Issue 6 in the window: runs started from the window land in the run history (steps, epochs, memory,
// telemetry, final status), the Runs tab lists, filters, renames, deletes, overlays and loads them back,
// reports export, and the hardware monitor delivers samples with no run active.
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "builder/ModelBuilder.h"
#include "charts/LiveChart.h"
#include "gui/AppSettings.h"
#include "gui/HardwareView.h"
#include "gui/MainWindow.h"
#include "gui/RunsView.h"
#include "gui/TelemetryMonitor.h"
#include "notify/webhook_notifier.h"
#include "nn/model_spec.h"
#include "store/run_store.h"

class TestRunsTab : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    qint64 m_finished = 0, m_stopped = 0, m_failed = 0;

    static hr::TrainConfig config(hrapp::MainWindow& w, int epochs) {
        hr::TrainConfig c = w.trainConfig();
        c.data = "synthetic";
        c.train_limit = 1024;
        c.test_limit = 256;
        c.epochs = epochs;
        c.batch = 64;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.05;
        c.optimizer.momentum = 0.9;
        c.threads = 2;
        c.evaluate_each_epoch = true;
        return c;
    }
    static void prepare(hrapp::MainWindow& w) {
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.telemetry()->setIntervalMs(100);
        w.show();
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
        QSettings().clear();
        // A webhook nobody answers: the run must finish all the same.
        QSettings().setValue(QStringLiteral("notify/webhookUrl"), QStringLiteral("http://127.0.0.1:9/hook"));
        QSettings().setValue(QStringLiteral("notify/desktop"), false);
    }
    void cleanupTestCase() { QSettings().clear(); }

    void settingsDefaults() {
        QSettings().remove(QStringLiteral("telemetry/intervalMs"));
        QCOMPARE(hrapp::AppSettings::load().telemetryIntervalMs, 500);
        QSettings().setValue(QStringLiteral("telemetry/intervalMs"), 5);
        QCOMPARE(hrapp::AppSettings::load().telemetryIntervalMs, 100);  // clamped to 100 ms .. 10 s
        QSettings().setValue(QStringLiteral("telemetry/intervalMs"), 60000);
        QCOMPARE(hrapp::AppSettings::load().telemetryIntervalMs, 10000);
        QSettings().remove(QStringLiteral("telemetry/intervalMs"));
    }

    void runLandsInStoreAndTab() {
        hrapp::MainWindow w;
        prepare(w);
        QCOMPARE(w.runStore()->path(), m_dir.filePath(QStringLiteral("runs.sqlite")));
        QVERIFY(w.runStore()->isOpen());
        QCOMPARE(w.webhook()->settings().url.toString(), QStringLiteral("http://127.0.0.1:9/hook"));
        w.setTrainConfig(config(w, 2));
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        QSignalSpy webhookFailed(w.webhook(), &hrapp::WebhookNotifier::failed);
        w.startAction()->trigger();
        QVERIFY(w.currentRunId() > 0);
        const qint64 id = w.currentRunId();
        QCOMPARE(w.runStore()->run(id)->status, QStringLiteral("running"));
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        QCOMPARE(w.currentRunId(), qint64(0));
        QCOMPARE(w.lastRunId(), id);
        m_finished = id;

        hrapp::RunStore* store = w.runStore();
        const auto info = store->run(id);
        QVERIFY(info);
        QCOMPARE(info->status, QStringLiteral("finished"));
        QCOMPARE(info->stepCount, qint64(r.steps));                 // every step
        QCOMPARE(store->epochs(id).size(), 2);                       // every epoch
        QCOMPARE(store->epochs(id).last().testAccuracy, r.test_accuracy);
        QVERIFY(!store->memorySamples(id).isEmpty());                // ledger snapshots
        QVERIFY(store->memory(id).size() > 0);
        qint64 predicted = 0;
        for (const hrapp::MemoryCategoryRow& m : store->memory(id)) predicted += qMax<qint64>(0, m.predicted);
        QVERIFY(predicted > 0);  // the planner's prediction beside the ledger's measurement
        QVERIFY(!store->telemetry(id).isEmpty());                    // samples taken during the run
        QCOMPARE(info->finalMetrics.value(QStringLiteral("test_accuracy")).toDouble(), r.test_accuracy);
        QCOMPARE(info->spec.value(QStringLiteral("name")).toString(), QString::fromStdString(w.builder()->spec().name));

        // The Runs tab lists it with its figures.
        hrapp::RunsView* v = w.runsView();
        QVERIFY(QTest::qWaitFor([&] {
            return v->rowOf(id) >= 0 && v->table()->item(v->rowOf(id), hrapp::RunsView::StatusColumn)->text() != QStringLiteral("Running");
        }, 5000));
        const int row = v->rowOf(id);
        QCOMPARE(v->table()->item(row, hrapp::RunsView::NameColumn)->text(), info->name);
        QCOMPARE(v->table()->item(row, hrapp::RunsView::StatusColumn)->text(), QStringLiteral("Finished"));
        QCOMPARE(v->table()->item(row, hrapp::RunsView::AccuracyColumn)->text(),
                 QStringLiteral("%1 %").arg(r.test_accuracy * 100.0, 0, 'f', 2));
        QVERIFY(v->table()->item(row, hrapp::RunsView::DurationColumn)->text().contains(QLatin1Char(':')));

        // The webhook nobody answers failed quietly (logged); the run was not disturbed.
        QVERIFY(webhookFailed.count() > 0 || webhookFailed.wait(15000));
    }

    void stoppedAndFailedRunsAreRecorded() {
        hrapp::MainWindow w;
        prepare(w);
        w.setTrainConfig(config(w, 50));
        QSignalSpy steps(w.session(), &hrapp::TrainingSession::stepsReady);
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        const qint64 id = w.currentRunId();
        QVERIFY(QTest::qWaitFor([&] { return steps.count() >= 2; }, 120000));
        w.stop();
        QVERIFY(finished.wait(60000));
        QCOMPARE(w.runStore()->run(id)->status, QStringLiteral("stopped"));
        QCOMPARE(w.runStore()->run(id)->stepCount, qint64(w.lastResult().steps));
        m_stopped = id;

        hr::TrainConfig bad = config(w, 1);
        bad.data = "idx:/nonexistent/folder";
        w.setTrainConfig(bad);
        w.start();
        const qint64 failedId = w.currentRunId();
        QVERIFY(finished.wait(60000));
        const auto info = w.runStore()->run(failedId);
        QCOMPARE(info->status, QStringLiteral("failed"));
        QVERIFY(!info->error.isEmpty());
        m_failed = failedId;
        // the row shows the end once the tab has refreshed (it may still say Running just after runFinished)
        auto status = [&] {
            const int row = w.runsView()->rowOf(failedId);
            return row < 0 ? QString() : w.runsView()->table()->item(row, hrapp::RunsView::StatusColumn)->text();
        };
        QTRY_COMPARE_WITH_TIMEOUT(status(), QStringLiteral("Failed"), 10000);
    }

    void closingDuringRunRecordsStopped() {
        auto* w = new hrapp::MainWindow;
        prepare(*w);
        w->setTrainConfig(config(*w, 50));
        QSignalSpy steps(w->session(), &hrapp::TrainingSession::stepsReady);
        w->start();
        const qint64 id = w->currentRunId();
        QVERIFY(QTest::qWaitFor([&] { return steps.count() >= 1; }, 120000));
        QVERIFY(w->close());
        delete w;
        hrapp::RunStore store;
        QVERIFY(store.open(qEnvironmentVariable("HEADROOM_DB")));
        QCOMPARE(store.run(id)->status, QStringLiteral("stopped"));
        QVERIFY(store.run(id)->stepCount > 0);
        QVERIFY(store.deleteRun(id));
    }

    void filterByTextAndStatus() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::RunsView* v = w.runsView();
        QCOMPARE(v->rowCount(), 3);
        v->statusFilter()->setCurrentIndex(v->statusFilter()->findData(QStringLiteral("failed")));
        QCOMPARE(v->rowCount(), 1);
        QCOMPARE(v->runIdAt(0), m_failed);
        v->statusFilter()->setCurrentIndex(0);
        QCOMPARE(v->rowCount(), 3);
        v->filterEdit()->setText(QStringLiteral("no-such-run-name"));
        QCOMPARE(v->rowCount(), 0);
        QVERIFY(!v->findChild<QLabel*>(QStringLiteral("runsEmptyLabel"))->isHidden());
        v->filterEdit()->clear();
        QCOMPARE(v->rowCount(), 3);
    }

    void renameInlineAndByApi() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::RunsView* v = w.runsView();
        QVERIFY(v->renameRun(m_finished, QStringLiteral("baseline sgd")));
        QCOMPARE(w.runStore()->run(m_finished)->name, QStringLiteral("baseline sgd"));
        QCOMPARE(v->table()->item(v->rowOf(m_finished), hrapp::RunsView::NameColumn)->text(), QStringLiteral("baseline sgd"));
        // Inline: editing the name cell renames the run in the store.
        v->table()->item(v->rowOf(m_stopped), hrapp::RunsView::NameColumn)->setText(QStringLiteral("stopped early"));
        QCOMPARE(w.runStore()->run(m_stopped)->name, QStringLiteral("stopped early"));
        v->filterEdit()->setText(QStringLiteral("baseline"));
        QCOMPARE(v->rowCount(), 1);
    }

    void overlayTwoRuns() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::RunsView* v = w.runsView();
        v->selectRuns({m_finished});
        QCOMPARE(v->lossChart()->seriesCount(), 1);
        QVERIFY(v->lossChart()->pointCount(0) > 0);
        QCOMPARE(v->accuracyChart()->pointCount(0), 2);  // test accuracy of each epoch
        QVERIFY(v->memoryChart()->pointCount(0) > 0);
        v->selectRuns({m_finished, m_stopped});
        QCOMPARE(v->selectedRunIds().size(), 2);
        for (hrw::LiveChart* c : {v->lossChart(), v->throughputChart(), v->memoryChart()}) {
            QCOMPARE(c->seriesCount(), 2);
            QVERIFY(c->pointCount(0) > 0);
            QVERIFY(c->pointCount(1) > 0);
        }
        QStringList names{v->lossChart()->graph(0)->name(), v->lossChart()->graph(1)->name()};
        QVERIFY(names.contains(QStringLiteral("#%1 baseline sgd").arg(m_finished)));
        QVERIFY(names.contains(QStringLiteral("#%1 stopped early").arg(m_stopped)));
    }

    void exportReportWritesHtml() {
        hrapp::MainWindow w;
        prepare(w);
        const QString html = m_dir.filePath(QStringLiteral("report.html"));
        QString error;
        QVERIFY2(w.exportReport(m_finished, html, &error), qPrintable(error));
        QFile f(html);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.size() > 1000);
        QVERIFY(text.contains("<html"));
        QVERIFY(text.contains("baseline sgd"));
        QVERIFY(w.exportReport(m_finished, m_dir.filePath(QStringLiteral("report.csv")), &error));
        QVERIFY(QFileInfo(m_dir.filePath(QStringLiteral("report.csv"))).size() > 0);
        QVERIFY(!w.exportReport(m_finished, m_dir.filePath(QStringLiteral("report.docx")), &error));
        QVERIFY(error.contains(QStringLiteral("docx")));
    }

    void loadRunIntoBuilder() {
        hrapp::MainWindow w;
        prepare(w);
        w.loadPreset(QStringLiteral("mlp"));
        QCOMPARE(QString::fromStdString(w.builder()->spec().name), QStringLiteral("mlp"));
        const auto info = w.runStore()->run(m_finished);
        QVERIFY(w.loadRun(m_finished));
        QCOMPARE(QString::fromStdString(w.builder()->spec().name), info->spec.value(QStringLiteral("name")).toString());
        QCOMPARE(hr::model_spec_to_json(w.builder()->spec()).dump(),
                 hr::model_spec_to_json(hr::preset_model("seed-cnn")).dump());
        const hr::TrainConfig c = w.trainConfig();
        QCOMPARE(c.data, std::string("synthetic"));
        QCOMPARE(c.epochs, 2);
        QCOMPARE(c.optimizer.momentum, 0.9);
    }

    void deleteWithConfirmation() {
        hrapp::MainWindow w;
        prepare(w);
        hrapp::RunsView* v = w.runsView();
        v->selectRuns({m_failed});
        auto answer = [&](bool yes) {
            QTimer::singleShot(100, [yes, v] {
                auto* box = v->findChild<QMessageBox*>(QStringLiteral("confirmDeleteBox"));
                if (!box) return;
                for (QAbstractButton* b : box->buttons())
                    if ((box->buttonRole(b) == QMessageBox::DestructiveRole) == yes) {
                        b->click();
                        return;
                    }
            });
        };
        answer(false);
        v->deleteSelected();
        QVERIFY(w.runStore()->run(m_failed).has_value());  // cancelled
        answer(true);
        v->deleteSelected();
        QVERIFY(!w.runStore()->run(m_failed).has_value());
        QCOMPARE(v->rowOf(m_failed), -1);
        QCOMPARE(v->deleteRuns({m_stopped}, false), 1);
        QCOMPARE(v->rowCount(), 1);
    }

    void telemetryWithoutRun() {
        hrapp::MainWindow w;
        prepare(w);
        QVERIFY(!w.isRunning());
        QVERIFY(w.telemetry()->isRunning());
        QSignalSpy samples(w.telemetry(), &hrapp::TelemetryMonitor::sampleReady);
        QVERIFY(QTest::qWaitFor([&] { return samples.count() >= 3; }, 10000));
        const auto s = samples.last().first().value<hr::TelemetrySample>();
        QVERIFY(s.host.ram_total > 0);
        QVERIFY(s.host.process_rss > 0);
        QCOMPARE(s.step, qint64(-1));  // no run
        hrapp::HardwareView* h = w.hardwareView();
        QVERIFY(h->cpuChart()->pointCount(0) >= 2);
        QVERIFY(h->hostMemoryChart()->pointCount(0) >= 3);
        QVERIFY(h->hostMemoryChart()->pointCount(1) >= 3);
        QVERIFY(!h->cpuChart()->isHidden());
        if (!w.telemetry()->gpuAvailable()) {
            QVERIFY(h->showsNoDriverState());
            QVERIFY2(h->statusText().contains(QStringLiteral("No NVIDIA driver found")), qPrintable(h->statusText()));
            QVERIFY(h->powerChart()->isHidden());
            QVERIFY(h->deviceTable()->isHidden());
        } else {
            QVERIFY(!h->showsNoDriverState());
            QCOMPARE(h->deviceTable()->rowCount(), w.telemetry()->deviceCount());
            QVERIFY(h->gpuMemoryChart()->pointCount(0) > 0);
        }
    }

    // The GPU side of the hardware monitor, with a fake NVML: one line per device, the device table,
    // and the ledger against NVML's used bytes.
    void gpuChartsWithFakeSource() {
        class FakeGpus : public hr::GpuTelemetrySource {
        public:
            bool available() const override { return true; }
            std::string status() const override { return "fake NVML, 2 GPUs"; }
            std::string driver_version() const override { return "999.1"; }
            int device_count() const override { return 2; }
            std::vector<hr::GpuStats> sample() override {
                std::vector<hr::GpuStats> out;
                for (int i = 0; i < 2; ++i) {
                    hr::GpuStats g;
                    g.index = i;
                    g.name = "Fake H200";
                    g.memory_used = (10LL + i) << 30;
                    g.memory_total = 141LL << 30;
                    g.power_watts = 300 + 10 * i + (n % 7);
                    g.power_limit_watts = 700;
                    g.gpu_utilization = 50 + 10 * i;
                    g.temperature_c = 40 + i;
                    g.sm_clock_mhz = 1980;
                    out.push_back(g);
                }
                ++n;
                return out;
            }
            int n = 0;
        };
        hrapp::TelemetryMonitor monitor(std::make_shared<FakeGpus>());
        QVERIFY(monitor.gpuAvailable());
        QCOMPARE(monitor.deviceCount(), 2);
        hrapp::HardwareView view;
        view.resize(1000, 600);
        view.setGpuState(monitor.gpuAvailable(), monitor.gpuStatus());
        connect(&monitor, &hrapp::TelemetryMonitor::sampleReady, &view, &hrapp::HardwareView::addSample);
        QSignalSpy samples(&monitor, &hrapp::TelemetryMonitor::sampleReady);
        monitor.setIntervalMs(100);
        monitor.setCurrentStep(7);
        monitor.start();
        QVERIFY(QTest::qWaitFor([&] { return samples.count() >= 3; }, 10000));
        monitor.stop();
        QCOMPARE(samples.last().first().value<hr::TelemetrySample>().step, qint64(7));
        QVERIFY(!view.showsNoDriverState());
        QCOMPARE(view.statusText(), QStringLiteral("fake NVML, 2 GPUs"));
        QCOMPARE(view.deviceTable()->rowCount(), 2);
        QCOMPARE(view.deviceTable()->item(1, 2)->text(), QStringLiteral("11.0 / 141.0 GiB"));
        QCOMPARE(view.deviceTable()->item(0, 6)->text(), QStringLiteral("1980 MHz"));
        for (hrw::LiveChart* c : {view.powerChart(), view.utilizationChart(), view.temperatureChart(), view.gpuMemoryChart()}) {
            QCOMPARE(c->seriesCount(), 2);  // one line per device
            QVERIFY(c->pointCount(0) >= 3);
            QVERIFY(c->pointCount(1) >= 3);
        }
        hr::MemoryEvent m;
        m.ledger.live_total = 8ULL << 30;
        m.ledger.reserved_free = 1ULL << 30;
        view.addLedger(1.0, m, 0);
        QCOMPARE(view.gpuMemoryChart()->seriesCount(), 4);  // + ledger allocated and reserved
        QCOMPARE(view.gpuMemoryChart()->graph(3)->data()->at(0)->value, 9.0);
        view.addLedger(2.0, m, -1);  // a CPU run: not on the GPU chart
        QCOMPARE(view.gpuMemoryChart()->pointCount(2), 1);
        if (qEnvironmentVariableIsSet("HEADROOM_GRAB_DIR"))
            view.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/hardware-gpu.png"));
    }
};

QTEST_MAIN(TestRunsTab)
#include "test_runs_tab.moc"
