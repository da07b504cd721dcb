#include "report/report_writer.h"

#include <QApplication>
#include <QBuffer>
#include <QDateTime>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSysInfo>
#include <QTextDocument>
#include <QUrl>

#include <qcustomplot.h>

#include <cmath>
#include <map>

#include "base/error.h"
#include "i18n/CoreText.h"
#include "nn/model_spec.h"

namespace hrapp {
namespace {

QString esc(const QString& s) { return s.toHtmlEscaped(); }

QString bytesText(qint64 b) {
    if (b < 0) return QStringLiteral("—");
    return QLocale().formattedDataSize(b, 2, QLocale::DataSizeTraditionalFormat);
}

QString numText(double v, int prec = 4) {
    if (!std::isfinite(v)) return QStringLiteral("—");
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

// Key/value table rows: <tr><th>k</th><td>v</td></tr>
QString kvRow(const QString& k, const QString& v) {
    return QStringLiteral("<tr><th align=\"left\">%1</th><td>%2</td></tr>\n").arg(esc(k), esc(v));
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
    return {QStringLiteral("summary"),  QStringLiteral("model"),    QStringLiteral("data"),
            QStringLiteral("device"),   QStringLiteral("strategies"), QStringLiteral("memory"),
            QStringLiteral("training"), QStringLiteral("telemetry"), QStringLiteral("energy"),
            QStringLiteral("durations"), QStringLiteral("final")};
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
        for (int i = 0; i < m_data.memory.size(); ++i) {
            const auto& r = m_data.memory[i];
            m.categories << r.category;
            pred.x << i; pred.y << (r.predicted >= 0 ? r.predicted / 1048576.0 : 0.0);
            meas.x << i; meas.y << (r.peak >= 0 ? r.peak / 1048576.0 : 0.0);
            anyPred = anyPred || r.predicted >= 0;
        }
        if (anyPred) m.lines << pred;
        m.lines << meas;
        out << m;
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
    plot.setBackground(Qt::white);
    plot.plotLayout()->insertRow(0);
    QFont titleFont = plot.font();
    titleFont.setBold(true);
    titleFont.setPointSize(11);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, chart.title, titleFont));
    plot.xAxis->setLabel(chart.xLabel);
    plot.yAxis->setLabel(chart.yLabel);
    const auto& colors = palette();
    if (!chart.categories.isEmpty()) {
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (int i = 0; i < chart.categories.size(); ++i) ticker->addTick(i, chart.categories[i]);
        plot.xAxis->setTicker(ticker);
        plot.xAxis->setTickLabelRotation(30);
        plot.xAxis->setRange(-0.7, chart.categories.size() - 0.3);
        auto* group = new QCPBarsGroup(&plot);
        double maxY = 0;
        for (int i = 0; i < chart.lines.size(); ++i) {
            auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
            bars->setName(chart.lines[i].name);
            bars->setData(chart.lines[i].x, chart.lines[i].y);
            bars->setWidth(0.8 / qMax(1, int(chart.lines.size())));
            bars->setBrush(colors[i % colors.size()]);
            bars->setPen(QPen(colors[i % colors.size()].darker(130)));
            bars->setBarsGroup(group);
            for (double v : chart.lines[i].y) maxY = qMax(maxY, v);
        }
        plot.yAxis->setRange(0, maxY > 0 ? maxY * 1.15 : 1);
    } else {
        for (int i = 0; i < chart.lines.size(); ++i) {
            QCPGraph* g = plot.addGraph();
            g->setName(chart.lines[i].name);
            g->setData(chart.lines[i].x, chart.lines[i].y);
            g->setPen(QPen(colors[i % colors.size()], 1.6));
            if (chart.lines[i].x.size() < 40) g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        }
        plot.rescaleAxes();
        const QCPRange y = plot.yAxis->range();
        const double pad = y.size() > 0 ? y.size() * 0.06 : qMax(1e-3, std::abs(y.center()) * 0.1);
        plot.yAxis->setRange(y.lower - pad, y.upper + pad);
    }
    plot.legend->setVisible(chart.lines.size() > 1 || !chart.categories.isEmpty());
    plot.replot(QCustomPlot::rpImmediateRefresh);
    return plot.toPixmap(width, height).toImage();
}

QString ReportWriter::document(Target target) const {
    const RunInfo& run = m_data.run;
    const QJsonObject& cfg = run.config;
    QString h;
    auto section = [&](const QString& id, const QString& title) {
        h += QStringLiteral("<h2 id=\"%1\">%2</h2>\n").arg(id, esc(title));
    };
    auto note = [&](const QString& text) { h += QStringLiteral("<p class=\"note\"><i>%1</i></p>\n").arg(esc(text)); };
    const QVector<ReportChart> allCharts = charts();
    auto chartImg = [&](const QString& id) {
        for (const auto& c : allCharts)
            if (c.id == id) {
                const QString src = target == Target::Html
                                        ? QStringLiteral("data:image/png;base64,") +
                                              QString::fromLatin1(pngBytes(renderChart(c)).toBase64())
                                        : QStringLiteral("chart:") + id;
                h += QStringLiteral("<p><img src=\"%1\" alt=\"%2\" width=\"600\" /></p>\n").arg(src, esc(c.title));
                return true;
            }
        return false;
    };

    // ---- summary
    h += QStringLiteral("<h1>%1</h1>\n").arg(esc(tr("Run report: %1").arg(run.name)));
    section(QStringLiteral("summary"), tr("Summary"));
    h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
    h += kvRow(tr("Run"), QStringLiteral("#%1 %2").arg(run.id).arg(run.name));
    const QString statusText = run.status == QLatin1String("finished") ? tr("finished")
                               : run.status == QLatin1String("failed") ? tr("failed")
                               : run.status == QLatin1String("stopped") ? tr("stopped")
                                                                         : tr("running");
    h += kvRow(tr("Status"), statusText);
    if (!run.error.isEmpty()) h += kvRow(tr("Error"), run.error);
    h += kvRow(tr("Model"), run.modelName);
    h += kvRow(tr("Data"), run.data);
    h += kvRow(tr("Started"), QLocale().toString(run.created.toLocalTime(), QLocale::LongFormat));
    if (run.finished.isValid())
        h += kvRow(tr("Ended"), QLocale().toString(run.finished.toLocalTime(), QLocale::LongFormat));
    h += kvRow(tr("Report written"), QLocale().toString(QDateTime::currentDateTime(), QLocale::LongFormat));
    h += QStringLiteral("</table>\n");

    // ---- model
    section(QStringLiteral("model"), tr("Model"));
    QString specError;
    auto report = analyzeSpec(run.spec, &specError);
    if (report) {
        h += QStringLiteral("<p>%1</p>\n").arg(esc(tr("%1 layers, %2 trainable parameters, %3 of activations kept "
                                                     "for backward per sample (f32).")
                                                      .arg(report->layers.size())
                                                      .arg(QLocale().toString(qint64(report->total_params)))
                                                      .arg(bytesText(report->activation_bytes_per_sample))));
        h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"3\">\n<tr>");
        for (const QString& col : {tr("#"), tr("Path"), tr("Layer"), tr("Input"), tr("Output"), tr("Parameters"),
                                   tr("Activations / sample")})
            h += QStringLiteral("<th>%1</th>").arg(esc(col));
        h += QStringLiteral("</tr>\n");
        for (const auto& l : report->layers) {
            h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td align=\"right\">%6</td>"
                                "<td align=\"right\">%7</td></tr>\n")
                     .arg(l.index)
                     .arg(esc(QString(l.depth * 2, QChar(0x00A0)) + QString::fromStdString(l.path)),
                          esc(QString::fromStdString(l.label)), esc(shapeText(l.input_shape)),
                          esc(shapeText(l.output_shape)), QLocale().toString(qint64(l.params)),
                          esc(bytesText(l.activation_bytes_per_sample)));
        }
        h += QStringLiteral("</table>\n");
        if (!report->ok) note(QString::fromStdString(report->error));
    } else {
        note(specError);
    }

    // ---- data
    section(QStringLiteral("data"), tr("Data"));
    h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
    const std::pair<const char*, QString> dataKeys[] = {
        {"data", tr("Dataset")},          {"train_limit", tr("Training samples limit (0: all)")},
        {"test_limit", tr("Test samples limit (0: all)")}, {"batch", tr("Batch size")},
        {"epochs", tr("Epochs")},         {"steps", tr("Steps (0: by epochs)")},
        {"seed", tr("Seed")},             {"model_source", tr("Model source")}};
    for (const auto& [key, label] : dataKeys)
        if (cfg.contains(QLatin1String(key))) h += kvRow(label, jsonValueText(cfg.value(QLatin1String(key))));
    h += kvRow(tr("Samples trained"), QLocale().toString(samplesTrained()));
    h += QStringLiteral("</table>\n");

    // ---- device and versions
    section(QStringLiteral("device"), tr("Device and versions"));
    h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
    h += kvRow(tr("Device"), run.device.isEmpty() ? cfg.value(QStringLiteral("device")).toString() : run.device);
    std::map<int, QString> gpus;
    for (const auto& r : m_data.telemetry)
        if (r.gpu >= 0) gpus[r.gpu] = r.gpuName;
    for (auto& [i, name] : gpus) h += kvRow(tr("GPU %1").arg(i), name);
    if (cfg.contains(QStringLiteral("threads"))) h += kvRow(tr("CPU threads (0: all)"), jsonValueText(cfg.value(QStringLiteral("threads"))));
    h += kvRow(tr("Headroom"), QStringLiteral(HEADROOM_VERSION));
    h += kvRow(tr("Qt"), QString::fromLatin1(qVersion()));
    h += kvRow(tr("Operating system"), QSysInfo::prettyProductName());
    h += kvRow(tr("Host"), QSysInfo::machineHostName());
    h += QStringLiteral("</table>\n");

    // ---- strategies
    section(QStringLiteral("strategies"), tr("Strategies and optimizer"));
    auto objTable = [&](const QString& title, const QJsonObject& o) {
        if (o.isEmpty()) return;
        h += QStringLiteral("<h3>%1</h3>\n<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n").arg(esc(title));
        for (auto it = o.begin(); it != o.end(); ++it) h += kvRow(it.key(), jsonValueText(it.value()));
        h += QStringLiteral("</table>\n");
    };
    objTable(tr("Memory strategies"), cfg.value(QStringLiteral("strategy")).toObject());
    objTable(tr("Optimizer"), cfg.value(QStringLiteral("optimizer")).toObject());
    objTable(tr("Learning-rate schedule"), cfg.value(QStringLiteral("schedule")).toObject());
    if (!cfg.contains(QStringLiteral("strategy")) && !cfg.contains(QStringLiteral("optimizer")))
        note(tr("The run's configuration holds no strategy or optimizer settings."));

    // ---- memory
    section(QStringLiteral("memory"), tr("Memory: predicted and measured"));
    if (m_data.memory.isEmpty()) {
        note(tr("No memory figures were recorded for this run."));
    } else {
        bool anyPred = false;
        for (const auto& r : m_data.memory) anyPred = anyPred || r.predicted >= 0;
        if (!anyPred) note(tr("Prediction not available: the run was started without a memory plan; measured "
                              "figures are shown alone."));
        h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n<tr>");
        for (const QString& col : {tr("Category"), tr("Predicted"), tr("Measured peak"), tr("At total peak"),
                                   tr("Measured − predicted")})
            h += QStringLiteral("<th>%1</th>").arg(esc(col));
        h += QStringLiteral("</tr>\n");
        qint64 tp = 0, tm = 0, ta = 0;
        for (const auto& r : m_data.memory) {
            const QString diff = r.predicted >= 0 && r.peak >= 0
                                     ? (r.peak >= r.predicted ? QStringLiteral("+") + bytesText(r.peak - r.predicted)
                                                              : QStringLiteral("−") + bytesText(r.predicted - r.peak))
                                     : QStringLiteral("—");
            h += QStringLiteral("<tr><td>%1</td><td align=\"right\">%2</td><td align=\"right\">%3</td>"
                                "<td align=\"right\">%4</td><td align=\"right\">%5</td></tr>\n")
                     .arg(esc(r.category), esc(bytesText(r.predicted)), esc(bytesText(r.peak)), esc(bytesText(r.atPeak)),
                          esc(diff));
            tp += qMax<qint64>(0, r.predicted);
            tm += qMax<qint64>(0, r.peak);
            ta += qMax<qint64>(0, r.atPeak);
        }
        h += QStringLiteral("<tr><th align=\"left\">%1</th><th align=\"right\">%2</th><th align=\"right\">%3</th>"
                            "<th align=\"right\">%4</th><th></th></tr>\n")
                 .arg(esc(tr("Total")), esc(anyPred ? bytesText(tp) : QStringLiteral("—")), esc(bytesText(tm)),
                      esc(bytesText(ta)));
        h += QStringLiteral("</table>\n");
        const qint64 peak = run.finalMetrics.value(QStringLiteral("peak_bytes")).toInteger(-1);
        if (peak >= 0)
            h += QStringLiteral("<p>%1</p>\n").arg(esc(tr("Peak of all categories together: %1 (phase %2, step %3).")
                                                          .arg(bytesText(peak))
                                                          .arg(run.finalMetrics.value(QStringLiteral("peak_phase")).toString())
                                                          .arg(run.finalMetrics.value(QStringLiteral("peak_step")).toInteger(-1))));
        chartImg(QStringLiteral("memory_categories"));
    }

    // ---- training curves
    section(QStringLiteral("training"), tr("Loss, accuracy and throughput"));
    bool anyTrain = false;
    for (const char* id : {"loss", "accuracy", "throughput"}) anyTrain = chartImg(QLatin1String(id)) || anyTrain;
    if (!anyTrain) note(tr("No training steps were recorded."));
    if (!m_data.epochs.isEmpty()) {
        h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"3\">\n<tr>");
        for (const QString& col : {tr("Epoch"), tr("Train loss"), tr("Train accuracy"), tr("Test loss"),
                                   tr("Test accuracy"), tr("Seconds"), tr("Images/s")})
            h += QStringLiteral("<th>%1</th>").arg(esc(col));
        h += QStringLiteral("</tr>\n");
        for (const auto& e : m_data.epochs)
            h += QStringLiteral("<tr><td>%1</td><td>%2</td><td>%3</td><td>%4</td><td>%5</td><td>%6</td><td>%7</td></tr>\n")
                     .arg(e.epoch)
                     .arg(numText(e.trainLoss), numText(e.trainAccuracy), numText(e.testLoss), numText(e.testAccuracy),
                          numText(e.seconds), numText(e.imagesPerSecond));
        h += QStringLiteral("</table>\n");
    }

    // ---- telemetry
    section(QStringLiteral("telemetry"), tr("Power, utilisation and memory over time"));
    bool anyTel = false;
    for (const char* id : {"power", "utilization", "device_memory"}) anyTel = chartImg(QLatin1String(id)) || anyTel;
    if (m_data.telemetry.isEmpty())
        note(tr("No telemetry was recorded for this run."));
    else if (gpus.empty())
        note(tr("No GPU telemetry: no NVIDIA driver was found while the run trained; host figures are shown."));
    else if (!anyTel)
        note(tr("Telemetry holds no plottable figures."));

    // ---- energy
    section(QStringLiteral("energy"), tr("Energy"));
    const ReportEnergy en = energy();
    if (!en.available) {
        note(tr("Energy not measured: NVML gave no energy or power figures for this run."));
    } else {
        h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
        h += kvRow(tr("Energy used by the GPUs"), tr("%1 J (%2 Wh)").arg(numText(en.joules, 6), numText(en.joules / 3600.0, 4)));
        h += kvRow(tr("Energy per training sample"), std::isfinite(en.joulesPerSample)
                                                          ? tr("%1 J").arg(numText(en.joulesPerSample, 4))
                                                          : QStringLiteral("—"));
        h += QStringLiteral("</table>\n");
        if (en.fromPowerIntegral) note(tr("Estimated by integrating sampled power draw over time (the GPU has no energy counter)."));
    }

    // ---- durations
    section(QStringLiteral("durations"), tr("Durations"));
    h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
    if (run.finished.isValid())
        h += kvRow(tr("Wall-clock time"), secondsText(run.created.msecsTo(run.finished) / 1000.0));
    const double trainSeconds = run.finalMetrics.value(QStringLiteral("seconds")).toDouble(qQNaN());
    h += kvRow(tr("Training time"), secondsText(std::isfinite(trainSeconds) ? trainSeconds
                                                 : (m_data.steps.isEmpty() ? qQNaN() : m_data.steps.last().elapsedSeconds)));
    if (!m_data.steps.isEmpty()) {
        double sum = 0;
        int n = 0;
        for (const auto& s : m_data.steps)
            if (std::isfinite(s.stepSeconds)) { sum += s.stepSeconds; ++n; }
        h += kvRow(tr("Steps"), QLocale().toString(qint64(m_data.steps.size())));
        if (n) h += kvRow(tr("Mean step time"), tr("%1 ms").arg(numText(1000.0 * sum / n, 4)));
    }
    for (const auto& e : m_data.epochs) h += kvRow(tr("Epoch %1").arg(e.epoch), secondsText(e.seconds));
    h += QStringLiteral("</table>\n");

    // ---- final metrics
    section(QStringLiteral("final"), tr("Final metrics"));
    if (run.finalMetrics.isEmpty()) {
        note(run.status == QLatin1String("running") ? tr("The run has not ended.") : tr("No final metrics were recorded."));
    } else {
        const std::pair<const char*, QString> labels[] = {
            {"test_accuracy", tr("Test accuracy")},   {"test_loss", tr("Test loss")},
            {"train_accuracy", tr("Train accuracy")}, {"train_loss", tr("Train loss")},
            {"steps", tr("Steps")},                   {"epochs_completed", tr("Epochs completed")},
            {"images_per_second", tr("Images per second")}, {"param_count", tr("Parameters")},
            {"seconds", tr("Seconds")}};
        h += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"4\">\n");
        QSet<QString> shown;
        for (const auto& [key, label] : labels)
            if (run.finalMetrics.contains(QLatin1String(key))) {
                h += kvRow(label, jsonValueText(run.finalMetrics.value(QLatin1String(key))));
                shown.insert(QLatin1String(key));
            }
        for (auto it = run.finalMetrics.begin(); it != run.finalMetrics.end(); ++it)
            if (!shown.contains(it.key()))
                h += kvRow(it.key(), it.key().endsWith(QLatin1String("bytes")) ? bytesText(it.value().toInteger(-1))
                                                                               : jsonValueText(it.value()));
        h += QStringLiteral("</table>\n");
    }
    return h;
}

