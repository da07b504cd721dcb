// ReportWriter: the document, from the template (templates/) and the run's data, for HTML and for the PDF.
#include "report/report_writer.h"

#include <QBuffer>
#include <QDateTime>
#include <QDir>
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
#include "memory/step_timeline.h"
#include "nn/model_spec.h"
#include "report/report_writer_detail.h"
#include "strategy/tp_head.h"

namespace hrapp {

using namespace report_detail;

// ---- the template's data ------------------------------------------------------------------------
namespace {

namespace mu = kainjow::mustache;

std::string S(const QString& s) { return s.toStdString(); }

QString percentText(double fraction, int decimals = 1) {
    if (!std::isfinite(fraction)) return QStringLiteral("—");
    return ReportWriter::tr("%1 %").arg(QLocale().toString(100.0 * fraction, 'f', decimals));
}

QString countText(qint64 n) { return QLocale().toString(n); }

// A what-if's transform in words ("50 % pruned, int8"), from final_metrics.compression.
QString compressionText(const QJsonObject& wi) {
    QStringList parts;
    const double prune = wi.value(QStringLiteral("prune")).toDouble(0);
    const QString q = wi.value(QStringLiteral("quantize")).toString();
    if (prune > 0) parts << ReportWriter::tr("%1 pruned").arg(percentText(prune));
    if (q == QLatin1String("int8")) parts << ReportWriter::tr("int8 (a scale per output row)");
    if (q == QLatin1String("int4"))
        parts << ReportWriter::tr("int4 (a scale per %1 values)").arg(wi.value(QStringLiteral("group")).toInteger(64));
    if (q == QLatin1String("nf4"))
        parts << ReportWriter::tr("nf4 (NormalFloat, a scale per %1 values, the scales quantised too)")
                     .arg(wi.value(QStringLiteral("group")).toInteger(64));
    return parts.join(QStringLiteral(", "));
}

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


// One document being filled: the run, what the parts share (charts, the spec's analysis, energy), the
// template's data and the detail sections so far. ReportWriter::document builds it and calls one
// function per part of the report, in the order of the page.
struct Doc {
    const ReportWriter& w;
    const ReportData& data;
    bool pdf = false;  // charts as "chart:" resources (the PDF) instead of data URIs (HTML)
    QVector<ReportChart> allCharts;
    int chartWidth = 900;
    std::optional<hr::SpecReport> spec;
    QString specError;
    qint64 params = -1;
    ReportEnergy en;
    QString statusText;
    mu::data d;
    mu::list sections;

