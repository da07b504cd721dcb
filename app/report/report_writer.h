#pragma once
// ReportWriter: one run of the store as HTML (self-contained, charts embedded as PNG data URIs),
// PDF (QPdfWriter), JSON (everything stored for the run; docs/report.schema.json) or CSV (metrics).
// HTML and PDF come from one template, app/report/templates/report.html (kainjow mustache, a Qt
// resource): the outcome on the first page (test accuracy and loss, throughput, wall time, peak
// memory against the device, predicted against measured, energy, the loss curve), then the details,
// the configuration in words. The PDF keeps each of the template's units (a heading with its
// content) on one page where it fits.
// Written in the UI language (translation context "ReportWriter"). Every file is written atomically
// (QSaveFile): a failed export leaves no partial file. Charts are drawn with QPainter on images: a
// QGuiApplication is enough (the command line without widgets, headroom-cli, writes reports too).
#include <QCoreApplication>
#include <QImage>
#include <QJsonObject>
#include <QString>
#include <QVector>

#include <optional>

#include "store/run_store.h"

namespace hrapp {

struct ReportData {
    RunInfo run;
    QVector<StepRow> steps;
    QVector<EpochRow> epochs;
    QVector<TelemetryRow> telemetry;
    QVector<MemoryCategoryRow> memory;
    QVector<MemorySampleRow> memorySamples;
};

struct ReportChartLine {
    QString name;
    QVector<double> x, y;
};

struct ReportChart {
    QString id;          // "loss", "accuracy", "throughput", "memory_categories", "power", ...
    QString title;
    QString xLabel, yLabel;
    QVector<ReportChartLine> lines;  // for bars: x = category index
    QStringList categories;          // non-empty: a grouped bar chart with these x labels
};

// Energy over the run, from NVML's energy counter (or, when absent, power integrated over time).
struct ReportEnergy {
    bool available = false;
    double joules = 0;
    double joulesPerSample = qQNaN();
    bool fromPowerIntegral = false;
};

class ReportWriter {
    Q_DECLARE_TR_FUNCTIONS(ReportWriter)
public:
    enum class Format { Html, Pdf, Json, Csv };
    static std::optional<Format> formatFromName(const QString& name);  // html|pdf|json|csv
    static QString extension(Format f);

    // Everything the store holds for the run; nullopt when there is no such run.
    static std::optional<ReportData> load(const RunStore& store, qint64 runId);

    explicit ReportWriter(ReportData data);

    // Writes atomically; false with *error set (a sentence for a person).
    bool write(const QString& path, Format format, QString* error = nullptr) const;

    QString html() const;       // self-contained HTML (well-formed XHTML syntax)
    QJsonObject json() const;
    QString csv() const;
    bool writePdf(const QString& path, QString* error = nullptr) const;

    QVector<ReportChart> charts() const;                 // only those with data
    static QImage renderChart(const ReportChart& chart, int width = 900, int height = 420);
    ReportEnergy energy() const;
    qint64 samplesTrained() const;                       // steps x batch
    static QStringList sectionIds();                     // ids of the HTML sections every report has, in order
                                                         // (and "compression" after "training" with a what-if)

private:
    enum class Target { Html, Pdf };
    QString document(Target target) const;  // the template filled for HTML (data URIs) or PDF (chart: resources)
    ReportData m_data;
};

}  // namespace hrapp
