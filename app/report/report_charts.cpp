// ReportWriter: the report's charts (loss, memory by category, telemetry) and their rendering to images.
#include "report/report_writer.h"

#include <QPainterPath>
#include <QtMath>
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


#include <kainjow/mustache.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include "base/error.h"
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
                name = categoryText(hr::category_from_name(r.category.toStdString()));
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

namespace {

// A value range with a margin (the live charts' rule): [lo, hi] padded by `margin` of its span, from 0 when
// includeZero and the values are on one side of it; a single value gets a band around it.
std::pair<double, double> paddedRange(double lo, double hi, double margin, bool includeZero) {
    if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
    if (lo > hi) std::swap(lo, hi);
    if (includeZero && lo > 0) lo = 0;
    if (includeZero && hi < 0) hi = 0;
    const double span = hi - lo;
    if (span <= 0) {
        const double half = std::abs(hi) > 0 ? std::abs(hi) * 0.05 : 0.5;
        return {includeZero && lo >= 0 ? std::max(0.0, lo - half) : lo - half, hi + half};
    }
    const double pad = span * margin;
    return {includeZero && lo >= 0 && lo - pad < 0 ? 0.0 : lo - pad, hi + pad};
}

// Tick positions of 1, 2 or 5 times a power of ten, about `target` of them within [lo, hi].
QVector<double> niceTicks(double lo, double hi, int target) {
    QVector<double> out;
    const double span = hi - lo;
    if (!(span > 0) || !std::isfinite(span)) return out;
    const double raw = span / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    double step = mag;
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (raw <= m * mag * 1.0000001) {
            step = m * mag;
            break;
        }
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        out << (std::abs(v) < step * 1e-9 ? 0.0 : v);
    return out;
}

QString tickText(double v) {
    const double a = std::abs(v);
    if (a >= 1e6 || (a > 0 && a < 1e-3)) return QString::number(v, 'g', 3);
    return QLocale::c().toString(v, 'g', 6);
}

}  // namespace