    QString chartSrc(const QString& id, QString* alt) const {
        for (const auto& c : allCharts)
            if (c.id == id) {
                *alt = c.title;
                if (pdf) return QStringLiteral("chart:") + id;
                return QStringLiteral("data:image/png;base64,") +
                       QString::fromLatin1(pngBytes(ReportWriter::renderChart(c)).toBase64());
            }
        return {};
    }
    Unit chartUnit(const QString& id) const {
        Unit u;
        u.chartSrc = chartSrc(id, &u.chartAlt);
        u.chartWidth = chartWidth;
        return u;
    }
    // one section of the details: its units (empty ones left out), the heading on the first
    void addSection(const QString& id, const QString& title, QVector<Unit> units) {
        units.erase(std::remove_if(units.begin(), units.end(), [](const Unit& u) { return u.empty(); }), units.end());
        if (units.isEmpty()) units.push_back(Unit{});
        units.front().headingId = id;
        units.front().heading = title;
        mu::list l;
        for (const Unit& u : units) l.push_back(unitData(u));
        sections.push_back(mu::object{{"units", l}});
    }
};

// the title, the subtitle (status, model, data, device, date) and the error, if any
void titlePart(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const qint64 params = s.params;
    [[maybe_unused]] const QString& statusText = s.statusText;
    {
    s.d.set("html", !s.pdf);
    s.d.set("lang", S(QLocale().bcp47Name()));
    s.d.set("title", S(ReportWriter::tr("Run report: %1").arg(run.name)));
    {
        QStringList sub;
        sub << statusText;
        sub << (params > 0 ? ReportWriter::tr("%1 (%2 parameters) on %3").arg(run.modelName, countText(params), datasetName(run.data))
                           : ReportWriter::tr("%1 on %2").arg(run.modelName, datasetName(run.data)));
        if (!run.device.isEmpty()) sub << run.device;
        sub << QLocale().toString(run.created.toLocalTime(), QLocale::ShortFormat);
        s.d.set("subtitle", S(sub.join(QStringLiteral(" · "))));
    }
    if (!run.error.isEmpty())
        s.d.set("error", mu::object{{"label", S(ReportWriter::tr("Error"))}, {"text", S(run.error)}});
    else
        s.d.set("error", false);

    }
}

// the outcome, on the first page: the figures, the loss chart
void outcomePart(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& cfg = s.data.run.config;
    [[maybe_unused]] const QJsonObject& fm = s.data.run.finalMetrics;
    [[maybe_unused]] const int chartWidth = s.chartWidth;
    [[maybe_unused]] const ReportEnergy& en = s.en;
    {
    s.d.set("outcomeTitle", S(ReportWriter::tr("Outcome")));
    struct Figure {
        QString label, value, detail;
    };
    QVector<Figure> figures;
    {
        double acc = fm.value(QStringLiteral("test_accuracy")).toDouble(qQNaN());
        double loss = fm.value(QStringLiteral("test_loss")).toDouble(qQNaN());
        if (!std::isfinite(acc) && !s.data.epochs.isEmpty()) acc = s.data.epochs.last().testAccuracy;
        if (!std::isfinite(loss) && !s.data.epochs.isEmpty()) loss = s.data.epochs.last().testLoss;
        const int epochsDone = int(fm.value(QStringLiteral("epochs_completed")).toInteger(s.data.epochs.size()));
        const QString after = epochsDone > 0 ? ReportWriter::tr("after epoch %1").arg(epochsDone) : ReportWriter::tr("at the end of the run");
        figures.push_back({ReportWriter::tr("Test accuracy"), percentText(acc), std::isfinite(acc) ? after : ReportWriter::tr("not evaluated")});
        figures.push_back({ReportWriter::tr("Test loss"), numText(loss, 4), std::isfinite(loss) ? after : ReportWriter::tr("not evaluated")});
        double ips = fm.value(QStringLiteral("images_per_second")).toDouble(qQNaN());
        double stepSum = 0;
        int stepN = 0;
        for (const auto& st : s.data.steps)
            if (std::isfinite(st.stepSeconds) && st.stepSeconds > 0) stepSum += st.stepSeconds, ++stepN;
        figures.push_back({ReportWriter::tr("Throughput"), std::isfinite(ips) && ips > 0 ? ReportWriter::tr("%1 images/s").arg(numText(ips, 3)) : QStringLiteral("—"),
                           stepN ? ReportWriter::tr("mean step %1 ms").arg(numText(1000.0 * stepSum / stepN, 3)) : QString()});
        const double wall = run.finished.isValid() ? run.created.msecsTo(run.finished) / 1000.0 : qQNaN();
        const double trainSeconds = fm.value(QStringLiteral("seconds")).toDouble(qQNaN());
        figures.push_back({ReportWriter::tr("Wall time"), secondsText(std::isfinite(wall) ? wall : trainSeconds),
                           std::isfinite(trainSeconds) ? ReportWriter::tr("%1 in the trainer").arg(secondsText(trainSeconds))
                                                       : QString()});
        // peak memory against what the device had
        const qint64 peak = fm.value(QStringLiteral("peak_bytes")).toInteger(-1);
        const qint64 limit = cfg.value(QStringLiteral("memory_limit")).toInteger(0);
        qint64 capacity = 0;
        for (const auto& m : s.data.memorySamples) capacity = qMax(capacity, m.deviceCapacity);
        if (capacity <= 0)
            for (const auto& t : s.data.telemetry) capacity = qMax(capacity, t.gpu >= 0 ? t.gpuMemoryTotal : qint64(-1));
        const bool onCpu = run.device.startsWith(QLatin1String("cpu"));
        if (capacity <= 0 && onCpu)
            for (const auto& t : s.data.telemetry) capacity = qMax(capacity, t.ramTotal);
        QString peakDetail;
        if (peak >= 0 && limit > 0)
            peakDetail = ReportWriter::tr("%1 of the memory limit of %2").arg(percentText(double(peak) / double(limit)), bytesText(limit));
        else if (peak >= 0 && capacity > 0)
            peakDetail = ReportWriter::tr("%1 of the device's %2").arg(percentText(double(peak) / double(capacity), 2), bytesText(capacity));
        else if (peak >= 0)
            peakDetail = ReportWriter::tr("device capacity not recorded");
        figures.push_back({ReportWriter::tr("Peak memory"), bytesText(peak), peakDetail});
        // predicted against measured
        qint64 predicted = 0;
        bool anyPred = false;
        for (const auto& r : s.data.memory)
            if (r.predicted >= 0) predicted += r.predicted, anyPred = true;
        QString predValue = QStringLiteral("—"), predDetail = ReportWriter::tr("no prediction recorded");
        if (anyPred) {
            predValue = bytesText(predicted);
            if (peak > 0) {
                const qint64 diff = peak - predicted;
                predDetail = diff == 0 ? ReportWriter::tr("measured %1: equal to the byte").arg(bytesText(peak))
                                       : ReportWriter::tr("measured %1 (%2%3)")
                                             .arg(bytesText(peak), diff > 0 ? QStringLiteral("+") : QStringLiteral("−"),
                                                  percentText(std::abs(double(diff)) / double(predicted), 2));
            }
        }
        figures.push_back({ReportWriter::tr("Predicted peak"), predValue, predDetail});
        // --prune/--quantize: the what-if's accuracy (its section in the details has the rest)
        const QJsonObject wi = fm.value(QStringLiteral("compression")).toObject();
        if (!wi.isEmpty() && wi.value(QStringLiteral("test_tokens")).isDouble())  // a language model: its loss per token
            figures.push_back({ReportWriter::tr("Validation loss pruned/quantised"),
                               numText(wi.value(QStringLiteral("test_loss_after")).toDouble(qQNaN()), 5),
                               ReportWriter::tr("%1; weights %2 instead of %3")
                                   .arg(compressionText(wi), bytesText(wi.value(QStringLiteral("weights_bytes_after")).toInteger(-1)),
                                        bytesText(wi.value(QStringLiteral("weights_bytes")).toInteger(-1)))});
        else if (!wi.isEmpty())
            figures.push_back({ReportWriter::tr("Accuracy pruned/quantised"),
                               percentText(wi.value(QStringLiteral("test_accuracy_after")).toDouble(qQNaN())),
                               ReportWriter::tr("%1; weights %2 instead of %3")
                                   .arg(compressionText(wi), bytesText(wi.value(QStringLiteral("weights_bytes_after")).toInteger(-1)),
                                        bytesText(wi.value(QStringLiteral("weights_bytes")).toInteger(-1)))});
        if (en.available)
            figures.push_back({ReportWriter::tr("Energy"), ReportWriter::tr("%1 J").arg(numText(en.joules, 5)),
                               std::isfinite(en.joulesPerSample)
                                   ? ReportWriter::tr("%1 Wh, %2 J per sample").arg(numText(en.joules / 3600.0, 3), numText(en.joulesPerSample, 3))
                                   : ReportWriter::tr("%1 Wh").arg(numText(en.joules / 3600.0, 3))});
        else
            figures.push_back({ReportWriter::tr("Energy"), QStringLiteral("—"), ReportWriter::tr("not measured (no NVML figures)")});
        const qint64 steps = fm.value(QStringLiteral("steps")).toInteger(s.data.steps.isEmpty() ? 0 : s.data.steps.last().step);
        figures.push_back({ReportWriter::tr("Optimizer steps"), countText(steps),
                           ReportWriter::tr("%1 samples, batch %2").arg(countText(s.w.samplesTrained()))
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
        s.d.set("figureRows", rows);
        QString alt;
        const QString src = s.chartSrc(QStringLiteral("loss"), &alt);
        if (src.isEmpty())
            s.d.set("lossChart", false);
        else
            s.d.set("lossChart", mu::object{{"src", S(src)}, {"alt", S(alt)}, {"width", S(QString::number(chartWidth))}});
        QStringList notes;
        if (src.isEmpty()) notes << ReportWriter::tr("No training steps were recorded.");
        s.d.set("outcomeNotes", texts(notes));
    }

    }
}

// training curves and epochs
void trainingSection(Doc& s) {
    [[maybe_unused]] const QVector<ReportChart>& allCharts = s.allCharts;
    {
        QVector<Unit> units;
        Unit first = s.chartUnit(QStringLiteral("accuracy"));
        if (allCharts.isEmpty() || (s.data.steps.isEmpty() && s.data.epochs.isEmpty()))
            first.notes << ReportWriter::tr("No training steps were recorded.");
        else
            first.paragraphs << ReportWriter::tr("The loss curve is on the first page.");
        units << first << s.chartUnit(QStringLiteral("throughput"));
        if (!s.data.epochs.isEmpty()) {
            Unit t;
            t.subheading = ReportWriter::tr("Per epoch");
            for (const QString& col : {ReportWriter::tr("Epoch"), ReportWriter::tr("Train loss"), ReportWriter::tr("Train accuracy"), ReportWriter::tr("Test loss"),
                                       ReportWriter::tr("Test accuracy"), ReportWriter::tr("Time"), ReportWriter::tr("Images/s")})
                t.header.push_back({col, false, false});
            for (int k = 1; k < t.header.size(); ++k) t.header[k].num = true;
            for (const auto& e : s.data.epochs)
                t.rows.push_back({{QString::number(e.epoch), false, false},
                                  {numText(e.trainLoss), true, false},
                                  {percentText(e.trainAccuracy), true, false},
                                  {numText(e.testLoss), true, false},
                                  {percentText(e.testAccuracy), true, false},
                                  {secondsText(e.seconds), true, false},
                                  {numText(e.imagesPerSecond), true, false}});
            units << t;
        }
        s.addSection(QStringLiteral("training"), ReportWriter::tr("Loss, accuracy and throughput"), units);
    }

}

// memory
void memorySection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& fm = s.data.run.finalMetrics;
    {
        QVector<Unit> units;
        Unit t;
        if (s.data.memory.isEmpty()) {
            t.notes << ReportWriter::tr("No memory figures were recorded for this run.");
        } else {
            bool anyPred = false;
            for (const auto& r : s.data.memory) anyPred = anyPred || r.predicted >= 0;
            t.paragraphs << ReportWriter::tr("The planner's prediction at the start against the memory ledger's measurement: each "
                               "category's own peak, and its share when all of them together peaked.");
            if (!anyPred)
                t.notes << ReportWriter::tr("Prediction not available: the run was started without a memory plan; measured "
                              "figures are shown alone.");
            for (const QString& col : {ReportWriter::tr("Category"), ReportWriter::tr("Predicted"), ReportWriter::tr("Measured peak"), ReportWriter::tr("At total peak"),
                                       ReportWriter::tr("Measured − predicted")})
                t.header.push_back({col, col != ReportWriter::tr("Category"), false});
            qint64 tp = 0, tm = 0, ta = 0;
            for (const auto& r : s.data.memory) {
                if (r.predicted <= 0 && r.peak <= 0 && r.atPeak <= 0) continue;  // an unused category
                const QString diff = r.predicted >= 0 && r.peak >= 0
                                         ? (r.peak == r.predicted ? QStringLiteral("0")
                                            : r.peak > r.predicted ? QStringLiteral("+") + bytesText(r.peak - r.predicted)
                                                                   : QStringLiteral("−") + bytesText(r.predicted - r.peak))
                                         : QStringLiteral("—");
                QString name = r.category;
                try {
                    name = categoryText(hr::category_from_name(r.category.toStdString()));
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
            t.rows.push_back({{ReportWriter::tr("Total"), false, true},
                              {anyPred ? bytesText(tp) : QStringLiteral("—"), true, true},
                              {bytesText(tm), true, true},
                              {bytesText(ta), true, true},
                              {QString(), true, true}});
            const qint64 peak = fm.value(QStringLiteral("peak_bytes")).toInteger(-1);
            if (peak >= 0) {
                const qint64 step = fm.value(QStringLiteral("peak_step")).toInteger(-1);
                const QString phase = fm.value(QStringLiteral("peak_phase")).toString();
                t.paragraphs << (step >= 0 ? ReportWriter::tr("All categories together peaked at %1 during %2 of step %3.")
                                                 .arg(bytesText(peak), phaseText(phase))
                                                 .arg(step)
                                           : ReportWriter::tr("All categories together peaked at %1 during %2.")
                                                 .arg(bytesText(peak), phaseText(phase.isEmpty() ? QStringLiteral("setup")
                                                                                                 : phase)));
            }
            // inside one step (docs/timeline.md): when the step's own peak happens and what is alive then
            if (fm.contains(QStringLiteral("timeline"))) {
                try {
                    const hr::StepTimeline tl = hr::step_timeline_peak_from_json(nlohmann::json::parse(
                        QJsonDocument(fm.value(QStringLiteral("timeline")).toObject()).toJson().toStdString()));
                    if (!tl.empty())
                        t.paragraphs << ReportWriter::tr("Inside step %1: %2.").arg(tl.step).arg(hrapp::peakText(tl));
                } catch (const std::exception&) {  // a record written otherwise: no sentence
                }
            }
        }
        units << t << s.chartUnit(QStringLiteral("memory_categories"));
        // a run on several ranks: each rank's share, predicted against measured and against the OS
        const QJsonObject dist = fm.value(QStringLiteral("distributed")).toObject();
        if (dist.value(QStringLiteral("world_size")).toInt(1) > 1) {
            Unit r;
            r.subheading = ReportWriter::tr("Ranks");
            const int world = dist.value(QStringLiteral("world_size")).toInt();
            const double bytes = dist.value(QStringLiteral("communication_bytes_per_step")).toDouble(qQNaN());
            const double secs = dist.value(QStringLiteral("communication_seconds_per_step")).toDouble(qQNaN());
            const QString stage = dist.value(QStringLiteral("stage")).toString();
            const int tpHead = dist.value(QStringLiteral("tp_head")).toInt(1);
            // the layout across the ranks: what each rank holds of the model (docs/distributed.md)
            std::int64_t headOutputs = 0;
            if (tpHead > 1) {
                try {
                    headOutputs = hr::tp_head_outputs(
                        hr::model_spec_from_json(nlohmann::json::parse(
                            QJsonDocument(s.data.run.config.value(QStringLiteral("model")).toObject()).toJson().toStdString())),
                        tpHead);
                } catch (const std::exception&) {  // a record without its model: the layout without the columns
                }
            }
            const QString bytesPerStep = std::isfinite(bytes) ? bytesText(qint64(bytes)) : QStringLiteral("—");
            const QString waitPerStep = std::isfinite(secs) ? ReportWriter::tr("%1 ms").arg(secs * 1e3, 0, 'f', 2) : QStringLiteral("—");
            // pipeline stages: the layers of each (stage s on rank s)
            std::vector<int> stageFirst{0};
            for (const QJsonValue v : dist.value(QStringLiteral("pipeline_layers")).toArray())
                stageFirst.push_back(stageFirst.back() + v.toInt());
            const bool pipeline = stageFirst.size() > 1;
            // K stages x D data-parallel replicas: rank r is stage r / D of replica r % D
            const int stages = static_cast<int>(stageFirst.size()) - 1;
            // (a split head's T x D alike: rank r holds head part r / D of replica r % D)
            // (K stages x a head split over T ranks: rank r is stage r / T, head part r % T of the last stage)
            const bool stagesTimesHead = pipeline && tpHead > 1 && world == stages * tpHead;
            const int replicas = stagesTimesHead                                   ? 1
                                 : pipeline && stages > 0 && world % stages == 0 ? world / stages
                                 : tpHead > 1 && world % tpHead == 0       ? world / tpHead
                                                                           : 1;
            if (stagesTimesHead)
                r.paragraphs << ReportWriter::tr("%1 pipeline stages of consecutive layers, each on %2 ranks (%3 ranks): the "
                                                 "last stage's output columns are split over its ranks, the earlier "
                                                 "stages' ranks run the same rows, every rank on the whole batch in "
                                                 "micro-batches (1F1B schedule). Each rank handed its communicator %4 per "
                                                 "training step and spent %5 per step waiting on communication (rank 0's "
                                                 "figures).")
                                    .arg(stages)
                                    .arg(tpHead)
                                    .arg(QString::number(world), bytesPerStep, waitPerStep);
            else if (pipeline && replicas > 1)
                r.paragraphs << ReportWriter::tr("%1 pipeline stages of consecutive layers times %2 data-parallel replicas "
                                                 "(%3 ranks): each replica takes its share of the batch through its "
                                                 "stages in micro-batches (1F1B schedule), and the replicas of a stage "
                                                 "sum its gradients before the update. Each rank handed its communicator "
                                                 "%4 per training step (activations and their gradients, and "
                                                 "the gradients' all-reduce) and spent %5 per step waiting on "
                                                 "communication (rank 0's figures).")
                                    .arg(stages)
                                    .arg(replicas)
                                    .arg(QString::number(world), bytesPerStep, waitPerStep);
            else if (pipeline)
                r.paragraphs << ReportWriter::tr("%1 pipeline stages of consecutive layers, one per rank, each on the whole "
                                                 "batch in micro-batches (1F1B schedule). Each rank handed its communicator "
                                                 "%2 per training step (activations and their gradients) and "
                                                 "spent %3 per step waiting on communication (rank 0's figures).")
                                    .arg(QString::number(world), bytesPerStep, waitPerStep);
            else if (tpHead > 1 && replicas > 1)
                r.paragraphs << ReportWriter::tr("A tensor-parallel head over %1 ranks times %2 data-parallel replicas (%3 "
                                                 "ranks): in each replica the last layer's output columns are split over "
                                                 "its ranks, each trains the rest of the model whole on the replica's share "
                                                 "of the batch, and the replicas sum their gradients before the update. "
                                                 "Each rank handed its communicator %4 per step and spent %5 per step "
                                                 "waiting on communication (rank 0's figures).")
                                    .arg(tpHead)
                                    .arg(replicas)
                                    .arg(QString::number(world), bytesPerStep, waitPerStep);
            else if (tpHead > 1)
                r.paragraphs << ReportWriter::tr("%1 ranks with a tensor-parallel head: the last layer's output columns are "
                                                 "split over the ranks, each trains the rest of the model whole on the whole "
                                                 "batch. Each rank handed its communicator %2 per step and spent %3 per step "
                                                 "waiting on communication (rank 0's figures).")
                                    .arg(QString::number(world), bytesPerStep, waitPerStep);
            else
                r.paragraphs << ReportWriter::tr("%1 ranks, sharding stage %2. Each rank handed its communicator %3 per step and spent "
                                   "%4 per step waiting on communication (rank 0's figures).")
                                    .arg(QString::number(world), stage, bytesPerStep, waitPerStep);
            auto layoutOf = [&](int rank) -> QString {
                if (stagesTimesHead && rank < world) {
                    const std::size_t st = static_cast<std::size_t>(rank / tpHead);
                    if (static_cast<int>(st) + 1 < stages || headOutputs <= 0)
                        return ReportWriter::tr("stage %1: layers %2–%3").arg(st).arg(stageFirst[st]).arg(stageFirst[st + 1] - 1);
                    const hr::TpHeadSlice sl = hr::tp_head_slice(headOutputs, tpHead, rank % tpHead);
                    return ReportWriter::tr("stage %1: layers %2–%3, head columns %4–%5 of %6")
                        .arg(st)
                        .arg(stageFirst[st])
                        .arg(stageFirst[st + 1] - 1)
                        .arg(sl.first)
                        .arg(sl.first + sl.count - 1)
                        .arg(headOutputs);
                }
                if (pipeline && rank / replicas + 1 < static_cast<int>(stageFirst.size())) {
                    const std::size_t st = static_cast<std::size_t>(rank / replicas);
                    if (replicas > 1)
                        return ReportWriter::tr("stage %1 of replica %2: layers %3–%4")
                            .arg(st)
                            .arg(rank % replicas)
                            .arg(stageFirst[st])
                            .arg(stageFirst[st + 1] - 1);
                    return ReportWriter::tr("stage %1: layers %2–%3").arg(st).arg(stageFirst[st]).arg(stageFirst[st + 1] - 1);
                }
                if (tpHead > 1) {
                    if (headOutputs <= 0) return ReportWriter::tr("a slice of the head");
                    const hr::TpHeadSlice sl = hr::tp_head_slice(headOutputs, tpHead, rank / replicas);
                    if (replicas > 1)
                        return ReportWriter::tr("head columns %1–%2 of %3, replica %4")
                            .arg(sl.first)
                            .arg(sl.first + sl.count - 1)
                            .arg(headOutputs)
                            .arg(rank % replicas);
                    return ReportWriter::tr("head columns %1–%2 of %3")
                        .arg(sl.first)
                        .arg(sl.first + sl.count - 1)
                        .arg(headOutputs);
                }
                if (stage == QLatin1String("zero1")) return ReportWriter::tr("1/%1 of the optimizer state").arg(world);
                if (stage == QLatin1String("zero2"))
                    return ReportWriter::tr("1/%1 of the optimizer state and gradients").arg(world);
                if (stage == QLatin1String("zero3"))
                    return ReportWriter::tr("1/%1 of the parameters, gradients and optimizer state").arg(world);
                return ReportWriter::tr("the whole model");
            };
            r.notes << ReportWriter::tr("Measured is each rank's memory ledger at its peak; resident is the rank's process at its "
                          "peak as the operating system counts it (the ledger's host side, the runtime, the data and "
                          "the libraries).");
            for (const QString& col : {ReportWriter::tr("Rank"), ReportWriter::tr("Holds"), ReportWriter::tr("Batch"), ReportWriter::tr("Predicted"), ReportWriter::tr("Measured peak"), ReportWriter::tr("Resident peak (OS)")})
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
                                  {layoutOf(i), false, false},
                                  {i < batch.size() ? QString::number(batch[i].toInteger()) : QStringLiteral("—"), true, false},
                                  {cell(predicted, i), true, false},
                                  {cell(measured, i), true, false},
                                  {cell(resident, i), true, false}});
            units << r;
        }
        s.addSection(QStringLiteral("memory"), ReportWriter::tr("Memory: predicted and measured"), units);
    }

}

// memory strategies and optimizer, in words
void strategiesSection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& cfg = s.data.run.config;
    {
        Unit u;
        const QJsonObject st = cfg.value(QStringLiteral("strategy")).toObject();
        const QJsonObject op = cfg.value(QStringLiteral("optimizer")).toObject();
        const QJsonObject sc = cfg.value(QStringLiteral("schedule")).toObject();
        if (st.isEmpty() && op.isEmpty()) {
            u.notes << ReportWriter::tr("The run's configuration holds no strategy or optimizer settings.");
        }
        if (!st.isEmpty()) {
            const QString prec = st.value(QStringLiteral("precision")).toString(QStringLiteral("fp32"));
            QString precision;
            if (prec == QLatin1String("bf16")) precision = ReportWriter::tr("bf16 mixed precision, fp32 master weights");
            else if (prec == QLatin1String("fp16"))
                precision = ReportWriter::tr("fp16 mixed precision, fp32 master weights, dynamic loss scaling (from %1, doubled "
                               "after %2 steps without overflow)")
                                .arg(numText(st.value(QStringLiteral("loss_scale_init")).toDouble(65536), 6))
                                .arg(st.value(QStringLiteral("loss_scale_growth_interval")).toInteger(2000));
            else if (prec == QLatin1String("tf32")) precision = ReportWriter::tr("tf32 matrix multiplications, fp32 elsewhere");
            else precision = ReportWriter::tr("fp32 throughout");
            u.keyValues.push_back({ReportWriter::tr("Precision"), precision});
            const QString ck = st.value(QStringLiteral("checkpoint")).toString(QStringLiteral("none"));
            QString checkpoint;
            if (ck == QLatin1String("none")) checkpoint = ReportWriter::tr("none: every activation is kept for backward");
            else if (ck == QLatin1String("all")) checkpoint = ReportWriter::tr("every block (recomputed in backward)");
            else if (ck == QLatin1String("auto")) checkpoint = ReportWriter::tr("the blocks the planner chose to fit the memory");
            else if (ck.startsWith(QLatin1String("every:"))) checkpoint = ReportWriter::tr("one block in every %1").arg(ck.mid(6));
            else if (ck.startsWith(QLatin1String("list:"))) checkpoint = ReportWriter::tr("blocks %1").arg(ck.mid(5));
            else checkpoint = ck;
            u.keyValues.push_back({ReportWriter::tr("Activation checkpointing"), checkpoint});
            const qint64 micro = st.value(QStringLiteral("micro_batch")).toInteger(0);
            const qint64 accum = st.value(QStringLiteral("accumulate")).toInteger(1);
            u.keyValues.push_back({ReportWriter::tr("Micro-batches"), micro > 0 && accum > 1
                                                            ? ReportWriter::tr("%1 samples each, gradients accumulated over %2")
                                                                  .arg(micro)
                                                                  .arg(accum)
                                                            : ReportWriter::tr("the whole batch at once")});
            u.keyValues.push_back({ReportWriter::tr("Optimizer state"), st.value(QStringLiteral("offload_optimizer")).toBool()
                                                              ? ReportWriter::tr("in host memory (offloaded), with the master weights")
                                                              : ReportWriter::tr("on the device")});
            if (const int rank = st.value(QStringLiteral("lora_rank")).toInt(0); rank > 0) {
                const QJsonObject lora = run.finalMetrics.value(QStringLiteral("lora")).toObject();
                QString text = ReportWriter::tr("rank %1 adapters (scale %2) on every linear layer and transformer "
                                                "projection, the rest frozen")
                                   .arg(rank)
                                   .arg(numText(st.value(QStringLiteral("lora_alpha")).toDouble(0) > 0
                                                    ? st.value(QStringLiteral("lora_alpha")).toDouble() / rank
                                                    : 1.0,
                                                3));
                if (const double p = st.value(QStringLiteral("lora_dropout")).toDouble(0); p > 0)
                    text += ReportWriter::tr(", their input dropped with probability %1 while training").arg(numText(p, 3));
                if (!lora.isEmpty()) {
                    text += ReportWriter::tr(": %1 trained values against %2 frozen")
                                .arg(lora.value(QStringLiteral("adapter_params")).toInteger())
                                .arg(lora.value(QStringLiteral("frozen_params")).toInteger());
                    // QLoRA: every base projection's frozen weight stored quantised while the adapters trained
                    const QString base = lora.value(QStringLiteral("base")).toString();
                    if (base == QLatin1String("int8") || base == QLatin1String("int4") || base == QLatin1String("nf4"))
                        text += ReportWriter::tr(" (%1 of them stored %2 while training: QLoRA)")
                                    .arg(lora.value(QStringLiteral("quantized_params")).toInteger())
                                    .arg(base);
                    const double before = lora.value(QStringLiteral("test_accuracy_before")).toDouble(qQNaN());
                    const double after = lora.value(QStringLiteral("test_accuracy_after")).toDouble(qQNaN());
                    if (std::isfinite(before) && std::isfinite(after))
                        text += ReportWriter::tr("; test accuracy %1 before training, %2 after")
                                    .arg(percentText(before), percentText(after));
                    // (a language model's test loss is its validation loss per token)
                    const double lb = lora.value(QStringLiteral("test_loss_before")).toDouble(qQNaN());
                    const double la = lora.value(QStringLiteral("test_loss_after")).toDouble(qQNaN());
                    if (std::isfinite(lb) && std::isfinite(la))
                        text += ReportWriter::tr("; test loss %1 before, %2 after").arg(numText(lb, 5), numText(la, 5));  // (a QLoRA base moves the 4th decimal)
                }
                u.keyValues.push_back({ReportWriter::tr("LoRA"), text});
            }
            if (st.value(QStringLiteral("offload_parameters")).toBool())
                u.keyValues.push_back({ReportWriter::tr("Parameters and gradients"),
                                       ReportWriter::tr("in host memory (ZeRO-Infinity style): each unit is brought to the "
                                                        "device one unit ahead of its use, its gradients sent back after "
                                                        "its backward")});
        }
        if (!op.isEmpty()) {
            const QString kind = op.value(QStringLiteral("kind")).toString();
            QString o = ReportWriter::tr("%1, learning rate %2").arg(optimizerName(kind), numText(op.value(QStringLiteral("lr")).toDouble(qQNaN()), 4));
            if (kind == QLatin1String("sgd")) {
                const double m = op.value(QStringLiteral("momentum")).toDouble(0);
                if (m > 0) {
                    o += ReportWriter::tr(", momentum %1").arg(numText(m, 3));
                    if (op.value(QStringLiteral("nesterov")).toBool()) o += ReportWriter::tr(" (Nesterov)");
                    const double damp = op.value(QStringLiteral("dampening")).toDouble(0);
                    if (damp > 0) o += ReportWriter::tr(", dampening %1").arg(numText(damp, 3));
                } else {
                    o += ReportWriter::tr(", no momentum");
                }
            } else {
                o += ReportWriter::tr(", betas %1 and %2, epsilon %3")
                         .arg(numText(op.value(QStringLiteral("beta1")).toDouble(qQNaN()), 4),
                              numText(op.value(QStringLiteral("beta2")).toDouble(qQNaN()), 4),
                              numText(op.value(QStringLiteral("eps")).toDouble(qQNaN()), 3));
            }
            const double wd = op.value(QStringLiteral("weight_decay")).toDouble(0);
            if (wd > 0)
                o += kind == QLatin1String("adamw") ? ReportWriter::tr(", decoupled weight decay %1").arg(numText(wd, 3))
                                                    : ReportWriter::tr(", weight decay %1").arg(numText(wd, 3));
            u.keyValues.push_back({ReportWriter::tr("Optimizer"), o});
        }
        if (!sc.isEmpty()) {
            const QString kind = sc.value(QStringLiteral("kind")).toString(QStringLiteral("constant"));
            QString sched;
            if (kind == QLatin1String("step"))
                sched = ReportWriter::tr("multiplied by %1 every %2 steps")
                            .arg(numText(sc.value(QStringLiteral("gamma")).toDouble(qQNaN()), 3),
                                 countText(sc.value(QStringLiteral("step_size")).toInteger(0)));
            else if (kind == QLatin1String("cosine"))
                sched = ReportWriter::tr("cosine decay to %1").arg(numText(sc.value(QStringLiteral("min_lr")).toDouble(0), 3));
            else sched = ReportWriter::tr("constant");
            const qint64 warm = sc.value(QStringLiteral("warmup_steps")).toInteger(0);
            if (warm > 0) sched = ReportWriter::tr("%1, after a linear warm-up over %2 steps").arg(sched, countText(warm));
            u.keyValues.push_back({ReportWriter::tr("Learning rate"), sched});
        }
        s.addSection(QStringLiteral("strategies"), ReportWriter::tr("Memory strategies and optimizer"), {u});
    }

}

// data
void dataSection(Doc& s) {
    [[maybe_unused]] const QJsonObject& cfg = s.data.run.config;
    {
        Unit u;
        if (cfg.contains(QStringLiteral("data")))
            u.keyValues.push_back({ReportWriter::tr("Dataset"), datasetName(cfg.value(QStringLiteral("data")).toString())});
        auto limitText = [&](const char* key) {
            const qint64 n = cfg.value(QLatin1String(key)).toInteger(0);
            return n > 0 ? ReportWriter::tr("the first %1").arg(countText(n)) : ReportWriter::tr("all");
        };
        if (cfg.contains(QStringLiteral("train_limit"))) u.keyValues.push_back({ReportWriter::tr("Training samples"), limitText("train_limit")});
        if (cfg.contains(QStringLiteral("test_limit"))) u.keyValues.push_back({ReportWriter::tr("Test samples"), limitText("test_limit")});
        if (cfg.contains(QStringLiteral("batch")))
            u.keyValues.push_back({ReportWriter::tr("Batch size"), countText(cfg.value(QStringLiteral("batch")).toInteger(0))});
        const qint64 steps = cfg.value(QStringLiteral("steps")).toInteger(0);
        const qint64 epochs = cfg.value(QStringLiteral("epochs")).toInteger(0);
        if (steps > 0) u.keyValues.push_back({ReportWriter::tr("Length"), steps == 1 ? ReportWriter::tr("1 step") : ReportWriter::tr("%1 steps").arg(countText(steps))});
        else if (cfg.contains(QStringLiteral("epochs")))
            u.keyValues.push_back({ReportWriter::tr("Length"), epochs == 1 ? ReportWriter::tr("1 epoch") : ReportWriter::tr("%1 epochs").arg(countText(epochs))});
        if (cfg.contains(QStringLiteral("evaluate_each_epoch")))
            u.keyValues.push_back({ReportWriter::tr("Test set"), cfg.value(QStringLiteral("evaluate_each_epoch")).toBool()
                                                       ? ReportWriter::tr("evaluated after every epoch")
                                                       : ReportWriter::tr("evaluated at the end")});
        if (cfg.contains(QStringLiteral("seed")))
            u.keyValues.push_back({ReportWriter::tr("Seed"), QString::number(cfg.value(QStringLiteral("seed")).toInteger(0))});
        if (cfg.contains(QStringLiteral("model_source"))) {
            const QString src = cfg.value(QStringLiteral("model_source")).toString();
            QString text = src;
            if (src.startsWith(QLatin1String("preset:"))) text = ReportWriter::tr("the preset %1").arg(src.mid(7));
            else if (src.startsWith(QLatin1String("file:"))) text = ReportWriter::tr("the file %1").arg(src.mid(5));
            else if (src.startsWith(QLatin1String("hf:"))) text = ReportWriter::tr("the Hugging Face config %1").arg(src.mid(3));
            else if (src == QLatin1String("builder")) text = ReportWriter::tr("built in the window");
            u.keyValues.push_back({ReportWriter::tr("Model"), text});
        }
        u.keyValues.push_back({ReportWriter::tr("Samples trained"), countText(s.w.samplesTrained())});
        s.addSection(QStringLiteral("data"), ReportWriter::tr("Data"), {u});
    }

}

// model
void modelSection(Doc& s) {
    [[maybe_unused]] const std::optional<hr::SpecReport>& spec = s.spec;
    [[maybe_unused]] const QString& specError = s.specError;
    {
        QVector<Unit> units;
        Unit t;
        if (spec) {
            t.paragraphs << ReportWriter::tr("%1 layers, %2 trainable parameters, %3 of activations kept for backward per sample "
                               "(f32).")
                                .arg(spec->layers.size())
                                .arg(countText(qint64(spec->total_params)))
                                .arg(bytesText(spec->activation_bytes_per_sample));
            for (const QString& col : {ReportWriter::tr("#"), ReportWriter::tr("Path"), ReportWriter::tr("Layer"), ReportWriter::tr("Input"), ReportWriter::tr("Output"), ReportWriter::tr("Parameters"),
                                       ReportWriter::tr("Activations / sample")})
                t.header.push_back({col, col == ReportWriter::tr("Parameters") || col == ReportWriter::tr("Activations / sample"), false});
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
        s.addSection(QStringLiteral("model"), ReportWriter::tr("Model"), units);
    }

}

// device and versions
void deviceSection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& cfg = s.data.run.config;
    {
        Unit u;
        u.keyValues.push_back({ReportWriter::tr("Trained on"), run.device.isEmpty() ? cfg.value(QStringLiteral("device")).toString() : run.device});
        if (cfg.contains(QStringLiteral("device"))) {
            const QString asked = cfg.value(QStringLiteral("device")).toString();
            u.keyValues.push_back({ReportWriter::tr("Device asked for"), asked == QLatin1String("auto") ? ReportWriter::tr("automatic (a GPU when one works)") : asked});
        }
        std::map<int, QString> gpus;
        for (const auto& r : s.data.telemetry)
            if (r.gpu >= 0) gpus[r.gpu] = r.gpuName;
        for (auto& [i, name] : gpus) u.keyValues.push_back({ReportWriter::tr("GPU %1").arg(i), name});
        if (cfg.contains(QStringLiteral("threads"))) {
            const qint64 th = cfg.value(QStringLiteral("threads")).toInteger(0);
            u.keyValues.push_back({ReportWriter::tr("CPU threads"), th > 0 ? QString::number(th) : ReportWriter::tr("all cores")});
        }
        const qint64 limit = cfg.value(QStringLiteral("memory_limit")).toInteger(0);
        if (limit > 0) u.keyValues.push_back({ReportWriter::tr("Memory limit"), bytesText(limit)});
        u.keyValues.push_back({ReportWriter::tr("Headroom"), QStringLiteral(HEADROOM_VERSION)});
        u.keyValues.push_back({ReportWriter::tr("Qt"), QString::fromLatin1(qVersion())});
        u.keyValues.push_back({ReportWriter::tr("Operating system"), QSysInfo::prettyProductName()});
        u.keyValues.push_back({ReportWriter::tr("Host"), QSysInfo::machineHostName()});
        s.addSection(QStringLiteral("device"), ReportWriter::tr("Device and versions"), {u});
    }

}

// telemetry
void telemetrySection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    {
        QVector<Unit> units;
        Unit first;
        bool gpus = false;
        for (const auto& r : s.data.telemetry) gpus = gpus || r.gpu >= 0;
        bool anyTel = false;
        for (const char* id : {"power", "utilization", "device_memory"}) {
            Unit c = s.chartUnit(QLatin1String(id));
            anyTel = anyTel || !c.chartSrc.isEmpty();
            units << c;
        }
        if (s.data.telemetry.isEmpty()) first.notes << ReportWriter::tr("No telemetry was recorded for this run.");
        else if (!gpus) first.notes << ReportWriter::tr("No GPU telemetry: no NVIDIA driver was found while the run trained; host figures are shown.");
        else if (!anyTel) first.notes << ReportWriter::tr("Telemetry holds no plottable figures.");
        if (!first.empty()) units.prepend(first);
        // the heading goes with the first chart when there is no note
        s.addSection(QStringLiteral("telemetry"), ReportWriter::tr("Power, utilisation and memory over time"), units);
    }

}

// energy
void energySection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const ReportEnergy& en = s.en;
    {
        Unit u;
        if (!en.available) {
            u.notes << ReportWriter::tr("Energy not measured: NVML gave no energy or power figures for this run.");
        } else {
            u.keyValues.push_back({ReportWriter::tr("Energy used by the GPUs"), ReportWriter::tr("%1 J (%2 Wh)").arg(numText(en.joules, 6), numText(en.joules / 3600.0, 4))});
            u.keyValues.push_back({ReportWriter::tr("Energy per training sample"),
                                   std::isfinite(en.joulesPerSample) ? ReportWriter::tr("%1 J").arg(numText(en.joulesPerSample, 4)) : QStringLiteral("—")});
            if (en.fromPowerIntegral)
                u.notes << ReportWriter::tr("Estimated by integrating sampled power draw over time (the GPU has no energy counter).");
        }
        s.addSection(QStringLiteral("energy"), ReportWriter::tr("Energy"), {u});
    }

}

