// Chart layout (widgets/charts): legends sit outside the data, the memory chart's capacity note is
// outside the plot, a lone point gets an axis around it (not QCustomPlot's -4..6) and stays whole
// inside the axis rect, and the Runs table shows names in full. Geometry is read back from
// QCustomPlot's own layout after a replot at a fixed size.
#include <QHeaderView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "charts/ChartStyle.h"
#include "charts/LiveChart.h"
#include "charts/MemoryChart.h"
#include "charts/MemoryCompareChart.h"
#include "charts/PlanBarChart.h"
#include "gui/RunsView.h"
#include "nn/model_spec.h"
#include "store/run_store.h"

namespace {

void layOut(QCustomPlot& plot) {
    plot.resize(420, 300);
    plot.replot(QCustomPlot::rpImmediateRefresh);
}

// the legend's rectangle does not overlap the axis rect (where the data is drawn)
bool legendOutsideData(QCustomPlot& plot) {
    return plot.legend->visible() && !plot.legend->outerRect().intersects(plot.axisRect()->rect());
}

QJsonObject toQt(const nlohmann::json& j) { return QJsonDocument::fromJson(QByteArray::fromStdString(j.dump())).object(); }

}  // namespace

class TestCharts : public QObject {
    Q_OBJECT
private slots:
    void legendsAreOutsideTheData() {
        hrw::LiveChart live;
        live.addSeries("training loss (per step)", Qt::blue);
        live.addSeries("validation", Qt::red, false, true);
        live.appendPoints(0, {1, 2, 3, 4}, {2.0, 1.5, 1.0, 0.8});
        live.appendPoints(1, {2, 4}, {1.4, 0.9});
        live.refresh();
        layOut(live);
        QVERIFY(legendOutsideData(live));
        // under the plot, centred, both entries on one row at this width
        QVERIFY(live.legend->outerRect().top() >= live.axisRect()->rect().bottom());
        QCOMPARE(live.legend->wrap(), 2);

        hrw::MemoryChart mem;
        mem.setCapacity(std::size_t(24) << 30);
        hr::CategoryBytes b{};
        hr::at(b, hr::MemCategory::parameters) = 1 << 20;
        hr::at(b, hr::MemCategory::activations) = 6 << 20;
        mem.appendSnapshots({0, 1, 2}, {hrw::MemoryChart::groupBytes(b), hrw::MemoryChart::groupBytes(b),
                                        hrw::MemoryChart::groupBytes(b)});
        mem.refresh();
        layOut(mem);
        QVERIFY(legendOutsideData(mem));

        hrw::PlanBarChart bars;
        bars.setPlan(b, {}, false, std::size_t(8) << 20, "Memory limit");
        layOut(bars);
        QVERIFY(legendOutsideData(bars));

        hrw::MemoryCompareChart cmp;
        cmp.setBytes(b, b);
        layOut(cmp);
        QVERIFY(legendOutsideData(cmp));
    }

    void capacityNoteIsOutsideThePlot() {
        hrw::MemoryChart mem;
        hr::CategoryBytes b{};
        hr::at(b, hr::MemCategory::activations) = 6 << 20;
        mem.setCapacity(std::size_t(24) << 30);  // far above: a note, not a line
        mem.appendSnapshots({0, 1}, {hrw::MemoryChart::groupBytes(b), hrw::MemoryChart::groupBytes(b)});
        mem.refresh();
        layOut(mem);
        QVERIFY(mem.capacityNote().contains("24.0 GiB"));
        QVERIFY(!mem.graph(mem.capacitySeries())->visible());
        QCPTextElement* note = nullptr;
        for (int i = 0; i < mem.plotLayout()->elementCount(); ++i)
            if (auto* t = qobject_cast<QCPTextElement*>(mem.plotLayout()->elementAt(i)))
                if (t->text() == mem.capacityNote()) note = t;
        QVERIFY(note);
        QVERIFY(!note->outerRect().intersects(mem.axisRect()->rect()));
        QVERIFY(note->outerRect().bottom() <= mem.axisRect()->outerRect().top() + 1);
        // a capacity within reach: the dashed line, and the note is gone from the layout
        hrw::MemoryChart near;
        near.setCapacity(std::size_t(8) << 20);
        near.appendSnapshots({0, 1}, {hrw::MemoryChart::groupBytes(b), hrw::MemoryChart::groupBytes(b)});
        near.refresh();
        layOut(near);
        QVERIFY(near.capacityNote().isEmpty());
        QVERIFY(near.graph(near.capacitySeries())->visible());
        QVERIFY(near.yAxis->range().upper >= 8.0);
    }

