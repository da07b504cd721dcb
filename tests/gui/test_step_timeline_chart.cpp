// The step-timeline chart on the Memory plan tab (issue 47): it draws the plan's timeline stacked by
// category (each point's stack equals the timeline's live bytes, the peak marked where the timeline says),
// the hover names the phase, layer and bytes, a strategy change redraws the prediction at once
// (checkpointing lowers the forward ramp and adds recomputes), a run puts the measured step beside it,
// the trace export is a Chrome trace with both, and the tab renders at 1366x768 in English and Chinese
// (PNG files when HEADROOM_GRAB_DIR is set).
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QScrollArea>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "charts/StepTimelineChart.h"
#include "gui/AppSettings.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "i18n/CoreText.h"

using hr::MemCategory;

class TestStepTimelineChart : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    static hr::TrainConfig config(hrapp::MainWindow& w) {
        hr::TrainConfig c = w.trainConfig();
        c.model = hr::preset_model("seed-cnn");
        c.model_source = "preset:seed-cnn";
        c.data = "synthetic";
        c.epochs = 1;
        c.steps = 3;
        c.batch = 32;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.05;
        c.optimizer.momentum = 0.9;
        c.threads = 2;
        c.evaluate_each_epoch = false;
        return c;
    }
    static void checkChart(const hrw::StepTimelineChart* chart, const hr::StepTimeline& t) {
        QVERIFY(!t.empty());
        int silent = 0;  // phases without events: one point each
        std::vector<int> count(t.phases.size(), 0);
        for (const auto& e : t.events) ++count[std::size_t(e.phase)];
        for (int n : count) silent += n == 0;
        QCOMPARE(chart->pointCount(), 1 + int(t.events.size()) + silent);
        QCOMPARE(chart->pointTotal(0), hr::total(t.base));
        QCOMPARE(chart->pointTotal(chart->peakPoint()), t.peak_total);
        std::size_t most = 0;
        for (int i = 0; i < chart->pointCount(); ++i) most = std::max(most, chart->pointTotal(i));
        QCOMPARE(most, t.peak_total);
        // the top of the stack at the peak is the peak (in the axis unit)
        QCPGraph* top = nullptr;
        for (int g = 0; g < chart->graphCount(); ++g)
            if (chart->graph(g)->visible()) top = chart->graph(g);
        QVERIFY(top);
        const double div = t.peak_total >= 2.0 * (1 << 20) ? double(1 << 20) : 1024.0;
        QVERIFY(std::abs(top->data()->at(chart->peakPoint())->value - double(t.peak_total) / div) < 1e-6);
        int categories = 0;
        for (MemCategory c : hr::all_categories()) {
            bool any = false;
            for (int i = 0; i < chart->pointCount(); ++i) any = any || chart->pointBytes(i, c) > 0;
            categories += any;
        }
        QCOMPARE(chart->seriesCount(), categories);
        // the hover at the peak names the phase, the layer and the bytes
        const QString hover = chart->hoverText(chart->peakPoint());
        QVERIFY2(hover.contains(hrapp::phaseText(t.phases[std::size_t(t.peak_phase)])), qPrintable(hover));
        QVERIFY2(hover.contains(hrw::coreBytesText(t.peak_total)), qPrintable(hover));
    }

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTimelineTest"));
        QVERIFY(m_dir.isValid());
        qputenv("HEADROOM_DB", m_dir.filePath(QStringLiteral("runs.sqlite")).toUtf8());
    }

    void chartShowsThePlanAndFollowsTheStrategy() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.resize(1366, 768);
        w.show();
        w.setTrainConfig(config(w));
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        plan->updateNow();
        QVERIFY2(plan->hasPlan(), qPrintable(plan->errorText()));
        const hr::StepTimeline& t = plan->plan().timeline;
        checkChart(plan->predictedTimelineChart(), t);
        QCOMPARE(plan->predictedTimelineChart()->timeline().peak_total, t.peak_total);
        // seed-cnn's peak: the end of the forward, the last linear layer (hand account: test_step_timeline)
        QCOMPARE(t.phases[std::size_t(t.peak_phase)].kind, hr::StepPhaseKind::forward);
        QVERIFY(plan->timelineLabel()->text().contains(hrapp::peakText(t).toHtmlEscaped()));
        QVERIFY(plan->measuredTimelineChart()->isHidden());
        // checkpointing everything: drawn at once, the forward ramp lower and recomputes in the backward
        const std::size_t rampBefore = hr::at(t.at_peak, MemCategory::activations);
        hr::TrainConfig c = w.trainConfig();
        c.strategy.checkpoint = "all";
        w.setTrainConfig(c);
        plan->updateNow();
        const hr::StepTimeline& ck = plan->predictedTimelineChart()->timeline();
        checkChart(plan->predictedTimelineChart(), ck);
        std::size_t endOfForward = 0;
        int recomputes = 0;
        for (const auto& e : ck.events)
            if (ck.phases[std::size_t(e.phase)].kind == hr::StepPhaseKind::forward)
                endOfForward = hr::at(e.live, MemCategory::activations);
        for (const auto& p : ck.phases) recomputes += p.kind == hr::StepPhaseKind::recompute;
        QVERIFY2(endOfForward < rampBefore, qPrintable(QStringLiteral("%1 vs %2").arg(endOfForward).arg(rampBefore)));
        QVERIFY(recomputes > 0);
        if (!qEnvironmentVariableIsEmpty("HEADROOM_GRAB_DIR")) {
            w.tabs()->setCurrentWidget(plan);
            if (auto* box = plan->findChild<QWidget*>(QStringLiteral("planTimeline"))) {
                if (auto* area = plan->findChild<QScrollArea*>()) area->ensureWidgetVisible(box);
            }
            QTest::qWait(100);
            QVERIFY(w.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/timeline-plan-en.png")));
        }
    }

    void runPutsTheMeasuredStepBeside() {
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.resize(1366, 768);
        w.show();
        w.setTrainConfig(config(w));
        hrapp::MemoryPlanPanel* plan = w.memoryPlan();
        plan->updateNow();
        QSignalSpy finished(&w, &hrapp::MainWindow::runFinished);
        w.start();
        QVERIFY(finished.wait(300000));
        const hr::TrainResult r = w.lastResult();
        QCOMPARE(QString::fromStdString(r.status), QStringLiteral("finished"));
        QVERIFY(!plan->measuredTimelineChart()->isHidden());
        QCOMPARE(plan->measuredTimelineChart()->timeline().step, std::int64_t(2));
        checkChart(plan->measuredTimelineChart(), r.step_timeline);
        // measured equals predicted on the CPU, event by event (the bytes the step adds)
        const hr::StepTimeline& p = plan->predictedTimelineChart()->timeline();
        QCOMPARE(r.step_timeline.events.size(), p.events.size());
        QCOMPARE(r.step_timeline.peak_total - hr::total(r.step_timeline.base), p.peak_total - hr::total(p.base));
        // the export: one Chrome trace, the prediction as process 1 and the measured step as process 2
        const QString path = m_dir.filePath(QStringLiteral("step.json"));
        QString error;
        QVERIFY2(plan->exportTimelineTrace(path, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray events = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("traceEvents")).toArray();
        int complete[3] = {0, 0, 0};
        for (const QJsonValue& v : events) {
            const QJsonObject e = v.toObject();
            if (e.value(QStringLiteral("ph")).toString() == QLatin1String("X")) ++complete[std::clamp(e.value(QStringLiteral("pid")).toInt(), 0, 2)];
        }
        QCOMPARE(complete[1], int(p.phases.size()));
        QCOMPARE(complete[2], int(r.step_timeline.phases.size()));
        QVERIFY(!plan->exportTimelineTrace(m_dir.filePath(QStringLiteral("no/such/folder/step.json")), &error));
        QVERIFY(error.contains(QStringLiteral("no/such/folder")));
        if (!qEnvironmentVariableIsEmpty("HEADROOM_GRAB_DIR")) {
            w.tabs()->setCurrentWidget(plan);
            if (auto* box = plan->findChild<QWidget*>(QStringLiteral("planTimeline")))
                if (auto* area = plan->findChild<QScrollArea*>()) area->ensureWidgetVisible(box, 0, 0);
            QTest::qWait(100);
            QVERIFY(w.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/timeline-run-en.png")));
            QCOMPARE(hrapp::installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
            hrapp::MainWindow zw;
            zw.setPersistState(false);
            zw.setAskBeforeClose(false);
            zw.resize(1366, 768);
            zw.show();
            zw.setTrainConfig(config(zw));
            zw.memoryPlan()->updateNow();
            zw.memoryPlan()->setRunStarted(zw.trainConfig());
            zw.memoryPlan()->setRunResult(r);
            zw.tabs()->setCurrentWidget(zw.memoryPlan());
            if (auto* box = zw.memoryPlan()->findChild<QWidget*>(QStringLiteral("planTimeline")))
                if (auto* area = zw.memoryPlan()->findChild<QScrollArea*>()) area->ensureWidgetVisible(box, 0, 0);
            QTest::qWait(100);
            QVERIFY(zw.grab().save(qEnvironmentVariable("HEADROOM_GRAB_DIR") + QStringLiteral("/timeline-run-zh.png")));
            hrapp::installTranslators(QStringLiteral("en"));
        }
    }
};

QTEST_MAIN(TestStepTimelineChart)
#include "test_step_timeline_chart.moc"