// durations
void durationsSection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& fm = s.data.run.finalMetrics;
    {
        Unit u;
        if (run.finished.isValid())
            u.keyValues.push_back({ReportWriter::tr("Wall-clock time"), secondsText(run.created.msecsTo(run.finished) / 1000.0)});
        const double trainSeconds = fm.value(QStringLiteral("seconds")).toDouble(qQNaN());
        u.keyValues.push_back({ReportWriter::tr("Training time"), secondsText(std::isfinite(trainSeconds) ? trainSeconds
                                                      : (s.data.steps.isEmpty() ? qQNaN() : s.data.steps.last().elapsedSeconds))});
        if (!s.data.steps.isEmpty()) {
            double sum = 0;
            int n = 0;
            for (const auto& st : s.data.steps)
                if (std::isfinite(st.stepSeconds)) sum += st.stepSeconds, ++n;
            u.keyValues.push_back({ReportWriter::tr("Steps recorded"), countText(qint64(s.data.steps.size()))});
            if (n) u.keyValues.push_back({ReportWriter::tr("Mean step time"), ReportWriter::tr("%1 ms").arg(numText(1000.0 * sum / n, 4))});
        }
        for (const auto& e : s.data.epochs) u.keyValues.push_back({ReportWriter::tr("Epoch %1").arg(e.epoch), secondsText(e.seconds)});
        s.addSection(QStringLiteral("durations"), ReportWriter::tr("Durations"), {u});
    }

}

