// ReportWriter: formats, loading a run from the history, the energy figures, writing a file. Charts are
// in report_charts.cpp, the document (HTML and the PDF's text) in report_document.cpp, JSON, CSV and PDF
// in report_exports.cpp.
#include "report/report_writer.h"

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