QString ReportWriter::html() const {
    QString h;
    h += QStringLiteral("<!DOCTYPE html>\n<html lang=\"%1\">\n<head>\n<meta charset=\"utf-8\" />\n<title>%2</title>\n")
             .arg(QLocale().bcp47Name(), esc(tr("Run report: %1").arg(m_data.run.name)));
    h += QStringLiteral(
        "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}"
        "table{border-collapse:collapse;margin:0.5em 0}th,td{border:1px solid #bbb;padding:3px 8px;font-size:90%}"
        "th{background:#f0f0f0}h2{border-bottom:2px solid #1f77b4;padding-bottom:2px;margin-top:1.6em}"
        "img{max-width:100%;height:auto}.note{color:#555}</style>\n</head>\n<body>\n");
    h += document(Target::Html);
    h += QStringLiteral("<p class=\"note\"><small>%1</small></p>\n</body>\n</html>\n")
             .arg(esc(tr("Written by Headroom %1.").arg(QStringLiteral(HEADROOM_VERSION))));
    return h;
}

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
        writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
        writer.setResolution(150);
        QTextDocument doc;
        QFont font = doc.defaultFont();
        font.setPointSize(9);
        doc.setDefaultFont(font);
        for (const auto& c : charts())
            doc.addResource(QTextDocument::ImageResource, QUrl(QStringLiteral("chart:") + c.id),
                            renderChart(c, 900, 420));
        doc.setHtml(QStringLiteral("<html><body>") + document(Target::Pdf) + QStringLiteral("</body></html>"));
        doc.print(&writer);
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