// --prune/--quantize: the written weights as trained and pruned/quantised (only when the run had a what-if)
void compressionSection(Doc& s) {
    const QJsonObject wi = s.data.run.finalMetrics.value(QStringLiteral("compression")).toObject();
    if (wi.isEmpty()) return;
    Unit u;
    const auto num = [&](const char* key) { return wi.value(QLatin1String(key)).toDouble(qQNaN()); };
    const auto count = [&](const char* key) { return wi.value(QLatin1String(key)).toInteger(0); };
    const bool tokens = wi.value(QStringLiteral("test_tokens")).isDouble();  // a language model
    if (tokens)
        u.paragraphs << ReportWriter::tr("The weights the run wrote, evaluated on %1 validation tokens as trained and again "
                                         "%2: the loss per token, its perplexity and the share of next tokens predicted. "
                                         "The transform touches the %3 weight tensors with two or more dimensions, the "
                                         "embeddings among them (%4 values, %5 of them zero after); biases and "
                                         "normalisation weights stay as they are. The largest change to a weight was %6.")
                            .arg(countText(count("test_tokens")), compressionText(wi), countText(count("tensors")),
                                 countText(count("values")), countText(count("zeros")), numText(num("max_abs_change"), 4));
    else
        u.paragraphs << ReportWriter::tr("The weights the run wrote, evaluated on %1 test samples as trained and again %2. "
                                         "The transform touches the %3 weight tensors with two or more dimensions (%4 values, "
                                         "%5 of them zero after); biases, normalisation weights and statistics stay as they "
                                         "are. The largest change to a weight was %6.")
                            .arg(countText(count("test_samples")), compressionText(wi), countText(count("tensors")),
                                 countText(count("values")), countText(count("zeros")), numText(num("max_abs_change"), 4));
    const QStringList columns = tokens ? QStringList{ReportWriter::tr("Weights"), ReportWriter::tr("Validation loss"),
                                                     ReportWriter::tr("Perplexity"), ReportWriter::tr("Token accuracy"),
                                                     ReportWriter::tr("Stored size")}
                                       : QStringList{ReportWriter::tr("Weights"), ReportWriter::tr("Test accuracy"),
                                                     ReportWriter::tr("Test loss"), ReportWriter::tr("Stored size")};
    for (const QString& col : columns) u.header.push_back({col, col != columns.first(), false});
    const auto row = [&](const QString& weights, const char* when, qint64 bytes, bool strong) {
        const double loss = num((std::string("test_loss_") + when).c_str());
        const double accuracy = num((std::string("test_accuracy_") + when).c_str());
        QVector<Unit::Cell> cells{{weights, false, strong}};
        if (tokens)
            cells << Unit::Cell{numText(loss, 5), true, strong} << Unit::Cell{numText(std::exp(loss), 4), true, strong}
                  << Unit::Cell{percentText(accuracy, 2), true, strong};
        else
            cells << Unit::Cell{percentText(accuracy, 2), true, strong} << Unit::Cell{numText(loss, 4), true, strong};
        cells.push_back({bytesText(bytes), true, strong});
        u.rows.push_back(cells);
    };
    row(ReportWriter::tr("as trained (f32)"), "before", count("weights_bytes"), false);
    row(compressionText(wi), "after", count("weights_bytes_after"), true);
    u.notes << ReportWriter::tr("Stored size counts 4 bytes a value as f32; quantised, bits / 8 a value and 4 bytes a "
                                "scale; pruned, a bitmask of 1 bit a value and the non-zero values. The file on disk "
                                "is not changed: this is a what-if (headroom eval --prune/--quantize measures the "
                                "same on any weights file).");
    s.addSection(QStringLiteral("compression"), ReportWriter::tr("What-if: pruned and quantised weights"), {u});
}

