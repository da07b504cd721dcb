// The window on a small screen (issue 42, item 7): it opens no larger than the screen's free area, a
// geometry saved on a larger screen is fitted to this one, and at 1366 x 768 every chart of the Monitor
// keeps its data area (beside a legend with all its series, or over it), in English and in Chinese.
// The screen is Qt's offscreen platform's, 1366 x 768 (main() below hands it a configuration file), so
// the window is laid out as it would be on such a laptop; the charts' geometry is read back from
// QCustomPlot's own layout after a replot.
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTest>

#include <cmath>
#include <unistd.h>

#include "charts/ChartStyle.h"
#include "charts/LiveChart.h"
#include "charts/MemoryChart.h"
#include "gui/AppSettings.h"
#include "gui/HardwareView.h"
#include "gui/MainWindow.h"
#include "gui/MonitorView.h"
#include "laptop_screen.h"

namespace {

constexpr int kScreenWidth = 1366, kScreenHeight = 768;

// A run's events as the Monitor gets them: 200 steps, an evaluation, memory in every group.
void feedMonitor(hrapp::MonitorView* m) {
    QVector<hr::StepEvent> steps;
    for (int i = 1; i <= 200; ++i) {
        hr::StepEvent e;
        e.step = i;
        e.total_steps = 400;
        e.loss = 2.3 / std::sqrt(double(i));
        e.accuracy = 0.4 + 0.002 * i;
        e.images_per_second = 1800.0 + (i % 7) * 20.0;
        steps << e;
    }
    m->addSteps(steps);
    hr::EvalEvent ev;
    ev.step = 200;
    ev.loss = 0.3;
    ev.accuracy = 0.86;
    m->addEval(ev);
    for (int i = 0; i <= 200; i += 10) {
        hr::MemoryEvent me;
        me.step = i;
        std::size_t total = 0;
        for (hr::MemCategory c : hr::all_categories()) {
            hr::at(me.ledger.live, c) = std::size_t(3 + int(c)) << 20;
            total += hr::at(me.ledger.live, c);
        }
        me.ledger.peak_total = total;
        me.device_capacity = total + total / 4;  // in view: the capacity line and its legend entry
        m->addMemory(me);
    }
    m->flush();
}

// The area of a chart the data gets (its axis rect), as a fraction of the chart widget's.
double dataFraction(hrw::LiveChart* c) {
    c->replot(QCustomPlot::rpImmediateRefresh);
    const QRect r = c->axisRect()->rect();
    return double(r.width()) * r.height() / (double(c->width()) * c->height());
}

}  // namespace

