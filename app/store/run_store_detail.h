#pragma once
// What the run_store*.cpp files share: conversions between SQLite values and the run records (NULL for
// "none": NaN doubles, negative counts), timestamps, JSON text, and whether a run's process lives.
#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QVariant>

#include <cerrno>
#include <cmath>
#include <csignal>

#include <sys/types.h>
#include <unistd.h>

namespace hrapp::store_detail {

inline QVariant num(double v) { return std::isfinite(v) ? QVariant(v) : QVariant(QMetaType(QMetaType::Double)); }
inline QVariant num(qint64 v) { return v >= 0 ? QVariant(v) : QVariant(QMetaType(QMetaType::LongLong)); }
inline double dbl(const QVariant& v) { return v.isNull() ? qQNaN() : v.toDouble(); }
inline qint64 i64(const QVariant& v) { return v.isNull() ? -1 : v.toLongLong(); }

inline QString nowIso() { return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs); }
inline QDateTime fromIso(const QVariant& v) {
    if (v.isNull()) return {};
    QDateTime d = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    d.setTimeSpec(Qt::UTC);
    return d;
}
inline QString jsonText(const QJsonObject& o) { return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)); }
inline QJsonObject jsonObject(const QVariant& v) {
    if (v.isNull()) return {};
    return QJsonDocument::fromJson(v.toString().toUtf8()).object();
}

inline bool processAlive(qint64 pid) {
    if (pid <= 0) return false;
    if (pid == static_cast<qint64>(::getpid())) return true;
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace hrapp::store_detail
