// The Monitor tab's cost during a run (app/gui/MonitorView, widgets/charts/LiveChart): a chart on a
// hidden tab is not replotted while data arrives, and is drawn with all of it when the tab is shown;
// step batches arriving faster than the refresh interval are drawn together; the redraw interval
// grows when a redraw costs more than the drawing budget; the cards show what arrived. Replots are
// counted with QCustomPlot's own afterReplot signal; the curves' expected values are computed here.
#include <QLabel>
#include <QTabWidget>
#include <QtTest>

#include <cmath>

#include "charts/LiveChart.h"
#include "charts/MemoryChart.h"
#include "gui/MonitorView.h"

namespace {

QVector<hr::StepEvent> steps(std::int64_t first, int n) {
    QVector<hr::StepEvent> v;
    for (int i = 0; i < n; ++i) {
        hr::StepEvent e;
        e.step = first + i;
        e.total_steps = 100000;
        e.loss = 2.0 / double(e.step);
        e.accuracy = 0.5;
        e.images_per_second = 1000.0 + double(e.step);
        v.push_back(e);
    }
    return v;
}

struct ReplotCounter {
    int count = 0;
    double wallMs = 0;  // QCustomPlot's own measure of each replot (wall clock >= this thread's CPU time)
    explicit ReplotCounter(hrw::LiveChart* chart) {
        QObject::connect(chart, &QCustomPlot::afterReplot, chart, [this, chart] {
            ++count;
            wallMs += chart->replotTime();
        });
    }
};

}  // namespace

class TestMonitorView : public QObject {
    Q_OBJECT
private slots:
    void hiddenChartIsNotReplottedAndIsCurrentWhenShown() {
        QTabWidget tabs;
        auto* monitor = new hrapp::MonitorView;
        monitor->setRefreshIntervalMs(20);
        tabs.addTab(monitor, QStringLiteral("Monitor"));
        tabs.addTab(new QLabel(QStringLiteral("other")), QStringLiteral("Other"));
        tabs.resize(1200, 800);
        tabs.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tabs));
        tabs.setCurrentIndex(1);  // the user looks at another tab during the run
        QVERIFY(!monitor->isVisible());
        hrw::LiveChart* loss = monitor->lossChart();
        ReplotCounter replots(loss);
        for (int b = 0; b < 10; ++b) {
            monitor->addSteps(steps(1 + 50 * b, 50));
            QTest::qWait(30);  // longer than the refresh interval: a visible chart would redraw each time
        }
        monitor->flush();
        QTest::qWait(50);
        QCOMPARE(replots.count, 0);
        QCOMPARE(loss->pointCount(0), 500);  // the data is there, only not drawn
        QVERIFY(loss->isStale());

        tabs.setCurrentIndex(0);  // shown: drawn once, with everything that arrived
        QVERIFY(QTest::qWaitFor([&] { return replots.count > 0; }, 5000));
        QVERIFY(!loss->isStale());
        QVERIFY(loss->xAxis->range().contains(500.0));  // the last step is in view
        QVERIFY(loss->xAxis->range().contains(1.0));
        QVERIFY(loss->yAxis->range().contains(2.0 / 500.0));
        QVERIFY(loss->yAxis->range().contains(2.0));
        QVERIFY(replots.count <= 2);
        // the cards too: the smoothed loss of the 500 steps, computed here
        double ema = 0;
        for (int s = 1; s <= 500; ++s) ema = s == 1 ? 2.0 : 0.95 * ema + 0.05 * (2.0 / s);
        auto* card = monitor->findChild<QLabel*>(QStringLiteral("trainLossValue"));
        QVERIFY(card);
        QCOMPARE(card->text(), QString::number(ema, 'f', 4));
    }

    void batchesFasterThanTheIntervalAreDrawnTogether() {
        hrapp::MonitorView monitor;
        monitor.resize(1200, 700);
        monitor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&monitor));
        monitor.setRefreshIntervalMs(250);
        ReplotCounter replots(monitor.lossChart());
        QElapsedTimer t;
        t.start();
        int batches = 0;
        while (t.elapsed() < 600) {  // a batch every 10 ms for 0.6 s: 60 events
            monitor.addSteps(steps(1 + 4 * batches, 4));
            ++batches;
            QTest::qWait(10);
        }
        monitor.flush();
        QTest::qWait(50);
        QVERIFY2(replots.count >= 1 && replots.count <= 6,
                 qPrintable(QStringLiteral("%1 replots for %2 batches").arg(replots.count).arg(batches)));
        QCOMPARE(monitor.lossChart()->pointCount(0), 4 * batches);
        QVERIFY(monitor.lossChart()->xAxis->range().contains(double(4 * batches)));
    }

    void costlyRedrawsLengthenTheInterval() {
        hrapp::MonitorView monitor;
        monitor.resize(1600, 1000);
        monitor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&monitor));
        monitor.setRefreshIntervalMs(10);  // asks for 100 redraws a second
        QList<ReplotCounter*> counters;
        for (hrw::LiveChart* c : monitor.charts()) counters.push_back(new ReplotCounter(c));
        QSignalSpy changed(&monitor, &hrapp::MonitorView::refreshIntervalChanged);
        for (int b = 0; b < 40; ++b) {
            monitor.addSteps(steps(1 + 500 * b, 500));  // long curves: each replot costs milliseconds
            QTest::qWait(15);
        }
        monitor.flush();
        QTest::qWait(50);
        double wall = 0;
        int n = 0;
        for (ReplotCounter* c : counters) {
            wall += c->wallMs;
            n += c->count;
        }
        qDeleteAll(counters);
        QVERIFY(n > 0);
        const double perRedrawMs = wall / qMax<qint64>(1, monitor.redraws());
        // the interval keeps one redraw's cost (CPU time <= the wall time measured by QCustomPlot)
        // within the budget, and never exceeds what the budget needs by more than smoothing allows
        const int interval = monitor.effectiveIntervalMs();
        QVERIFY2(interval >= 10, qPrintable(QString::number(interval)));
        if (perRedrawMs / hrapp::MonitorView::drawBudget() > 40.0) {  // the budget calls for a longer interval
            QVERIFY2(interval > 10, qPrintable(QStringLiteral("interval %1 ms, %2 ms a redraw").arg(interval).arg(perRedrawMs)));
            QVERIFY(!changed.isEmpty());
            QCOMPARE(changed.last().at(0).toInt(), interval);
        }
        QVERIFY2(interval <= 2000, qPrintable(QString::number(interval)));
        // the base is a lower bound: a faster setting cannot go under it
        monitor.setRefreshIntervalMs(500);
        QVERIFY(monitor.effectiveIntervalMs() >= 500);
    }
};

QTEST_MAIN(TestMonitorView)
#include "test_monitor_view.moc"
