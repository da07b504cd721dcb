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

namespace hrapp {
namespace {

QString esc(const QString& s) { return s.toHtmlEscaped(); }

QString bytesText(qint64 b) {
    if (b < 0) return QStringLiteral("—");
    return QLocale().formattedDataSize(b, 2, QLocale::DataSizeIecFormat);
}

QString numText(double v, int prec = 4) {
    if (!std::isfinite(v)) return QStringLiteral("—");
    // whole numbers of more digits than `prec` in full ("2,900", not "2.9e+03")
    if (std::abs(v) >= std::pow(10.0, prec - 1) && std::abs(v) < 1e15) return QLocale().toString(v, 'f', 0);
    return QLocale().toString(v, 'g', prec);
}

QString secondsText(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("—");
    if (s < 120) return ReportWriter::tr("%1 s").arg(QLocale().toString(s, 'f', 1));
    const qint64 t = static_cast<qint64>(s + 0.5);
    return ReportWriter::tr("%1 h %2 min %3 s").arg(t / 3600).arg((t / 60) % 60).arg(t % 60);
}

QString jsonValueText(const QJsonValue& v) {
    if (v.isBool()) return v.toBool() ? ReportWriter::tr("yes") : ReportWriter::tr("no");
    if (v.isDouble()) return numText(v.toDouble(), 6);
    if (v.isString()) return v.toString();
    if (v.isNull() || v.isUndefined()) return QStringLiteral("—");
    return QString::fromUtf8(QJsonDocument(v.isObject() ? QJsonDocument(v.toObject()) : QJsonDocument(v.toArray()))
                                 .toJson(QJsonDocument::Compact));
}

QJsonValue jnum(double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }
QJsonValue jint(qint64 v) { return v >= 0 ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }

QByteArray pngBytes(const QImage& img) {
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    img.save(&buf, "PNG");
    return bytes;
}

QString shapeText(const hr::Shape& s) {
    QStringList parts;
    for (auto d : s) parts << QString::number(d);
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QStringLiteral(")");
}

std::optional<hr::SpecReport> analyzeSpec(const QJsonObject& spec, QString* error) {
    if (spec.isEmpty()) {
        *error = ReportWriter::tr("The run has no model spec stored.");
        return std::nullopt;
    }
    try {
        const auto j = nlohmann::json::parse(QJsonDocument(spec).toJson(QJsonDocument::Compact).toStdString());
        return hr::analyze_model_spec(hr::model_spec_from_json(j));
    } catch (const std::exception& e) {
        *error = ReportWriter::tr("The stored model spec cannot be read: %1").arg(coreText(e));
        return std::nullopt;
    }
}

const QVector<QColor>& palette() {
    static const QVector<QColor> c = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c),
                                      QColor(0xff, 0x7f, 0x0e), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                      QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return c;
}

}  // namespace

std::optional<ReportWriter::Format> ReportWriter::formatFromName(const QString& name) {
    const QString n = name.trimmed().toLower();
    if (n == QLatin1String("html") || n == QLatin1String("htm")) return Format::Html;
    if (n == QLatin1String("pdf")) return Format::Pdf;
    if (n == QLatin1String("json")) return Format::Json;
    if (n == QLatin1String("csv")) return Format::Csv;
    return std::nullopt;
}

QString ReportWriter::extension(Format f) {
    switch (f) {
    case Format::Html: return QStringLiteral("html");
    case Format::Pdf: return QStringLiteral("pdf");
    case Format::Json: return QStringLiteral("json");
    case Format::Csv: return QStringLiteral("csv");
    }
    return {};
}

std::optional<ReportData> ReportWriter::load(const RunStore& store, qint64 runId) {
    auto info = store.run(runId);
    if (!info) return std::nullopt;
    ReportData d;
    d.run = *info;
    d.steps = store.steps(runId);
    d.epochs = store.epochs(runId);
    d.telemetry = store.telemetry(runId);
    d.memory = store.memory(runId);
    d.memorySamples = store.memorySamples(runId);
    return d;
}

ReportWriter::ReportWriter(ReportData data) : m_data(std::move(data)) {}

QStringList ReportWriter::sectionIds() {
    return {QStringLiteral("summary"),    QStringLiteral("training"), QStringLiteral("memory"),
            QStringLiteral("strategies"), QStringLiteral("data"),     QStringLiteral("model"),
            QStringLiteral("device"),     QStringLiteral("telemetry"), QStringLiteral("energy"),
            QStringLiteral("durations"),  QStringLiteral("final")};
}

qint64 ReportWriter::samplesTrained() const {
    const qint64 batch = m_data.run.config.value(QStringLiteral("batch")).toInteger(0);
    qint64 steps = m_data.run.finalMetrics.value(QStringLiteral("steps")).toInteger(0);
    if (steps <= 0 && !m_data.steps.isEmpty()) steps = m_data.steps.last().step;
    return batch > 0 && steps > 0 ? batch * steps : 0;
}

ReportEnergy ReportWriter::energy() const {
    ReportEnergy e;
    // Per GPU: last - first of the energy counter; else the trapezoid integral of power.
    std::map<int, QVector<const TelemetryRow*>> perGpu;
    for (const auto& r : m_data.telemetry)
        if (r.gpu >= 0) perGpu[r.gpu].push_back(&r);
    double total = 0;
    bool any = false, integral = false;
    for (auto& [gpu, rows] : perGpu) {
        double first = qQNaN(), last = qQNaN();
        for (auto* r : rows)
            if (std::isfinite(r->energyJoules)) {
                if (!std::isfinite(first)) first = r->energyJoules;
                last = r->energyJoules;
            }
        if (std::isfinite(first) && last >= first && rows.size() > 1) {
            total += last - first;
            any = true;
            continue;
        }
        double j = 0;
        bool ok = false;
        for (int i = 1; i < rows.size(); ++i) {
            const auto *a = rows[i - 1], *b = rows[i];
            if (std::isfinite(a->powerWatts) && std::isfinite(b->powerWatts) && b->t > a->t) {
                j += 0.5 * (a->powerWatts + b->powerWatts) * (b->t - a->t);
                ok = true;
            }
        }
        if (ok) {
            total += j;
            any = integral = true;
        }
    }
    if (!any) return e;
    e.available = true;
    e.joules = total;
    e.fromPowerIntegral = integral;
    const qint64 n = samplesTrained();
    if (n > 0) e.joulesPerSample = total / static_cast<double>(n);
    return e;
}

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

// ---- the template's data ------------------------------------------------------------------------
namespace {

namespace mu = kainjow::mustache;

std::string S(const QString& s) { return s.toStdString(); }

QString percentText(double fraction, int decimals = 1) {
    if (!std::isfinite(fraction)) return QStringLiteral("—");
    return ReportWriter::tr("%1 %").arg(QLocale().toString(100.0 * fraction, 'f', decimals));
}

QString countText(qint64 n) { return QLocale().toString(n); }

// A block of the report that stays on one page: a heading (the section's, in its first unit), and
// paragraphs, notes, a key/value table, a grid or a chart.
struct Unit {
    QString headingId, heading, subheading;
    QStringList paragraphs, notes;
    QVector<QPair<QString, QString>> keyValues;
    struct Cell {
        QString text;
        bool num = false;
        bool strong = false;
    };
    QVector<Cell> header;
    QVector<QVector<Cell>> rows;
    QString chartSrc, chartAlt;
    int chartWidth = 0;