QImage ReportWriter::renderChart(const ReportChart& chart, int width, int height) {
    // Drawn with QPainter on an image (QtGui only: the command line without widgets renders reports too),
    // in the look of the window's charts: title, axes with round ticks and a light grid, the legend below.
    QImage img(width, height, QImage::Format_RGB32);
    img.fill(Qt::white);
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setRenderHint(QPainter::TextAntialiasing, true);
    QFont base;
    base.setPixelSize(13);
    QFont titleFont = base;
    titleFont.setBold(true);
    titleFont.setPixelSize(15);
    QFont legendFont = base;
    legendFont.setPixelSize(12);
    const QFontMetricsF fm(base), lfm(legendFont), tfm(titleFont);
    const auto& colors = palette();
    const QColor ink(0x33, 0x33, 0x33), grid(0xe4, 0xe4, 0xe4), axis(0x80, 0x80, 0x80);
    const bool bars = !chart.categories.isEmpty();

    // the value range
    double lo = qInf(), hi = -qInf(), xlo = qInf(), xhi = -qInf();
    for (const auto& line : chart.lines) {
        for (double v : line.y)
            if (std::isfinite(v)) lo = qMin(lo, v), hi = qMax(hi, v);
        for (double x : line.x)
            if (std::isfinite(x)) xlo = qMin(xlo, x), xhi = qMax(xhi, x);
    }
    const bool zero = bars || chart.id == QLatin1String("throughput") || chart.id == QLatin1String("power") ||
                      chart.id == QLatin1String("device_memory");
    // plain variables, not a structured binding: the lambdas below capture them (clang 14 refuses bindings)
    const std::pair<double, double> yr = lo <= hi ? paddedRange(lo, hi, zero ? 0.08 : 0.06, zero) : std::pair<double, double>{0, 1};
    double y0 = yr.first, y1 = yr.second;
    if (chart.id == QLatin1String("utilization")) y0 = 0, y1 = 102;
    if (chart.id == QLatin1String("accuracy") && lo >= 0 && hi <= 1) y0 = qMax(0.0, y0), y1 = qMin(1.0, y1) + 0.02;
    double x0 = -0.6, x1 = chart.categories.size() - 0.4;
    if (!bars) {
        if (!(xlo <= xhi)) xlo = 0, xhi = 1;
        if (xhi - xlo <= 0) xlo -= 0.5, xhi += 0.5;
        const double pad = (xhi - xlo) * 0.02;
        x0 = xlo - pad;
        x1 = xhi + pad;
    }
    const QVector<double> yt = niceTicks(y0, y1, 6);

    // the legend's rows (below the plot), when there is more than one line
    const bool legend = chart.lines.size() > 1 || bars;
    QVector<QVector<int>> legendRows;
    const double swatch = 22, gap = 18, margin = 12;
    if (legend) {
        double used = margin;
        legendRows << QVector<int>();
        for (int i = 0; i < chart.lines.size(); ++i) {
            const double w = swatch + 6 + lfm.horizontalAdvance(chart.lines[i].name) + gap;
            if (used + w > width - margin && !legendRows.last().isEmpty()) {
                legendRows << QVector<int>();
                used = margin;
            }
            legendRows.last() << i;
            used += w;
        }
    }
    const double legendHeight = legend ? legendRows.size() * (lfm.height() + 4) + 6 : 0;

    // the plot rectangle: room for the title, the y labels, the x labels and the legend
    double yLabelWidth = 0;
    for (double v : yt) yLabelWidth = qMax(yLabelWidth, fm.horizontalAdvance(tickText(v)));
    const bool rotate = bars && chart.categories.size() > 5;
    double xLabelHeight = fm.height();
    if (rotate)
        for (const QString& c : chart.categories)
            xLabelHeight = qMax(xLabelHeight, fm.horizontalAdvance(c) * std::sin(qDegreesToRadians(25.0)) + fm.height());
    const double top = margin + tfm.height() + 8;
    const double left = margin + (chart.yLabel.isEmpty() ? 0 : fm.height() + 6) + yLabelWidth + 8;
    const double bottom = height - margin - legendHeight - (chart.xLabel.isEmpty() ? 0 : fm.height() + 4) - xLabelHeight - 6;
    const double right = width - margin - 8;
    const QRectF plot(QPointF(left, top), QPointF(right, bottom));
    auto X = [&](double x) { return plot.left() + (x - x0) / (x1 - x0) * plot.width(); };
    auto Y = [&](double y) { return plot.bottom() - (y - y0) / (y1 - y0) * plot.height(); };

    // title
    p.setFont(titleFont);
    p.setPen(ink);
    p.drawText(QRectF(0, margin, width, tfm.height()), Qt::AlignHCenter | Qt::AlignVCenter, chart.title);
    // grid and ticks
    p.setFont(base);
    for (double v : yt) {
        const double y = Y(v);
        p.setPen(QPen(grid, 1));
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(ink);
        p.drawText(QRectF(plot.left() - 8 - yLabelWidth, y - fm.height() / 2, yLabelWidth, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tickText(v));
    }
    if (bars) {
        for (int i = 0; i < chart.categories.size(); ++i) {
            const double x = X(i);
            p.setPen(ink);
            if (rotate) {
                p.save();
                p.translate(x, plot.bottom() + 6);
                p.rotate(25);
                p.drawText(QPointF(0, fm.ascent()), chart.categories[i]);
                p.restore();
            } else {
                p.drawText(QRectF(x - 200, plot.bottom() + 4, 400, fm.height()), Qt::AlignHCenter | Qt::AlignTop,
                           chart.categories[i]);
            }
        }
    } else {
        for (double v : niceTicks(x0, x1, 7)) {
            const double x = X(v);
            p.setPen(QPen(grid, 1));
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
            p.setPen(ink);
            p.drawText(QRectF(x - 100, plot.bottom() + 4, 200, fm.height()), Qt::AlignHCenter | Qt::AlignTop, tickText(v));
        }
    }
    p.setPen(QPen(axis, 1));
    p.drawLine(plot.bottomLeft(), plot.bottomRight());
    p.drawLine(plot.bottomLeft(), plot.topLeft());
    // axis labels
    p.setPen(ink);
    if (!chart.xLabel.isEmpty())
        p.drawText(QRectF(plot.left(), plot.bottom() + 6 + xLabelHeight, plot.width(), fm.height()),
                   Qt::AlignHCenter | Qt::AlignTop, chart.xLabel);
    if (!chart.yLabel.isEmpty()) {
        p.save();
        p.translate(margin + fm.height() / 2, plot.center().y());
        p.rotate(-90);
        p.drawText(QRectF(-plot.height() / 2, -fm.height() / 2, plot.height(), fm.height()), Qt::AlignCenter, chart.yLabel);
        p.restore();
    }

    // the data, clipped to the plot
    p.save();
    p.setClipRect(plot.adjusted(-4, -4, 4, 4));
    if (bars) {
        const int n = qMax(1, int(chart.lines.size()));
        const double groupWidth = 0.8, w = groupWidth / n;
        for (int i = 0; i < chart.lines.size(); ++i) {
            const QColor c = colors[i % colors.size()];
            p.setPen(QPen(c.darker(130), 1));
            p.setBrush(c);
            const auto& line = chart.lines[i];
            for (int k = 0; k < line.x.size() && k < line.y.size(); ++k) {
                if (!std::isfinite(line.y[k])) continue;
                const double left = line.x[k] - groupWidth / 2 + i * w;
                p.drawRect(QRectF(QPointF(X(left), Y(line.y[k])), QPointF(X(left + w), Y(qMax(0.0, y0)))));
            }
        }
    } else {
        for (int i = 0; i < chart.lines.size(); ++i) {
            const QColor c = colors[i % colors.size()];
            const auto& line = chart.lines[i];
            QPainterPath path;
            bool open = false;
            for (int k = 0; k < line.x.size() && k < line.y.size(); ++k) {
                if (!std::isfinite(line.x[k]) || !std::isfinite(line.y[k])) {
                    open = false;  // a gap in the data: the line breaks
                    continue;
                }
                const QPointF pt(X(line.x[k]), Y(line.y[k]));
                if (open) path.lineTo(pt);
                else path.moveTo(pt);
                open = true;
            }
            p.setBrush(Qt::NoBrush);
            p.setPen(QPen(c, 1.6));
            p.drawPath(path);
            if (line.x.size() < 40) {
                p.setBrush(Qt::white);
                for (int k = 0; k < line.x.size() && k < line.y.size(); ++k)
                    if (std::isfinite(line.x[k]) && std::isfinite(line.y[k]))
                        p.drawEllipse(QPointF(X(line.x[k]), Y(line.y[k])), 3, 3);
            }
        }
    }
    p.restore();

    // the legend
    if (legend) {
        p.setFont(legendFont);
        double y = height - margin - legendHeight + 6;
        for (const QVector<int>& row : legendRows) {
            double rowWidth = 0;
            for (int i : row) rowWidth += swatch + 6 + lfm.horizontalAdvance(chart.lines[i].name) + gap;
            double x = (width - rowWidth + gap) / 2;
            for (int i : row) {
                const QColor c = colors[i % colors.size()];
                const double mid = y + lfm.height() / 2;
                if (bars) {
                    p.setPen(QPen(c.darker(130), 1));
                    p.setBrush(c);
                    p.drawRect(QRectF(x, mid - 5, swatch, 10));
                } else {
                    p.setPen(QPen(c, 2));
                    p.drawLine(QPointF(x, mid), QPointF(x + swatch, mid));
                }
                p.setPen(ink);
                p.drawText(QPointF(x + swatch + 6, y + lfm.ascent()), chart.lines[i].name);
                x += swatch + 6 + lfm.horizontalAdvance(chart.lines[i].name) + gap;
            }
            y += lfm.height() + 4;
        }
    }
    p.end();
    return img;
}

}  // namespace hrapp