// Before and after (a fine-tuning run): the validation loss at step 0 and at the end (run.json's "before"), and
// the Sample tab's comparison when it was made (before_after.json in the run's folder, gui/BeforeAfterView.h)
void beforeAfterSection(Doc& s) {
    const QJsonObject before = s.data.run.finalMetrics.value(QStringLiteral("before")).toObject();
    QJsonObject samples;
    if (!s.data.run.outDir.isEmpty()) {
        QFile f(QDir(s.data.run.outDir).filePath(QStringLiteral("before_after.json")));
        if (f.open(QIODevice::ReadOnly)) samples = QJsonDocument::fromJson(f.read(16 << 20)).object();
    }
    if (before.isEmpty() && samples.isEmpty()) return;
    Unit u;
    const QString kind = samples.value(QStringLiteral("before")).toString();
    const QString from = samples.value(QStringLiteral("before_source")).toString();
    u.paragraphs << (kind == QLatin1String("adapters_off")
                         ? ReportWriter::tr("Before is this LoRA run's model with its adapters switched off: the base it "
                                            "started from. After is the trained model.")
                     : kind == QLatin1String("step0_checkpoint")
                         ? ReportWriter::tr("Before is the run's checkpoint at step 0 (%1). After is the trained model.").arg(from)
                     : !from.isEmpty()
                         ? ReportWriter::tr("Before is the weights the run started from (%1). After is the trained model.").arg(from)
                         : ReportWriter::tr("Before is the model at step 0, ahead of the first update. After is the trained model."));
    for (const QString& col : {QString(), ReportWriter::tr("Before"), ReportWriter::tr("After")})
        u.header.push_back({col, false, false});
    const double lb = before.value(QStringLiteral("test_loss")).toDouble(qQNaN());
    const double la = s.data.run.finalMetrics.value(QStringLiteral("test_loss")).toDouble(qQNaN());
    if (std::isfinite(lb))
        u.rows.push_back({{ReportWriter::tr("Validation loss"), false, false}, {numText(lb, 5), true, false}, {numText(la, 5), true, true}});
    if (!samples.isEmpty()) {
        const QString prompt = samples.value(QStringLiteral("prompt")).toString();
        const auto row = [&](const QString& label, const char* key) {
            const QJsonObject o = samples.value(QLatin1String(key)).toObject();
            u.rows.push_back({{label, false, false},
                              {prompt + o.value(QStringLiteral("before")).toString(), false, false},
                              {prompt + o.value(QStringLiteral("after")).toString(), false, false}});
        };
        row(ReportWriter::tr("Greedy"), "greedy");
        row(ReportWriter::tr("Sampled (temperature %1, seed %2)")
                .arg(numText(samples.value(QStringLiteral("temperature")).toDouble(), 2))
                .arg(samples.value(QStringLiteral("seed")).toInteger()),
            "sampled");
        u.notes << ReportWriter::tr("The prompt, then %1 new tokens from each model (headroom generate --run RUN [--before] "
                                    "prints the same).")
                       .arg(samples.value(QStringLiteral("tokens")).toInteger());
    }
    s.addSection(QStringLiteral("before-after"), ReportWriter::tr("Before and after"), {u});
}