class TestWindowFit : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomWindowFitTest"));
        QSettings().clear();
        qputenv("HEADROOM_DB", QDir::temp().filePath(QStringLiteral("headroom-window-fit-%1.db")
                                                        .arg(QCoreApplication::applicationPid())).toLocal8Bit());
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        QCOMPARE(screen.size(), QSize(kScreenWidth, kScreenHeight));  // the offscreen platform took the file
    }

    void cleanupTestCase() {
        QSettings().clear();
        QFile::remove(qEnvironmentVariable("HEADROOM_DB"));
    }

    void fitToScreenShrinksAndMovesInside() {
        using hrapp::MainWindow;
        const QRect laptop(0, 0, 1366, 768);
        // the user's report: 1655 wide on a 1600-wide screen
        QCOMPARE(MainWindow::fitToScreen(QRect(0, 0, 1655, 920), QRect(0, 0, 1600, 900)), QRect(0, 0, 1600, 900));
        // a window that fits stays where it is, as large as it is
        QCOMPARE(MainWindow::fitToScreen(QRect(100, 50, 1000, 600), laptop), QRect(100, 50, 1000, 600));
        // one that sticks out at the bottom right moves in; one larger than the screen shrinks too
        QCOMPARE(MainWindow::fitToScreen(QRect(600, 300, 1000, 600), laptop), QRect(366, 168, 1000, 600));
        QCOMPARE(MainWindow::fitToScreen(QRect(200, 100, 1800, 1100), laptop), QRect(0, 0, 1366, 768));
        // a frame of 4 px and a 30 px title bar: the frame stays on the screen too
        QCOMPARE(MainWindow::fitToScreen(QRect(0, 0, 1480, 920), laptop, QMargins(4, 30, 4, 4)),
                 QRect(4, 30, 1358, 734));
        // a second screen to the right, with a 40 px panel at its top: saved on the first, fitted to it
        const QRect second(1366, 40, 1920, 1040);
        QCOMPARE(MainWindow::fitToScreen(QRect(-300, -20, 2500, 1300), second), second);
        QCOMPARE(MainWindow::fitToScreen(QRect(1000, 0, 800, 600), second), QRect(1366, 40, 800, 600));
    }

    void windowFitsTheScreen_data() {
        QTest::addColumn<QString>("language");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }

    // Opened on the 1366 x 768 screen: the window and its frame are on it, its minimum size (the docks',
    // the tabs', the charts') is no larger, and each chart of the Monitor and of the hardware keeps its
    // data area with every series in the legend, beside the plot or under it, never on it. (The memory
    // chart's eight entries under a plot this size left it a strip: "mostly legend".)
    void windowFitsTheScreen() {
        QFETCH(QString, language);
        QCOMPARE(hrapp::installTranslators(language), language);
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        hrapp::MainWindow w;
        w.setPersistState(false);
        w.setAskBeforeClose(false);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::qWait(50);  // the deferred second fit, once the frame is known
        QVERIFY2(screen.contains(w.frameGeometry()),
                 qPrintable(QStringLiteral("window %1 x %2 at %3,%4 (frame %5 x %6) on a %7 x %8 screen")
                                .arg(w.width()).arg(w.height()).arg(w.x()).arg(w.y())
                                .arg(w.frameGeometry().width()).arg(w.frameGeometry().height())
                                .arg(screen.width()).arg(screen.height())));
        const QSize minimum = w.minimumSizeHint();
        QVERIFY2(minimum.width() <= screen.width() && minimum.height() <= screen.height(),
                 qPrintable(QStringLiteral("minimum %1 x %2").arg(minimum.width()).arg(minimum.height())));
        // it uses the screen: not a small window in a corner
        QVERIFY(w.width() >= screen.width() * 9 / 10 && w.height() >= screen.height() * 8 / 10);

        // the Monitor during a run
        w.tabs()->setCurrentWidget(w.monitorTab());
        feedMonitor(w.monitor());
        QTest::qWait(50);
        QList<hrw::LiveChart*> charts = w.monitor()->charts();
        for (hrw::LiveChart* c : w.hardwareView()->charts())
            if (c->isVisible()) charts << c;
        QVERIFY(charts.size() >= 6);  // loss, accuracy, throughput, memory; host CPU and memory at least
        for (hrw::LiveChart* c : charts) {
            QVERIFY2(c->isVisible(), qPrintable(c->objectName()));
            const double fraction = dataFraction(c);
            const QRect legend = c->legend->outerRect(), data = c->axisRect()->rect();
            const QString what = QStringLiteral("%1 (%2 x %3): data %4 x %5 = %6 % of the chart, legend %7 x %8 %9")
                                     .arg(c->objectName()).arg(c->width()).arg(c->height()).arg(data.width())
                                     .arg(data.height()).arg(fraction * 100, 0, 'f', 0).arg(legend.width())
                                     .arg(legend.height())
                                     .arg(hrw::legendPlace(c) == hrw::LegendPlace::Beside ? QStringLiteral("beside")
                                                                                           : QStringLiteral("below"));
            qInfo().noquote() << language << what;
            // the data keeps a quarter of the chart at least (the title, the tick labels and the axis labels
            // take most of the rest at ~190 x 400 px); the legend, however many entries, less than the data
            QVERIFY2(fraction >= 0.25, qPrintable(what));
            QVERIFY2(double(legend.width()) * legend.height() < 0.6 * double(data.width()) * data.height(), qPrintable(what));
            // every series has its entry, and the legend is whole, inside the chart and off the data
            int entries = 0;
            for (int i = 0; i < c->legend->itemCount(); ++i) entries += c->legend->item(i) != nullptr;
            QCOMPARE(entries, c->graphCount());
            QVERIFY2(c->legend->visible() && c->rect().contains(legend) && !legend.intersects(data), qPrintable(what));
            QVERIFY2(legend.height() >= c->legend->minimumOuterSizeHint().height() &&
                         legend.width() >= c->legend->minimumOuterSizeHint().width(),
                     qPrintable(what));
        }
        // the memory chart's eight entries do not fit under the plot at this size: they go beside it
        auto* memory = w.monitor()->findChild<hrw::MemoryChart*>(QStringLiteral("memoryChart"));
        QVERIFY(memory);
        QCOMPARE(memory->graphCount(), int(hrw::MemoryChart::GroupCount) + 1);
        QCOMPARE(hrw::legendPlace(memory), hrw::LegendPlace::Beside);
        hrapp::installTranslators(QStringLiteral("en"));
    }

    // A geometry saved on a larger screen (1800 x 1100 at 200,100) is fitted to this one.
    void restoredGeometryIsFitted() {
        {
            hrapp::MainWindow big;
            big.setAskBeforeClose(false);
            big.setGeometry(200, 100, 1800, 1100);  // not shown: nothing fits it
            QCOMPARE(big.size(), QSize(1800, 1100));
            QSettings().setValue(QStringLiteral("window/geometry"), big.saveGeometry());
            big.setPersistState(false);
        }
        hrapp::MainWindow w;  // persists: restores the saved geometry
        w.setAskBeforeClose(false);
        w.setPersistState(false);
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        QVERIFY2(w.width() <= screen.width() && w.height() <= screen.height(),
                 qPrintable(QStringLiteral("%1 x %2").arg(w.width()).arg(w.height())));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QTest::qWait(50);
        QVERIFY(screen.contains(w.frameGeometry()));
        QSettings().remove(QStringLiteral("window/geometry"));
    }
};

// Qt's offscreen platform with one 1366 x 768 screen, from a configuration file (Qt 6.4's
// on Qt's offscreen platform with a 1366 x 768 screen (tests/support/laptop_screen.h)
int main(int argc, char** argv) { return hrtest::run_on_laptop_screen<TestWindowFit>(argc, argv, kScreenWidth, kScreenHeight); }

#include "test_window_fit.moc"
