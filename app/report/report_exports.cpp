// ReportWriter: the JSON (docs/report.schema.json), CSV and PDF exports.
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

}  // namespace hrapp