// final metrics, in words
void finalMetricsSection(Doc& s) {
    [[maybe_unused]] const RunInfo& run = s.data.run;
    [[maybe_unused]] const QJsonObject& fm = s.data.run.finalMetrics;
    {
        Unit u;
        if (fm.isEmpty()) {
            u.notes << (run.status == QLatin1String("running") ? ReportWriter::tr("The run has not ended.") : ReportWriter::tr("No final metrics were recorded."));
        } else {
            QSet<QString> shown;
            auto add = [&](const char* key, const QString& label, const QString& value) {
                if (!fm.contains(QLatin1String(key))) return;
                shown.insert(QLatin1String(key));
                u.keyValues.push_back({label, value});
            };
            auto num = [&](const char* key, int prec = 4) { return numText(fm.value(QLatin1String(key)).toDouble(qQNaN()), prec); };
            auto pct = [&](const char* key) { return percentText(fm.value(QLatin1String(key)).toDouble(qQNaN())); };
            add("test_accuracy", ReportWriter::tr("Test accuracy"), pct("test_accuracy"));
            add("test_loss", ReportWriter::tr("Test loss"), num("test_loss"));
            add("train_accuracy", ReportWriter::tr("Training accuracy (last epoch)"), pct("train_accuracy"));
            add("train_loss", ReportWriter::tr("Training loss (last epoch)"), num("train_loss"));
            add("steps", ReportWriter::tr("Optimizer steps"), countText(fm.value(QStringLiteral("steps")).toInteger(0)));
            add("epochs_completed", ReportWriter::tr("Epochs completed"), countText(fm.value(QStringLiteral("epochs_completed")).toInteger(0)));
            add("images_per_second", ReportWriter::tr("Throughput"), ReportWriter::tr("%1 images/s").arg(num("images_per_second")));
            add("param_count", ReportWriter::tr("Parameters"), countText(fm.value(QStringLiteral("param_count")).toInteger(0)));
            add("seconds", ReportWriter::tr("Time in the trainer"), secondsText(fm.value(QStringLiteral("seconds")).toDouble(qQNaN())));
            add("peak_bytes", ReportWriter::tr("Peak memory (all categories)"), bytesText(fm.value(QStringLiteral("peak_bytes")).toInteger(-1)));
            add("peak_reserved_bytes", ReportWriter::tr("Peak reserved (allocated + cached)"),
                bytesText(fm.value(QStringLiteral("peak_reserved_bytes")).toInteger(-1)));
            if (fm.contains(QStringLiteral("peak_phase")) || fm.contains(QStringLiteral("peak_step"))) {
                const qint64 step = fm.value(QStringLiteral("peak_step")).toInteger(-1);
                const QString phase = fm.value(QStringLiteral("peak_phase")).toString();
                add(fm.contains(QStringLiteral("peak_phase")) ? "peak_phase" : "peak_step", ReportWriter::tr("Peak reached during"),
                    step >= 0 ? ReportWriter::tr("%1 of step %2").arg(phaseText(phase)).arg(step)
                              : phaseText(phase.isEmpty() ? QStringLiteral("setup") : phase));
                shown.insert(QStringLiteral("peak_step"));
            }
            shown.insert(QStringLiteral("distributed"));  // the ranks' table, under Memory
            shown.insert(QStringLiteral("compression"));  // its own section (null without a what-if)
            shown.insert(QStringLiteral("before"));       // its own section (null unless a fine-tuning run)
            for (auto it = fm.begin(); it != fm.end(); ++it)  // figures newer builds add
                if (!shown.contains(it.key()))
                    u.keyValues.push_back({it.key(), it.key().endsWith(QLatin1String("bytes")) ? bytesText(it.value().toInteger(-1))
                                                                                           : jsonValueText(it.value())});
        }
        s.addSection(QStringLiteral("final"), ReportWriter::tr("Final metrics"), {u});
    }
}

}  // namespace

