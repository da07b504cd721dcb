// ReportWriter: the report's charts (loss, memory by category, telemetry) and their rendering to images.
#include "report/report_writer.h"

#include <QApplication>
#include <QBuffer>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QSet>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSysInfo>
#include <QAbstractTextDocumentLayout>
#include <QFontMetricsF>
#include <QTextBlock>
#include <QTextDocument>
#include <QUrl>

#include <qcustomplot.h>

#include <kainjow/mustache.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "base/error.h"
#include "charts/ChartStyle.h"
#include "charts/PlanBarChart.h"
#include "i18n/CoreText.h"
#include "nn/model_spec.h"
#include "report/report_writer_detail.h"

namespace hrapp {

using namespace report_detail;

QVector<ReportChart> ReportWriter::charts() const {
    QVector<ReportChart> out;
    const auto& S = m_data.steps;
    const auto& E = m_data.epochs;
    if (!S.isEmpty() || !E.isEmpty()) {
        ReportChart loss{QStringLiteral("loss"), tr("Loss"), tr("step"), tr("loss"), {}, {}};
        ReportChart acc{QStringLiteral("accuracy"), tr("Accuracy"), tr("step"), tr("accuracy"), {}, {}};
        ReportChart thr{QStringLiteral("throughput"), tr("Throughput"), tr("step"), tr("images per second"), {}, {}};
        ReportChartLine l{tr("training loss (step)"), {}, {}}, a{tr("training accuracy (step)"), {}, {}},
            t{tr("images/s"), {}, {}};
        for (const auto& r : S) {
            l.x << r.step; l.y << r.loss;
            a.x << r.step; a.y << r.accuracy;
            t.x << r.step; t.y << r.imagesPerSecond;
        }
        if (!S.isEmpty()) {
            loss.lines << l;
            acc.lines << a;
            thr.lines << t;
        }
        ReportChartLine tl{tr("test loss (epoch)"), {}, {}}, ta{tr("test accuracy (epoch)"), {}, {}};
        for (const auto& r : E) {
            if (std::isfinite(r.testLoss)) { tl.x << r.step; tl.y << r.testLoss; }
            if (std::isfinite(r.testAccuracy)) { ta.x << r.step; ta.y << r.testAccuracy; }
        }
        if (!tl.x.isEmpty()) loss.lines << tl;
        if (!ta.x.isEmpty()) acc.lines << ta;
        if (!loss.lines.isEmpty()) out << loss;
        if (!acc.lines.isEmpty()) out << acc;
        if (!thr.lines.isEmpty()) out << thr;
    }
    // Memory per category: predicted against measured.
    if (!m_data.memory.isEmpty()) {
        ReportChart m{QStringLiteral("memory_categories"), tr("Memory by category"), QString(), tr("MiB"), {}, {}};
        ReportChartLine pred{tr("predicted"), {}, {}}, meas{tr("measured (peak)"), {}, {}};
        bool anyPred = false;
        for (const auto& r : m_data.memory) {
            if (r.predicted <= 0 && r.peak <= 0) continue;  // a category the run did not use
            const int i = int(m.categories.size());
            QString name = r.category;
            try {
                name = hrw::PlanBarChart::categoryName(hr::category_from_name(r.category.toStdString()));
            } catch (const std::exception&) {
            }
            m.categories << name;
            pred.x << i; pred.y << (r.predicted >= 0 ? r.predicted / 1048576.0 : 0.0);
            meas.x << i; meas.y << (r.peak >= 0 ? r.peak / 1048576.0 : 0.0);
            anyPred = anyPred || r.predicted >= 0;
        }
        if (anyPred) m.lines << pred;
        m.lines << meas;
        if (!m.categories.isEmpty()) out << m;
    }
    // Telemetry, one line per GPU.
    std::map<int, QString> gpuNames;
    for (const auto& r : m_data.telemetry)
        if (r.gpu >= 0) gpuNames[r.gpu] = r.gpuName;
    auto perGpu = [&](const QString& id, const QString& title, const QString& y, auto value) {
        ReportChart c{id, title, tr("seconds"), y, {}, {}};
        for (auto& [gpu, name] : gpuNames) {
            ReportChartLine line{QStringLiteral("GPU %1 %2").arg(gpu).arg(name), {}, {}};
            for (const auto& r : m_data.telemetry)
                if (r.gpu == gpu && std::isfinite(value(r))) { line.x << r.t; line.y << value(r); }
            if (!line.x.isEmpty()) c.lines << line;
        }
        return c;
    };
    ReportChart power = perGpu(QStringLiteral("power"), tr("Power"), tr("watts"),
                               [](const TelemetryRow& r) { return r.powerWatts; });
    if (!power.lines.isEmpty()) out << power;
    ReportChart util = perGpu(QStringLiteral("utilization"), tr("Utilisation"), tr("percent"),
                              [](const TelemetryRow& r) { return r.gpuUtilization; });
    {
        ReportChartLine cpu{tr("CPU"), {}, {}};
        double lastT = -1;
        for (const auto& r : m_data.telemetry)
            if (r.t != lastT && std::isfinite(r.cpuUtilization)) { cpu.x << r.t; cpu.y << r.cpuUtilization; lastT = r.t; }
        if (!cpu.x.isEmpty()) util.lines << cpu;
    }
    if (!util.lines.isEmpty()) out << util;
    ReportChart mem = perGpu(QStringLiteral("device_memory"), tr("Memory over time"), tr("MiB"),
                             [](const TelemetryRow& r) {
                                 return r.gpuMemoryUsed >= 0 ? r.gpuMemoryUsed / 1048576.0 : qQNaN();
                             });
    for (auto& line : mem.lines) line.name += tr(" (NVML used)");
    {
        ReportChartLine rss{tr("process resident (RSS)"), {}, {}};
        double lastT = -1;
        for (const auto& r : m_data.telemetry)
            if (r.t != lastT && r.processRss >= 0) { rss.x << r.t; rss.y << r.processRss / 1048576.0; lastT = r.t; }
        if (!rss.x.isEmpty()) mem.lines << rss;
        ReportChartLine live{tr("ledger allocated"), {}, {}}, reserved{tr("ledger reserved"), {}, {}};
        for (const auto& r : m_data.memorySamples) {
            live.x << r.t; live.y << r.liveTotal / 1048576.0;
            reserved.x << r.t; reserved.y << (r.liveTotal + r.reservedFree) / 1048576.0;
        }
        if (!live.x.isEmpty()) mem.lines << live << reserved;
    }
    if (!mem.lines.isEmpty()) out << mem;
    return out;
}

QImage ReportWriter::renderChart(const ReportChart& chart, int width, int height) {
    if (!qobject_cast<QApplication*>(QCoreApplication::instance())) {
        // QCustomPlot is a widget: without a QApplication draw a placeholder rather than crash.
        QImage img(width, height, QImage::Format_RGB32);
        img.fill(Qt::white);
        return img;
    }
    QCustomPlot plot;
    plot.resize(width, height);
    QFont base = plot.font();
    base.setPointSizeF(10);
    plot.setFont(base);
    for (QCPAxis* a : {plot.xAxis, plot.yAxis}) {
        a->setTickLabelFont(base);
        a->setLabelFont(base);
    }
    plot.plotLayout()->insertRow(0);
    QFont titleFont = base;
    titleFont.setBold(true);
    titleFont.setPointSizeF(11);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, chart.title, titleFont));
    plot.xAxis->setLabel(chart.xLabel);
    plot.yAxis->setLabel(chart.yLabel);
    // the legend under the plot, never on the data
    hrw::styleLegend(&plot);
    QFont legendFont = base;
    legendFont.setPointSizeF(9);
    plot.legend->setFont(legendFont);
    hrw::moveLegendBelow(&plot);
    hrw::styleChart(&plot, false);
    const auto& colors = palette();
    auto valueRange = [&](bool includeZero) {
        double lo = qInf(), hi = -qInf();
        for (const auto& line : chart.lines)
            for (double v : line.y)
                if (std::isfinite(v)) lo = qMin(lo, v), hi = qMax(hi, v);
        if (!(lo <= hi)) return QCPRange(0, 1);
        if (chart.id == QLatin1String("utilization")) return QCPRange(0, 102);
        QCPRange r = hrw::fitRange(lo, hi, includeZero ? 0.08 : 0.06, includeZero);
        if (chart.id == QLatin1String("accuracy") && lo >= 0 && hi <= 1)  // fractions stay in [0, 1]
            r = QCPRange(qMax(0.0, r.lower), qMin(1.0, r.upper) + 0.02);
        return r;
    };
    if (!chart.categories.isEmpty()) {
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (int i = 0; i < chart.categories.size(); ++i) ticker->addTick(i, chart.categories[i]);
        plot.xAxis->setTicker(ticker);
        plot.xAxis->setTickLabelRotation(chart.categories.size() > 5 ? 25 : 0);
        plot.xAxis->setSubTicks(false);
        plot.xAxis->grid()->setVisible(false);
        plot.xAxis->setRange(-0.6, chart.categories.size() - 0.4);
        auto* group = new QCPBarsGroup(&plot);
        for (int i = 0; i < chart.lines.size(); ++i) {
            auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
            bars->setName(chart.lines[i].name);
            bars->setData(chart.lines[i].x, chart.lines[i].y);
            bars->setWidth(0.8 / qMax(1, int(chart.lines.size())));
            bars->setBrush(colors[i % colors.size()]);
            bars->setPen(QPen(colors[i % colors.size()].darker(130)));
            bars->setBarsGroup(group);
        }
        plot.yAxis->setRange(valueRange(true));
    } else {
        double lo = qInf(), hi = -qInf();
        for (int i = 0; i < chart.lines.size(); ++i) {
            QCPGraph* g = plot.addGraph();
            g->setName(chart.lines[i].name);
            g->setData(chart.lines[i].x, chart.lines[i].y);
            g->setPen(QPen(colors[i % colors.size()], 1.6));
            if (chart.lines[i].x.size() < 40) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
            for (double x : chart.lines[i].x) lo = qMin(lo, x), hi = qMax(hi, x);
        }
        plot.xAxis->setRange(hrw::fitKeyRange(lo, hi, 0.02));
        const bool zero = chart.id == QLatin1String("throughput") || chart.id == QLatin1String("power") ||
                          chart.id == QLatin1String("device_memory");
        plot.yAxis->setRange(valueRange(zero));
    }
    plot.legend->setVisible(chart.lines.size() > 1 || !chart.categories.isEmpty());
    if (plot.legend->visible()) hrw::wrapLegend(&plot);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    return plot.toPixmap(width, height).toImage();
}

}  // namespace hrapp