    void lonePointGetsAnAxisAroundIt() {
        // a one-epoch run's test accuracy: one point at epoch 1, 90.4 %
        hrw::LiveChart c;
        c.setIntegerX(true);
        c.addSeries("#2 mlp on synthetic", Qt::darkYellow, false, true);
        c.appendPoint(0, 1.0, 90.43);
        c.refresh();
        layOut(c);
        c.refresh();  // margins follow the laid-out axis rect
        layOut(c);
        const QCPRange x = c.xAxis->range(), y = c.yAxis->range();
        QVERIFY2(x.lower < 1.0 && x.upper > 1.0 && x.size() <= 1.5, qPrintable(QString("%1..%2").arg(x.lower).arg(x.upper)));
        QVERIFY2(y.lower < 90.43 && y.upper > 90.43 && y.size() <= 0.2 * 90.43,
                 qPrintable(QString("%1..%2").arg(y.lower).arg(y.upper)));
        // the marker (6 px) is whole inside the axis rect
        const QRect r = c.axisRect()->rect();
        const double px = c.xAxis->coordToPixel(1.0), py = c.yAxis->coordToPixel(90.43);
        QVERIFY(px - 3 > r.left() && px + 3 < r.right());
        QVERIFY(py - 3 > r.top() && py + 3 < r.bottom());
        // points at both ends of a series too
        hrw::LiveChart e;
        e.addSeries("test accuracy", Qt::blue, false, true);
        e.appendPoints(0, {1, 2, 3, 4}, {74.3, 79.4, 78.4, 81.2});
        layOut(e);
        e.refresh();
        layOut(e);
        const QRect er = e.axisRect()->rect();
        for (double k : {1.0, 4.0}) {
            const double kx = e.xAxis->coordToPixel(k);
            QVERIFY2(kx - 3 > er.left() && kx + 3 < er.right(), qPrintable(QString::number(kx)));
        }
        QVERIFY(e.yAxis->coordToPixel(81.2) - 3 > er.top());
    }

    void fitRangeKeepsValuesInView() {
        QCOMPARE(hrw::fitKeyRange(3, 3), QCPRange(2.5, 3.5));
        const QCPRange flat = hrw::fitRange(2.0, 2.0);
        QVERIFY(flat.lower < 2.0 && flat.upper > 2.0 && flat.size() < 0.5);
        const QCPRange zero = hrw::fitRange(0, 0);
        QVERIFY(zero.lower < 0 && zero.upper > 0);
        const QCPRange withZero = hrw::fitRange(200, 800, 0.06, true);
        QCOMPARE(withZero.lower, 0.0);
        QVERIFY(withZero.upper > 800);
    }

    void runNamesAreShownInFull() {
        QTemporaryDir dir;
        hrapp::RunStore store;
        QVERIFY(store.open(dir.filePath("runs.sqlite")));
        const QString longDevice = "cuda:0 (NVIDIA H200 NVL, 143771 MiB, compute capability 9.0, driver 580.95)";
        for (const char* name : {"resnet-mini on fashion-mnist", "deep-residual-network on synthetic"}) {
            const qint64 id = store.beginRun(QJsonObject{{"data", "synthetic"}},
                                             toQt(hr::model_spec_to_json(hr::preset_model("mlp"))), longDevice, name);
            store.finishRun(id, "finished");
        }
        hrapp::RunsView v(&store);
        v.resize(900, 700);
        v.show();
        v.reload();
        QVERIFY(QTest::qWaitForWindowExposed(&v));
        QTest::qWait(50);
        auto* table = v.findChild<QTableWidget*>("runsTable");
        QVERIFY(table);
        const QFontMetrics fm(table->font());
        for (int r = 0; r < table->rowCount(); ++r) {
            const QString name = table->item(r, 0)->text();
            QVERIFY2(table->columnWidth(0) >= fm.horizontalAdvance(name) + 6,
                     qPrintable(QString("%1: %2 px for %3 px").arg(name).arg(table->columnWidth(0)).arg(fm.horizontalAdvance(name))));
        }
        // the device column takes what is left and is not wider than the table
        const int device = 4;
        QVERIFY(table->columnWidth(device) > 0);
        int total = 0;
        for (int c = 0; c < table->columnCount(); ++c) total += table->columnWidth(c);
        QVERIFY2(total <= table->viewport()->width() + 2, qPrintable(QString("%1 > %2").arg(total).arg(table->viewport()->width())));
        QCOMPARE(table->item(0, device)->toolTip(), longDevice);
    }
};

QTEST_MAIN(TestCharts)
#include "test_charts.moc"