QString ReportWriter::document(Target target) const {
    Doc s{*this, m_data};
    s.pdf = target == Target::Pdf;
    s.allCharts = charts();
    s.chartWidth = target == Target::Html ? 900 : 640;
    const RunInfo& run = m_data.run;
    s.statusText = run.status == QLatin1String("finished") ? tr("finished")
                   : run.status == QLatin1String("failed") ? tr("failed")
                   : run.status == QLatin1String("stopped") ? tr("stopped")
                                                             : tr("running");
    s.spec = analyzeSpec(run.spec, &s.specError);
    s.params = run.finalMetrics.value(QStringLiteral("param_count")).toInteger(s.spec ? qint64(s.spec->total_params) : -1);
    s.en = energy();

    titlePart(s);
    outcomePart(s);
    // the details, one section each
    trainingSection(s);
    compressionSection(s);
    beforeAfterSection(s);
    memorySection(s);
    strategiesSection(s);
    dataSection(s);
    modelSection(s);
    deviceSection(s);
    telemetrySection(s);
    energySection(s);
    durationsSection(s);
    finalMetricsSection(s);
    s.d.set("sections", s.sections);
    s.d.set("footer", S(tr("Written by Headroom %1 on %2.")
                            .arg(QStringLiteral(HEADROOM_VERSION),
                                 QLocale().toString(QDateTime::currentDateTime(), QLocale::LongFormat))));

    mu::mustache tmpl(S(templateText()));
    if (!tmpl.is_valid()) return QStringLiteral("<html><body><p>%1</p></body></html>").arg(esc(QString::fromStdString(tmpl.error_message())));
    return QString::fromStdString(tmpl.render(s.d));
}

QString ReportWriter::html() const { return document(Target::Html); }

}  // namespace hrapp
