#pragma once
// What the report_*.cpp files share: escaping and number formats, JSON values for "none", PNG bytes, shapes,
// the spec analysis of a stored run, the chart palette.
#include <QByteArray>
#include <QBuffer>
#include <QColor>
#include <QImage>
#include <QJsonObject>
#include <QJsonValue>
#include <QLocale>
#include <QString>
#include <QVector>

#include <cmath>
#include <optional>

#include "base/error.h"
#include "i18n/CoreText.h"
#include "nn/model_spec.h"

namespace hrapp::report_detail {

inline QString esc(const QString& s) { return s.toHtmlEscaped(); }

inline QString bytesText(qint64 b) {
    if (b < 0) return QStringLiteral("—");
    return QLocale().formattedDataSize(b, 2, QLocale::DataSizeIecFormat);
}

inline QString numText(double v, int prec = 4) {
    if (!std::isfinite(v)) return QStringLiteral("—");
    // whole numbers of more digits than `prec` in full ("2,900", not "2.9e+03")
    if (std::abs(v) >= std::pow(10.0, prec - 1) && std::abs(v) < 1e15) return QLocale().toString(v, 'f', 0);
    return QLocale().toString(v, 'g', prec);
}

inline QString secondsText(double s) {
    if (!std::isfinite(s) || s < 0) return QStringLiteral("—");
    if (s < 120) return ReportWriter::tr("%1 s").arg(QLocale().toString(s, 'f', 1));
    const qint64 t = static_cast<qint64>(s + 0.5);
    return ReportWriter::tr("%1 h %2 min %3 s").arg(t / 3600).arg((t / 60) % 60).arg(t % 60);
}

inline QString jsonValueText(const QJsonValue& v) {
    if (v.isBool()) return v.toBool() ? ReportWriter::tr("yes") : ReportWriter::tr("no");
    if (v.isDouble()) return numText(v.toDouble(), 6);
    if (v.isString()) return v.toString();
    if (v.isNull() || v.isUndefined()) return QStringLiteral("—");
    return QString::fromUtf8(QJsonDocument(v.isObject() ? QJsonDocument(v.toObject()) : QJsonDocument(v.toArray()))
                                 .toJson(QJsonDocument::Compact));
}

inline QJsonValue jnum(double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }
inline QJsonValue jint(qint64 v) { return v >= 0 ? QJsonValue(v) : QJsonValue(QJsonValue::Null); }

inline QByteArray pngBytes(const QImage& img) {
    QByteArray bytes;
    QBuffer buf(&bytes);
    buf.open(QIODevice::WriteOnly);
    img.save(&buf, "PNG");
    return bytes;
}

inline QString shapeText(const hr::Shape& s) {
    QStringList parts;
    for (auto d : s) parts << QString::number(d);
    return QStringLiteral("(") + parts.join(QStringLiteral(", ")) + QStringLiteral(")");
}

inline std::optional<hr::SpecReport> analyzeSpec(const QJsonObject& spec, QString* error) {
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

inline const QVector<QColor>& palette() {
    static const QVector<QColor> c = {QColor(0x1f, 0x77, 0xb4), QColor(0xd6, 0x27, 0x28), QColor(0x2c, 0xa0, 0x2c),
                                      QColor(0xff, 0x7f, 0x0e), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                      QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return c;
}

}  // namespace hrapp::report_detail