    bool empty() const {
        return heading.isEmpty() && subheading.isEmpty() && paragraphs.isEmpty() && notes.isEmpty() &&
               keyValues.isEmpty() && rows.isEmpty() && chartSrc.isEmpty();
    }
};

mu::data texts(const QStringList& list) {
    mu::list l;
    for (const QString& t : list) l.push_back(mu::object{{"text", S(t)}});
    return l;
}

mu::data unitData(const Unit& u) {
    mu::object o;
    o["heading"] = u.heading.isEmpty() ? mu::data(false)
                                       : mu::data(mu::object{{"id", S(u.headingId)}, {"title", S(u.heading)}});
    o["subheading"] = u.subheading.isEmpty() ? mu::data(false) : mu::data(mu::object{{"title", S(u.subheading)}});
    o["paragraphs"] = texts(u.paragraphs);
    o["notes"] = texts(u.notes);
    if (u.keyValues.isEmpty()) {
        o["keyValues"] = mu::data(false);
    } else {
        mu::list rows;
        for (const auto& [k, v] : u.keyValues) rows.push_back(mu::object{{"label", S(k)}, {"value", S(v)}});
        o["keyValues"] = mu::object{{"rows", rows}};
    }
    if (u.rows.isEmpty()) {
        o["grid"] = mu::data(false);
    } else {
        auto cell = [](const Unit::Cell& c) {
            return mu::object{{"text", S(c.text)}, {"num", mu::data(c.num)}, {"strong", mu::data(c.strong)}};
        };
        mu::list header, rows;
        for (const auto& c : u.header) header.push_back(cell(c));
        for (const auto& r : u.rows) {
            mu::list cells;
            for (const auto& c : r) cells.push_back(cell(c));
            rows.push_back(mu::object{{"cells", cells}});
        }
        o["grid"] = mu::object{{"header", header}, {"rows", rows}};
    }
    o["chart"] = u.chartSrc.isEmpty() ? mu::data(false)
                                      : mu::data(mu::object{{"src", S(u.chartSrc)},
                                                            {"alt", S(u.chartAlt)},
                                                            {"width", S(QString::number(u.chartWidth))}});
    return o;
}

QString templateText() {
    QFile f(QStringLiteral(":/report/report.html"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll());
}

QString datasetName(const QString& spec) {
    if (spec == QLatin1String("fashion-mnist")) return QStringLiteral("Fashion-MNIST");
    if (spec == QLatin1String("mnist")) return QStringLiteral("MNIST");
    if (spec == QLatin1String("synthetic")) return ReportWriter::tr("synthetic images (generated)");
    if (spec.startsWith(QLatin1String("idx:"))) return ReportWriter::tr("IDX files in %1").arg(spec.mid(4));
    return spec;
}

QString phaseText(const QString& phase) {
    if (phase == QLatin1String("setup")) return ReportWriter::tr("setup, before the first step");
    if (phase == QLatin1String("forward")) return ReportWriter::tr("the forward pass");
    if (phase == QLatin1String("backward")) return ReportWriter::tr("the backward pass");
    if (phase == QLatin1String("optimizer")) return ReportWriter::tr("the optimizer update");
    if (phase == QLatin1String("evaluation") || phase == QLatin1String("eval")) return ReportWriter::tr("evaluation");
    return phase;
}

QString optimizerName(const QString& kind) {
    if (kind == QLatin1String("sgd")) return QStringLiteral("SGD");
    if (kind == QLatin1String("adam")) return QStringLiteral("Adam");
    if (kind == QLatin1String("adamw")) return QStringLiteral("AdamW");
    return kind;
}

}  // namespace

QString ReportWriter::document(Target target) const {
    const RunInfo& run = m_data.run;
    const QJsonObject& cfg = run.config;
    const QJsonObject& fm = run.finalMetrics;
    const QVector<ReportChart> allCharts = charts();
    const int chartWidth = target == Target::Html ? 900 : 640;
    auto chartSrc = [&](const QString& id, QString* alt) -> QString {
        for (const auto& c : allCharts)
            if (c.id == id) {
                *alt = c.title;
                if (target == Target::Pdf) return QStringLiteral("chart:") + id;
                return QStringLiteral("data:image/png;base64,") + QString::fromLatin1(pngBytes(renderChart(c)).toBase64());
            }
        return {};
    };
    auto chartUnit = [&](const QString& id) {
        Unit u;
        u.chartSrc = chartSrc(id, &u.chartAlt);
        u.chartWidth = chartWidth;
        return u;
    };
    const QString statusText = run.status == QLatin1String("finished") ? tr("finished")
                               : run.status == QLatin1String("failed") ? tr("failed")
                               : run.status == QLatin1String("stopped") ? tr("stopped")
                                                                         : tr("running");
    QString specError;
    const auto spec = analyzeSpec(run.spec, &specError);
    const qint64 params = fm.value(QStringLiteral("param_count")).toInteger(spec ? qint64(spec->total_params) : -1);
    const ReportEnergy en = energy();

    mu::data d;
    d.set("html", target == Target::Html);
    d.set("lang", S(QLocale().bcp47Name()));
    d.set("title", S(tr("Run report: %1").arg(run.name)));
    {
        QStringList sub;
        sub << statusText;
        sub << (params > 0 ? tr("%1 (%2 parameters) on %3").arg(run.modelName, countText(params), datasetName(run.data))
                           : tr("%1 on %2").arg(run.modelName, datasetName(run.data)));
        if (!run.device.isEmpty()) sub << run.device;
        sub << QLocale().toString(run.created.toLocalTime(), QLocale::ShortFormat);
        d.set("subtitle", S(sub.join(QStringLiteral(" · "))));
    }
    if (!run.error.isEmpty())
        d.set("error", mu::object{{"label", S(tr("Error"))}, {"text", S(run.error)}});
    else
        d.set("error", false);

    // ---- the outcome, on the first page
    d.set("outcomeTitle", S(tr("Outcome")));
    struct Figure {
        QString label, value, detail;
    };
    QVector<Figure> figures;
    {
        double acc = fm.value(QStringLiteral("test_accuracy")).toDouble(qQNaN());
        double loss = fm.value(QStringLiteral("test_loss")).toDouble(qQNaN());
        if (!std::isfinite(acc) && !m_data.epochs.isEmpty()) acc = m_data.epochs.last().testAccuracy;
        if (!std::isfinite(loss) && !m_data.epochs.isEmpty()) loss = m_data.epochs.last().testLoss;
        const int epochsDone = int(fm.value(QStringLiteral("epochs_completed")).toInteger(m_data.epochs.size()));
        const QString after = epochsDone > 0 ? tr("after epoch %1").arg(epochsDone) : tr("at the end of the run");
        figures.push_back({tr("Test accuracy"), percentText(acc), std::isfinite(acc) ? after : tr("not evaluated")});
        figures.push_back({tr("Test loss"), numText(loss, 4), std::isfinite(loss) ? after : tr("not evaluated")});
        double ips = fm.value(QStringLiteral("images_per_second")).toDouble(qQNaN());
        double stepSum = 0;
        int stepN = 0;
        for (const auto& st : m_data.steps)
            if (std::isfinite(st.stepSeconds) && st.stepSeconds > 0) stepSum += st.stepSeconds, ++stepN;
        figures.push_back({tr("Throughput"), std::isfinite(ips) && ips > 0 ? tr("%1 images/s").arg(numText(ips, 3)) : QStringLiteral("—"),
                           stepN ? tr("mean step %1 ms").arg(numText(1000.0 * stepSum / stepN, 3)) : QString()});
        const double wall = run.finished.isValid() ? run.created.msecsTo(run.finished) / 1000.0 : qQNaN();
        const double trainSeconds = fm.value(QStringLiteral("seconds")).toDouble(qQNaN());
        figures.push_back({tr("Wall time"), secondsText(std::isfinite(wall) ? wall : trainSeconds),
                           std::isfinite(trainSeconds) ? tr("%1 in the trainer").arg(secondsText(trainSeconds))
                                                       : QString()});
        // peak memory against what the device had
        const qint64 peak = fm.value(QStringLiteral("peak_bytes")).toInteger(-1);
        const qint64 limit = cfg.value(QStringLiteral("memory_limit")).toInteger(0);
        qint64 capacity = 0;
        for (const auto& m : m_data.memorySamples) capacity = qMax(capacity, m.deviceCapacity);
        if (capacity <= 0)
            for (const auto& t : m_data.telemetry) capacity = qMax(capacity, t.gpu >= 0 ? t.gpuMemoryTotal : qint64(-1));
        const bool onCpu = run.device.startsWith(QLatin1String("cpu"));
        if (capacity <= 0 && onCpu)
            for (const auto& t : m_data.telemetry) capacity = qMax(capacity, t.ramTotal);
        QString peakDetail;
        if (peak >= 0 && limit > 0)
            peakDetail = tr("%1 of the memory limit of %2").arg(percentText(double(peak) / double(limit)), bytesText(limit));
        else if (peak >= 0 && capacity > 0)
            peakDetail = tr("%1 of the device's %2").arg(percentText(double(peak) / double(capacity), 2), bytesText(capacity));
        else if (peak >= 0)
            peakDetail = tr("device capacity not recorded");
        figures.push_back({tr("Peak memory"), bytesText(peak), peakDetail});
        // predicted against measured
        qint64 predicted = 0;
        bool anyPred = false;
        for (const auto& r : m_data.memory)
            if (r.predicted >= 0) predicted += r.predicted, anyPred = true;
        QString predValue = QStringLiteral("—"), predDetail = tr("no prediction recorded");
        if (anyPred) {
            predValue = bytesText(predicted);
            if (peak > 0) {
                const qint64 diff = peak - predicted;
                predDetail = diff == 0 ? tr("measured %1: equal to the byte").arg(bytesText(peak))
                                       : tr("measured %1 (%2%3)")
                                             .arg(bytesText(peak), diff > 0 ? QStringLiteral("+") : QStringLiteral("−"),
                                                  percentText(std::abs(double(diff)) / double(predicted), 2));
            }
        }
        figures.push_back({tr("Predicted peak"), predValue, predDetail});
        if (en.available)
            figures.push_back({tr("Energy"), tr("%1 J").arg(numText(en.joules, 5)),
                               std::isfinite(en.joulesPerSample)
                                   ? tr("%1 Wh, %2 J per sample").arg(numText(en.joules / 3600.0, 3), numText(en.joulesPerSample, 3))
                                   : tr("%1 Wh").arg(numText(en.joules / 3600.0, 3))});
        else
            figures.push_back({tr("Energy"), QStringLiteral("—"), tr("not measured (no NVML figures)")});
        const qint64 steps = fm.value(QStringLiteral("steps")).toInteger(m_data.steps.isEmpty() ? 0 : m_data.steps.last().step);
        figures.push_back({tr("Optimizer steps"), countText(steps),
                           tr("%1 samples, batch %2").arg(countText(samplesTrained()))
                               .arg(cfg.value(QStringLiteral("batch")).toInteger(0))});
    }
    {
        mu::list rows;
        for (int i = 0; i < figures.size(); i += 4) {
            mu::list cells;
            for (int k = i; k < qMin(i + 4, int(figures.size())); ++k)
                cells.push_back(mu::object{{"label", S(figures[k].label)},
                                           {"value", S(figures[k].value)},
                                           {"detail", S(figures[k].detail.isEmpty() ? QStringLiteral(" ") : figures[k].detail)}});
            rows.push_back(mu::object{{"figures", cells}});
        }
        d.set("figureRows", rows);
        QString alt;
        const QString src = chartSrc(QStringLiteral("loss"), &alt);
        if (src.isEmpty())
            d.set("lossChart", false);
        else
            d.set("lossChart", mu::object{{"src", S(src)}, {"alt", S(alt)}, {"width", S(QString::number(chartWidth))}});
        QStringList notes;
        if (src.isEmpty()) notes << tr("No training steps were recorded.");
        d.set("outcomeNotes", texts(notes));
    }

    // ---- details, one section each
    mu::list sections;
    auto addSection = [&](const QString& id, const QString& title, QVector<Unit> units) {
        units.erase(std::remove_if(units.begin(), units.end(), [](const Unit& u) { return u.empty(); }), units.end());
        if (units.isEmpty()) units.push_back(Unit{});
        units.front().headingId = id;
        units.front().heading = title;
        mu::list l;
        for (const Unit& u : units) l.push_back(unitData(u));
        sections.push_back(mu::object{{"units", l}});
    };

    // training curves and epochs
    {
        QVector<Unit> units;
        Unit first = chartUnit(QStringLiteral("accuracy"));
        if (allCharts.isEmpty() || (m_data.steps.isEmpty() && m_data.epochs.isEmpty()))
            first.notes << tr("No training steps were recorded.");
        else
            first.paragraphs << tr("The loss curve is on the first page.");
        units << first << chartUnit(QStringLiteral("throughput"));
        if (!m_data.epochs.isEmpty()) {
            Unit t;
            t.subheading = tr("Per epoch");
            for (const QString& col : {tr("Epoch"), tr("Train loss"), tr("Train accuracy"), tr("Test loss"),
                                       tr("Test accuracy"), tr("Time"), tr("Images/s")})
                t.header.push_back({col, false, false});
            for (int k = 1; k < t.header.size(); ++k) t.header[k].num = true;
            for (const auto& e : m_data.epochs)
                t.rows.push_back({{QString::number(e.epoch), false, false},
                                  {numText(e.trainLoss), true, false},
                                  {percentText(e.trainAccuracy), true, false},
                                  {numText(e.testLoss), true, false},
                                  {percentText(e.testAccuracy), true, false},
                                  {secondsText(e.seconds), true, false},
                                  {numText(e.imagesPerSecond), true, false}});
            units << t;
        }
        addSection(QStringLiteral("training"), tr("Loss, accuracy and throughput"), units);
    }

    // memory
    {
        QVector<Unit> units;
        Unit t;
        if (m_data.memory.isEmpty()) {
            t.notes << tr("No memory figures were recorded for this run.");
        } else {
            bool anyPred = false;
            for (const auto& r : m_data.memory) anyPred = anyPred || r.predicted >= 0;
            t.paragraphs << tr("The planner's prediction at the start against the memory ledger's measurement: each "
                               "category's own peak, and its share when all of them together peaked.");
            if (!anyPred)
                t.notes << tr("Prediction not available: the run was started without a memory plan; measured "
                              "figures are shown alone.");
            for (const QString& col : {tr("Category"), tr("Predicted"), tr("Measured peak"), tr("At total peak"),
                                       tr("Measured − predicted")})
                t.header.push_back({col, col != tr("Category"), false});
            qint64 tp = 0, tm = 0, ta = 0;
            for (const auto& r : m_data.memory) {
                if (r.predicted <= 0 && r.peak <= 0 && r.atPeak <= 0) continue;  // an unused category
                const QString diff = r.predicted >= 0 && r.peak >= 0
                                         ? (r.peak == r.predicted ? QStringLiteral("0")
                                            : r.peak > r.predicted ? QStringLiteral("+") + bytesText(r.peak - r.predicted)
                                                                   : QStringLiteral("−") + bytesText(r.predicted - r.peak))
                                         : QStringLiteral("—");
                QString name = r.category;
                try {
                    name = hrw::PlanBarChart::categoryName(hr::category_from_name(r.category.toStdString()));
                } catch (const std::exception&) {
                }
                t.rows.push_back({{name, false, false},
                                  {bytesText(r.predicted), true, false},
                                  {bytesText(r.peak), true, false},
                                  {bytesText(r.atPeak), true, false},
                                  {diff, true, false}});
                tp += qMax<qint64>(0, r.predicted);
                tm += qMax<qint64>(0, r.peak);
                ta += qMax<qint64>(0, r.atPeak);
            }
            t.rows.push_back({{tr("Total"), false, true},
                              {anyPred ? bytesText(tp) : QStringLiteral("—"), true, true},
                              {bytesText(tm), true, true},
                              {bytesText(ta), true, true},
                              {QString(), true, true}});
            const qint64 peak = fm.value(QStringLiteral("peak_bytes")).toInteger(-1);
            if (peak >= 0) {
                const qint64 step = fm.value(QStringLiteral("peak_step")).toInteger(-1);
                const QString phase = fm.value(QStringLiteral("peak_phase")).toString();
                t.paragraphs << (step >= 0 ? tr("All categories together peaked at %1 during %2 of step %3.")
                                                 .arg(bytesText(peak), phaseText(phase))
                                                 .arg(step)
                                           : tr("All categories together peaked at %1 during %2.")
                                                 .arg(bytesText(peak), phaseText(phase.isEmpty() ? QStringLiteral("setup")
                                                                                                 : phase)));
            }
        }
        units << t << chartUnit(QStringLiteral("memory_categories"));
        // a run on several ranks: each rank's share, predicted against measured and against the OS
        const QJsonObject dist = fm.value(QStringLiteral("distributed")).toObject();
        if (dist.value(QStringLiteral("world_size")).toInt(1) > 1) {
            Unit r;
            r.subheading = tr("Ranks");
            const int world = dist.value(QStringLiteral("world_size")).toInt();
            const double bytes = dist.value(QStringLiteral("communication_bytes_per_step")).toDouble(qQNaN());
            const double secs = dist.value(QStringLiteral("communication_seconds_per_step")).toDouble(qQNaN());
            r.paragraphs << tr("%1 ranks, sharding stage %2. Each rank handed its communicator %3 per step and spent "
                               "%4 per step waiting on communication (rank 0's figures).")
                                .arg(QString::number(world), dist.value(QStringLiteral("stage")).toString(),
                                     std::isfinite(bytes) ? bytesText(qint64(bytes)) : QStringLiteral("—"),
                                     std::isfinite(secs) ? tr("%1 ms").arg(secs * 1e3, 0, 'f', 2) : QStringLiteral("—"));
            r.notes << tr("Measured is each rank's memory ledger at its peak; resident is the rank's process at its "
                          "peak as the operating system counts it (the ledger's host side, the runtime, the data and "
                          "the libraries).");
            for (const QString& col : {tr("Rank"), tr("Batch"), tr("Predicted"), tr("Measured peak"), tr("Resident peak (OS)")})
                r.header.push_back({col, true, false});
            const QJsonArray batch = dist.value(QStringLiteral("rank_batch")).toArray();
            const QJsonArray predicted = dist.value(QStringLiteral("predicted_peak_bytes")).toArray();
            const QJsonArray measured = dist.value(QStringLiteral("measured_peak_bytes")).toArray();
            const QJsonArray resident = dist.value(QStringLiteral("measured_resident_peak_bytes")).toArray();
            auto cell = [](const QJsonArray& a, int i) {
                const qint64 v = i < a.size() ? a[i].toInteger(-1) : -1;
                return v >= 0 ? bytesText(v) : QStringLiteral("—");
            };
            for (int i = 0; i < world; ++i)
                r.rows.push_back({{QString::number(i), true, false},
                                  {i < batch.size() ? QString::number(batch[i].toInteger()) : QStringLiteral("—"), true, false},
                                  {cell(predicted, i), true, false},
                                  {cell(measured, i), true, false},
                                  {cell(resident, i), true, false}});
            units << r;
        }
        addSection(QStringLiteral("memory"), tr("Memory: predicted and measured"), units);
    }

    // memory strategies and optimizer, in words
    {
        Unit u;
        const QJsonObject st = cfg.value(QStringLiteral("strategy")).toObject();
        const QJsonObject op = cfg.value(QStringLiteral("optimizer")).toObject();
        const QJsonObject sc = cfg.value(QStringLiteral("schedule")).toObject();
        if (st.isEmpty() && op.isEmpty()) {
            u.notes << tr("The run's configuration holds no strategy or optimizer settings.");
        }
        if (!st.isEmpty()) {
            const QString prec = st.value(QStringLiteral("precision")).toString(QStringLiteral("fp32"));
            QString precision;
            if (prec == QLatin1String("bf16")) precision = tr("bf16 mixed precision, fp32 master weights");
            else if (prec == QLatin1String("fp16"))
                precision = tr("fp16 mixed precision, fp32 master weights, dynamic loss scaling (from %1, doubled "
                               "after %2 steps without overflow)")
                                .arg(numText(st.value(QStringLiteral("loss_scale_init")).toDouble(65536), 6))
                                .arg(st.value(QStringLiteral("loss_scale_growth_interval")).toInteger(2000));
            else if (prec == QLatin1String("tf32")) precision = tr("tf32 matrix multiplications, fp32 elsewhere");
            else precision = tr("fp32 throughout");
            u.keyValues.push_back({tr("Precision"), precision});
            const QString ck = st.value(QStringLiteral("checkpoint")).toString(QStringLiteral("none"));
            QString checkpoint;
            if (ck == QLatin1String("none")) checkpoint = tr("none: every activation is kept for backward");
            else if (ck == QLatin1String("all")) checkpoint = tr("every block (recomputed in backward)");
            else if (ck == QLatin1String("auto")) checkpoint = tr("the blocks the planner chose to fit the memory");
            else if (ck.startsWith(QLatin1String("every:"))) checkpoint = tr("one block in every %1").arg(ck.mid(6));
            else if (ck.startsWith(QLatin1String("list:"))) checkpoint = tr("blocks %1").arg(ck.mid(5));
            else checkpoint = ck;
            u.keyValues.push_back({tr("Activation checkpointing"), checkpoint});
            const qint64 micro = st.value(QStringLiteral("micro_batch")).toInteger(0);
            const qint64 accum = st.value(QStringLiteral("accumulate")).toInteger(1);
            u.keyValues.push_back({tr("Micro-batches"), micro > 0 && accum > 1
                                                            ? tr("%1 samples each, gradients accumulated over %2")
                                                                  .arg(micro)
                                                                  .arg(accum)
                                                            : tr("the whole batch at once")});
            u.keyValues.push_back({tr("Optimizer state"), st.value(QStringLiteral("offload_optimizer")).toBool()
                                                              ? tr("in host memory (offloaded), with the master weights")
                                                              : tr("on the device")});
        }
        if (!op.isEmpty()) {
            const QString kind = op.value(QStringLiteral("kind")).toString();
            QString o = tr("%1, learning rate %2").arg(optimizerName(kind), numText(op.value(QStringLiteral("lr")).toDouble(qQNaN()), 4));
            if (kind == QLatin1String("sgd")) {
                const double m = op.value(QStringLiteral("momentum")).toDouble(0);
                if (m > 0) {
                    o += tr(", momentum %1").arg(numText(m, 3));
                    if (op.value(QStringLiteral("nesterov")).toBool()) o += tr(" (Nesterov)");
                    const double damp = op.value(QStringLiteral("dampening")).toDouble(0);
                    if (damp > 0) o += tr(", dampening %1").arg(numText(damp, 3));
                } else {
                    o += tr(", no momentum");
                }
            } else {
                o += tr(", betas %1 and %2, epsilon %3")
                         .arg(numText(op.value(QStringLiteral("beta1")).toDouble(qQNaN()), 4),
                              numText(op.value(QStringLiteral("beta2")).toDouble(qQNaN()), 4),
                              numText(op.value(QStringLiteral("eps")).toDouble(qQNaN()), 3));
            }
            const double wd = op.value(QStringLiteral("weight_decay")).toDouble(0);
            if (wd > 0)
                o += kind == QLatin1String("adamw") ? tr(", decoupled weight decay %1").arg(numText(wd, 3))
                                                    : tr(", weight decay %1").arg(numText(wd, 3));
            u.keyValues.push_back({tr("Optimizer"), o});
        }
        if (!sc.isEmpty()) {
            const QString kind = sc.value(QStringLiteral("kind")).toString(QStringLiteral("constant"));
            QString sched;
            if (kind == QLatin1String("step"))
                sched = tr("multiplied by %1 every %2 steps")
                            .arg(numText(sc.value(QStringLiteral("gamma")).toDouble(qQNaN()), 3),
                                 countText(sc.value(QStringLiteral("step_size")).toInteger(0)));
            else if (kind == QLatin1String("cosine"))
                sched = tr("cosine decay to %1").arg(numText(sc.value(QStringLiteral("min_lr")).toDouble(0), 3));
            else sched = tr("constant");
            const qint64 warm = sc.value(QStringLiteral("warmup_steps")).toInteger(0);
            if (warm > 0) sched = tr("%1, after a linear warm-up over %2 steps").arg(sched, countText(warm));
            u.keyValues.push_back({tr("Learning rate"), sched});
        }
        addSection(QStringLiteral("strategies"), tr("Memory strategies and optimizer"), {u});
    }

    // data
    {
        Unit u;
        if (cfg.contains(QStringLiteral("data")))
            u.keyValues.push_back({tr("Dataset"), datasetName(cfg.value(QStringLiteral("data")).toString())});
        auto limitText = [&](const char* key) {
            const qint64 n = cfg.value(QLatin1String(key)).toInteger(0);
            return n > 0 ? tr("the first %1").arg(countText(n)) : tr("all");
        };
        if (cfg.contains(QStringLiteral("train_limit"))) u.keyValues.push_back({tr("Training samples"), limitText("train_limit")});
        if (cfg.contains(QStringLiteral("test_limit"))) u.keyValues.push_back({tr("Test samples"), limitText("test_limit")});
        if (cfg.contains(QStringLiteral("batch")))
            u.keyValues.push_back({tr("Batch size"), countText(cfg.value(QStringLiteral("batch")).toInteger(0))});
        const qint64 steps = cfg.value(QStringLiteral("steps")).toInteger(0);
        const qint64 epochs = cfg.value(QStringLiteral("epochs")).toInteger(0);
        if (steps > 0) u.keyValues.push_back({tr("Length"), steps == 1 ? tr("1 step") : tr("%1 steps").arg(countText(steps))});
        else if (cfg.contains(QStringLiteral("epochs")))
            u.keyValues.push_back({tr("Length"), epochs == 1 ? tr("1 epoch") : tr("%1 epochs").arg(countText(epochs))});
        if (cfg.contains(QStringLiteral("evaluate_each_epoch")))
            u.keyValues.push_back({tr("Test set"), cfg.value(QStringLiteral("evaluate_each_epoch")).toBool()
                                                       ? tr("evaluated after every epoch")
                                                       : tr("evaluated at the end")});
        if (cfg.contains(QStringLiteral("seed")))
            u.keyValues.push_back({tr("Seed"), QString::number(cfg.value(QStringLiteral("seed")).toInteger(0))});
        if (cfg.contains(QStringLiteral("model_source"))) {
            const QString src = cfg.value(QStringLiteral("model_source")).toString();
            QString text = src;
            if (src.startsWith(QLatin1String("preset:"))) text = tr("the preset %1").arg(src.mid(7));
            else if (src.startsWith(QLatin1String("file:"))) text = tr("the file %1").arg(src.mid(5));
            else if (src == QLatin1String("builder")) text = tr("built in the window");
            u.keyValues.push_back({tr("Model"), text});
        }
        u.keyValues.push_back({tr("Samples trained"), countText(samplesTrained())});
        addSection(QStringLiteral("data"), tr("Data"), {u});
    }

    // model
    {
        QVector<Unit> units;
        Unit t;
        if (spec) {
            t.paragraphs << tr("%1 layers, %2 trainable parameters, %3 of activations kept for backward per sample "
                               "(f32).")
                                .arg(spec->layers.size())
                                .arg(countText(qint64(spec->total_params)))
                                .arg(bytesText(spec->activation_bytes_per_sample));
            for (const QString& col : {tr("#"), tr("Path"), tr("Layer"), tr("Input"), tr("Output"), tr("Parameters"),
                                       tr("Activations / sample")})
                t.header.push_back({col, col == tr("Parameters") || col == tr("Activations / sample"), false});
            for (const auto& l : spec->layers)
                t.rows.push_back({{QString::number(l.index), false, false},
                                  {QString(l.depth * 2, QChar(0x00A0)) + QString::fromStdString(l.path), false, false},
                                  {QString::fromStdString(l.label), false, false},
                                  {shapeText(l.input_shape), false, false},
                                  {shapeText(l.output_shape), false, false},
                                  {countText(qint64(l.params)), true, false},
                                  {bytesText(l.activation_bytes_per_sample), true, false}});
            if (!spec->ok) t.notes << QString::fromStdString(spec->error);
        } else {
            t.notes << specError;
        }
        units << t;
        addSection(QStringLiteral("model"), tr("Model"), units);
    }

    // device and versions
    {
        Unit u;
        u.keyValues.push_back({tr("Trained on"), run.device.isEmpty() ? cfg.value(QStringLiteral("device")).toString() : run.device});
        if (cfg.contains(QStringLiteral("device"))) {
            const QString asked = cfg.value(QStringLiteral("device")).toString();
            u.keyValues.push_back({tr("Device asked for"), asked == QLatin1String("auto") ? tr("automatic (a GPU when one works)") : asked});
        }
        std::map<int, QString> gpus;
        for (const auto& r : m_data.telemetry)
            if (r.gpu >= 0) gpus[r.gpu] = r.gpuName;
        for (auto& [i, name] : gpus) u.keyValues.push_back({tr("GPU %1").arg(i), name});
        if (cfg.contains(QStringLiteral("threads"))) {
            const qint64 th = cfg.value(QStringLiteral("threads")).toInteger(0);
            u.keyValues.push_back({tr("CPU threads"), th > 0 ? QString::number(th) : tr("all cores")});
        }
        const qint64 limit = cfg.value(QStringLiteral("memory_limit")).toInteger(0);
        if (limit > 0) u.keyValues.push_back({tr("Memory limit"), bytesText(limit)});
        u.keyValues.push_back({tr("Headroom"), QStringLiteral(HEADROOM_VERSION)});
        u.keyValues.push_back({tr("Qt"), QString::fromLatin1(qVersion())});
        u.keyValues.push_back({tr("Operating system"), QSysInfo::prettyProductName()});
        u.keyValues.push_back({tr("Host"), QSysInfo::machineHostName()});
        addSection(QStringLiteral("device"), tr("Device and versions"), {u});
    }

    // telemetry
    {
        QVector<Unit> units;
        Unit first;
        bool gpus = false;
        for (const auto& r : m_data.telemetry) gpus = gpus || r.gpu >= 0;
        bool anyTel = false;
        for (const char* id : {"power", "utilization", "device_memory"}) {
            Unit c = chartUnit(QLatin1String(id));
            anyTel = anyTel || !c.chartSrc.isEmpty();
            units << c;
        }
        if (m_data.telemetry.isEmpty()) first.notes << tr("No telemetry was recorded for this run.");
        else if (!gpus) first.notes << tr("No GPU telemetry: no NVIDIA driver was found while the run trained; host figures are shown.");
        else if (!anyTel) first.notes << tr("Telemetry holds no plottable figures.");
        if (!first.empty()) units.prepend(first);
        // the heading goes with the first chart when there is no note
        addSection(QStringLiteral("telemetry"), tr("Power, utilisation and memory over time"), units);
    }

    // energy
    {
        Unit u;
        if (!en.available) {
            u.notes << tr("Energy not measured: NVML gave no energy or power figures for this run.");
        } else {
            u.keyValues.push_back({tr("Energy used by the GPUs"), tr("%1 J (%2 Wh)").arg(numText(en.joules, 6), numText(en.joules / 3600.0, 4))});
            u.keyValues.push_back({tr("Energy per training sample"),
                                   std::isfinite(en.joulesPerSample) ? tr("%1 J").arg(numText(en.joulesPerSample, 4)) : QStringLiteral("—")});
            if (en.fromPowerIntegral)
                u.notes << tr("Estimated by integrating sampled power draw over time (the GPU has no energy counter).");
        }
        addSection(QStringLiteral("energy"), tr("Energy"), {u});
    }

    // durations
    {
        Unit u;
        if (run.finished.isValid())
            u.keyValues.push_back({tr("Wall-clock time"), secondsText(run.created.msecsTo(run.finished) / 1000.0)});
        const double trainSeconds = fm.value(QStringLiteral("seconds")).toDouble(qQNaN());
        u.keyValues.push_back({tr("Training time"), secondsText(std::isfinite(trainSeconds) ? trainSeconds
                                                      : (m_data.steps.isEmpty() ? qQNaN() : m_data.steps.last().elapsedSeconds))});
        if (!m_data.steps.isEmpty()) {
            double sum = 0;
            int n = 0;
            for (const auto& st : m_data.steps)
                if (std::isfinite(st.stepSeconds)) sum += st.stepSeconds, ++n;
            u.keyValues.push_back({tr("Steps recorded"), countText(qint64(m_data.steps.size()))});
            if (n) u.keyValues.push_back({tr("Mean step time"), tr("%1 ms").arg(numText(1000.0 * sum / n, 4))});
        }
        for (const auto& e : m_data.epochs) u.keyValues.push_back({tr("Epoch %1").arg(e.epoch), secondsText(e.seconds)});
        addSection(QStringLiteral("durations"), tr("Durations"), {u});
    }

    // final metrics, in words
    {
        Unit u;
        if (fm.isEmpty()) {
            u.notes << (run.status == QLatin1String("running") ? tr("The run has not ended.") : tr("No final metrics were recorded."));
        } else {
            QSet<QString> shown;
            auto add = [&](const char* key, const QString& label, const QString& value) {
                if (!fm.contains(QLatin1String(key))) return;
                shown.insert(QLatin1String(key));
                u.keyValues.push_back({label, value});
            };
            auto num = [&](const char* key, int prec = 4) { return numText(fm.value(QLatin1String(key)).toDouble(qQNaN()), prec); };
            auto pct = [&](const char* key) { return percentText(fm.value(QLatin1String(key)).toDouble(qQNaN())); };
            add("test_accuracy", tr("Test accuracy"), pct("test_accuracy"));
            add("test_loss", tr("Test loss"), num("test_loss"));
            add("train_accuracy", tr("Training accuracy (last epoch)"), pct("train_accuracy"));
            add("train_loss", tr("Training loss (last epoch)"), num("train_loss"));
            add("steps", tr("Optimizer steps"), countText(fm.value(QStringLiteral("steps")).toInteger(0)));
            add("epochs_completed", tr("Epochs completed"), countText(fm.value(QStringLiteral("epochs_completed")).toInteger(0)));
            add("images_per_second", tr("Throughput"), tr("%1 images/s").arg(num("images_per_second")));
            add("param_count", tr("Parameters"), countText(fm.value(QStringLiteral("param_count")).toInteger(0)));
            add("seconds", tr("Time in the trainer"), secondsText(fm.value(QStringLiteral("seconds")).toDouble(qQNaN())));
            add("peak_bytes", tr("Peak memory (all categories)"), bytesText(fm.value(QStringLiteral("peak_bytes")).toInteger(-1)));
            add("peak_reserved_bytes", tr("Peak reserved (allocated + cached)"),
                bytesText(fm.value(QStringLiteral("peak_reserved_bytes")).toInteger(-1)));
            if (fm.contains(QStringLiteral("peak_phase")) || fm.contains(QStringLiteral("peak_step"))) {
                const qint64 step = fm.value(QStringLiteral("peak_step")).toInteger(-1);
                const QString phase = fm.value(QStringLiteral("peak_phase")).toString();
                add(fm.contains(QStringLiteral("peak_phase")) ? "peak_phase" : "peak_step", tr("Peak reached during"),
                    step >= 0 ? tr("%1 of step %2").arg(phaseText(phase)).arg(step)
                              : phaseText(phase.isEmpty() ? QStringLiteral("setup") : phase));
                shown.insert(QStringLiteral("peak_step"));
            }
            shown.insert(QStringLiteral("distributed"));  // the ranks' table, under Memory
            for (auto it = fm.begin(); it != fm.end(); ++it)  // figures newer builds add
                if (!shown.contains(it.key()))
                    u.keyValues.push_back({it.key(), it.key().endsWith(QLatin1String("bytes")) ? bytesText(it.value().toInteger(-1))
                                                                                           : jsonValueText(it.value())});
        }
        addSection(QStringLiteral("final"), tr("Final metrics"), {u});
    }
    d.set("sections", sections);
    d.set("footer", S(tr("Written by Headroom %1 on %2.")
                          .arg(QStringLiteral(HEADROOM_VERSION),
                               QLocale().toString(QDateTime::currentDateTime(), QLocale::LongFormat))));

    mu::mustache tmpl(S(templateText()));
    if (!tmpl.is_valid()) return QStringLiteral("<html><body><p>%1</p></body></html>").arg(esc(QString::fromStdString(tmpl.error_message())));
    return QString::fromStdString(tmpl.render(d));
}

QString ReportWriter::html() const { return document(Target::Html); }

QJsonObject ReportWriter::json() const {
    const RunInfo& r = m_data.run;
    QJsonObject o;
    o[QStringLiteral("format")] = QStringLiteral("headroom-run-report");
    o[QStringLiteral("format_version")] = 1;
    o[QStringLiteral("generated")] = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
    o[QStringLiteral("headroom_version")] = QStringLiteral(HEADROOM_VERSION);
    o[QStringLiteral("qt_version")] = QString::fromLatin1(qVersion());
    QJsonObject run;
    run[QStringLiteral("id")] = r.id;
    run[QStringLiteral("name")] = r.name;
    run[QStringLiteral("status")] = r.status;
    run[QStringLiteral("created")] = r.created.toString(Qt::ISODateWithMs);
    run[QStringLiteral("finished")] = r.finished.isValid() ? QJsonValue(r.finished.toString(Qt::ISODateWithMs))
                                                           : QJsonValue(QJsonValue::Null);
    run[QStringLiteral("device")] = r.device;
    run[QStringLiteral("error")] = r.error.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(r.error);
    run[QStringLiteral("config")] = r.config;
    run[QStringLiteral("spec")] = r.spec;
    run[QStringLiteral("final_metrics")] = r.finalMetrics;
    o[QStringLiteral("run")] = run;

    QJsonArray layers;
    QString specError;
    if (auto rep = analyzeSpec(r.spec, &specError)) {
        for (const auto& l : rep->layers) {
            QJsonArray in, out;
            for (auto d : l.input_shape) in << qint64(d);
            for (auto d : l.output_shape) out << qint64(d);
            layers << QJsonObject{{QStringLiteral("index"), l.index},
                                  {QStringLiteral("path"), QString::fromStdString(l.path)},
                                  {QStringLiteral("type"), QString::fromStdString(l.type)},
                                  {QStringLiteral("label"), QString::fromStdString(l.label)},
                                  {QStringLiteral("input_shape"), in},
                                  {QStringLiteral("output_shape"), out},
                                  {QStringLiteral("params"), qint64(l.params)},
                                  {QStringLiteral("activation_bytes_per_sample"), qint64(l.activation_bytes_per_sample)}};
        }
    }
    o[QStringLiteral("layers")] = layers;

    QJsonArray steps;
    for (const auto& s : m_data.steps)
        steps << QJsonObject{{QStringLiteral("step"), s.step},          {QStringLiteral("epoch"), s.epoch},
                             {QStringLiteral("loss"), jnum(s.loss)},    {QStringLiteral("accuracy"), jnum(s.accuracy)},
                             {QStringLiteral("lr"), jnum(s.lr)},        {QStringLiteral("step_seconds"), jnum(s.stepSeconds)},
                             {QStringLiteral("images_per_second"), jnum(s.imagesPerSecond)},
                             {QStringLiteral("elapsed_seconds"), jnum(s.elapsedSeconds)},
                             {QStringLiteral("loss_scale"), jnum(s.lossScale)},
                             {QStringLiteral("skipped"), s.skipped}};
    o[QStringLiteral("steps")] = steps;
    QJsonArray epochs;
    for (const auto& e : m_data.epochs)
        epochs << QJsonObject{{QStringLiteral("epoch"), e.epoch},
                              {QStringLiteral("step"), e.step},
                              {QStringLiteral("train_loss"), jnum(e.trainLoss)},
                              {QStringLiteral("train_accuracy"), jnum(e.trainAccuracy)},
                              {QStringLiteral("test_loss"), jnum(e.testLoss)},
                              {QStringLiteral("test_accuracy"), jnum(e.testAccuracy)},
                              {QStringLiteral("seconds"), jnum(e.seconds)},
                              {QStringLiteral("images_per_second"), jnum(e.imagesPerSecond)}};
    o[QStringLiteral("epochs")] = epochs;
    QJsonArray tel;
    for (const auto& t : m_data.telemetry)
        tel << QJsonObject{{QStringLiteral("t"), t.t},
                           {QStringLiteral("step"), t.step},
                           {QStringLiteral("gpu"), t.gpu},
                           {QStringLiteral("gpu_name"), t.gpuName},
                           {QStringLiteral("cpu_utilization"), jnum(t.cpuUtilization)},
                           {QStringLiteral("ram_used"), jint(t.ramUsed)},
                           {QStringLiteral("ram_total"), jint(t.ramTotal)},
                           {QStringLiteral("process_rss"), jint(t.processRss)},
                           {QStringLiteral("gpu_memory_used"), jint(t.gpuMemoryUsed)},
                           {QStringLiteral("gpu_memory_total"), jint(t.gpuMemoryTotal)},
                           {QStringLiteral("power_watts"), jnum(t.powerWatts)},
                           {QStringLiteral("power_limit_watts"), jnum(t.powerLimitWatts)},
                           {QStringLiteral("gpu_utilization"), jnum(t.gpuUtilization)},
                           {QStringLiteral("memory_utilization"), jnum(t.memoryUtilization)},
                           {QStringLiteral("temperature_c"), jnum(t.temperatureC)},
                           {QStringLiteral("sm_clock_mhz"), jnum(t.smClockMhz)},
                           {QStringLiteral("energy_joules"), jnum(t.energyJoules)}};
    o[QStringLiteral("telemetry")] = tel;
    QJsonArray cats;
    for (const auto& m : m_data.memory)
        cats << QJsonObject{{QStringLiteral("category"), m.category},
                            {QStringLiteral("predicted"), jint(m.predicted)},
                            {QStringLiteral("peak"), jint(m.peak)},
                            {QStringLiteral("at_peak"), jint(m.atPeak)}};
    QJsonArray samples;
    for (const auto& s : m_data.memorySamples)
        samples << QJsonObject{{QStringLiteral("t"), s.t},
                               {QStringLiteral("step"), s.step},
                               {QStringLiteral("live_total"), s.liveTotal},
                               {QStringLiteral("reserved_free"), s.reservedFree},
                               {QStringLiteral("device_capacity"), s.deviceCapacity}};
    o[QStringLiteral("memory")] = QJsonObject{{QStringLiteral("categories"), cats}, {QStringLiteral("samples"), samples}};
    const ReportEnergy en = energy();
    o[QStringLiteral("energy")] = QJsonObject{{QStringLiteral("available"), en.available},
                                              {QStringLiteral("joules"), en.available ? jnum(en.joules) : QJsonValue()},
                                              {QStringLiteral("joules_per_sample"), jnum(en.joulesPerSample)},
                                              {QStringLiteral("from_power_integral"), en.fromPowerIntegral},
                                              {QStringLiteral("samples_trained"), samplesTrained()}};
    return o;
}

QString ReportWriter::csv() const {
    auto f = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 10) : QString(); };
    QString out = QStringLiteral("kind,step,epoch,loss,accuracy,lr,step_seconds,images_per_second,elapsed_seconds,"
                                 "test_loss,test_accuracy,epoch_seconds\n");
    for (const auto& s : m_data.steps)
        out += QStringLiteral("step,%1,%2,%3,%4,%5,%6,%7,%8,,,\n")
                   .arg(s.step)
                   .arg(s.epoch)
                   .arg(f(s.loss), f(s.accuracy), f(s.lr), f(s.stepSeconds), f(s.imagesPerSecond), f(s.elapsedSeconds));
    for (const auto& e : m_data.epochs)
        out += QStringLiteral("epoch,%1,%2,%3,%4,,,%5,,%6,%7,%8\n")
                   .arg(e.step)
                   .arg(e.epoch)
                   .arg(f(e.trainLoss), f(e.trainAccuracy), f(e.imagesPerSecond), f(e.testLoss), f(e.testAccuracy),
                        f(e.seconds));
    return out;
}

bool ReportWriter::writePdf(const QString& path, QString* error) const {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    {
        QPdfWriter writer(&file);
        writer.setTitle(tr("Run report: %1").arg(m_data.run.name));
        writer.setCreator(QStringLiteral("Headroom %1").arg(QStringLiteral(HEADROOM_VERSION)));
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setPageMargins(QMarginsF(15, 15, 15, 12), QPageLayout::Millimeter);
        writer.setResolution(150);
        const QRectF paper = writer.pageLayout().paintRectPixels(writer.resolution());
        QFont footerFont;
        footerFont.setPointSizeF(7);
        const qreal footerHeight = QFontMetricsF(footerFont, &writer).height() * 2;
        const qreal W = paper.width(), H = paper.height() - footerHeight;

        // The template's HTML, cut at its unit markers: every unit is laid out on its own and kept on
        // one page when it fits; a unit taller than a page starts on a fresh one and flows over as
        // many as it needs (QTextDocument moves lines and table rows, repeating a table's header).
        const QString html = document(Target::Pdf);
        const qsizetype bodyAt = html.indexOf(QLatin1String("<body>"));
        const qsizetype bodyEnd = html.lastIndexOf(QLatin1String("</body>"));
        if (bodyAt < 0 || bodyEnd < bodyAt) {
            if (error) *error = tr("The report template is damaged.");
            file.cancelWriting();
            return false;
        }
        const QString head = html.left(bodyAt + 6);
        QStringList units;
        for (const QString& part : html.mid(bodyAt + 6, bodyEnd - bodyAt - 6).split(QStringLiteral("<!-- unit -->")))
            if (!part.trimmed().isEmpty()) units << part;
        QHash<QString, QImage> images;
        for (const auto& c : charts()) images.insert(c.id, renderChart(c, 820, 370));
        QFont font;
        font.setPointSizeF(9);
        std::vector<std::unique_ptr<QTextDocument>> docs;
        for (const QString& unit : units) {
            auto doc = std::make_unique<QTextDocument>();
            doc->documentLayout()->setPaintDevice(&writer);
            doc->setDefaultFont(font);
            for (auto it = images.begin(); it != images.end(); ++it)
                doc->addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:") + it.key()), it.value());
            doc->setHtml(head + unit + QStringLiteral("</body></html>"));
            doc->setTextWidth(W);
            docs.push_back(std::move(doc));
        }
        struct Placement {
            std::size_t unit;
            int page;
            qreal y;
            int part;  // -1: the whole unit; else the unit's own page `part` (a unit taller than a page)
        };
        std::vector<Placement> plan;
        int page = 0;
        qreal y = 0;
        for (std::size_t i = 0; i < docs.size(); ++i) {
            QTextDocument& doc = *docs[i];
            const qreal h = doc.size().height();
            if (y > 0 && y + h > H) ++page, y = 0;
            if (h <= H) {
                plan.push_back({i, page, y, -1});
                y += h;
            } else {
                doc.setPageSize(QSizeF(W, H));
                const int parts = doc.pageCount();
                for (int k = 0; k < parts; ++k) plan.push_back({i, page + k, 0, k});
                page += parts - 1;
                const QRectF last = doc.documentLayout()->blockBoundingRect(doc.lastBlock());
                y = std::clamp(last.bottom() - (parts - 1) * H, qreal(0), H);
            }
            if (i == 0) ++page, y = 0;  // the outcome has the first page to itself
        }
        const int pages = plan.empty() ? 1 : plan.back().page + 1;
        QPainter painter(&writer);
        const QString footerText = tr("Headroom run report · %1").arg(m_data.run.name);
        auto footer = [&](int p) {
            painter.save();
            painter.setFont(footerFont);
            painter.setPen(QColor(0x77, 0x77, 0x77));
            const QRectF r(0, paper.height() - footerHeight * 0.6, W, footerHeight * 0.6);
            painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, footerText);
            painter.drawText(r, Qt::AlignRight | Qt::AlignVCenter, tr("page %1 of %2").arg(p + 1).arg(pages));
            painter.restore();
        };
        int current = 0;
        for (const Placement& p : plan) {
            while (current < p.page) {
                footer(current);
                writer.newPage();
                ++current;
            }
            QTextDocument& doc = *docs[p.unit];
            painter.save();
            painter.translate(0, p.y);
            if (p.part < 0) {
                doc.drawContents(&painter, QRectF(0, 0, W, doc.size().height()));
            } else {
                painter.translate(0, -p.part * H);
                doc.drawContents(&painter, QRectF(0, p.part * H, W, H));
            }
            painter.restore();
        }
        footer(current);
    }
    if (!file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool ReportWriter::write(const QString& path, Format format, QString* error) const {
    if (format == Format::Pdf) return writePdf(path, error);
    QByteArray bytes;
    switch (format) {
    case Format::Html: bytes = html().toUtf8(); break;
    case Format::Json: bytes = QJsonDocument(json()).toJson(QJsonDocument::Indented); break;
    case Format::Csv: bytes = csv().toUtf8(); break;
    case Format::Pdf: break;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
        if (error) *error = tr("Cannot write %1: %2").arg(path, file.errorString());
        file.cancelWriting();
        return false;
    }
    return true;
}

}  // namespace hrapp
