#include "session/RunDefaults.h"

#include <QDir>
#include <QFileInfo>

namespace hrapp {

QString newRunFolder(const QString& parent, const QDateTime& now) {
    const QString base = QDir(parent).filePath(QStringLiteral("run-") + now.toString(QStringLiteral("yyyyMMdd-HHmmss")));
    QString dir = base;
    for (int n = 2; QFileInfo::exists(dir); ++n) dir = base + QLatin1Char('-') + QString::number(n);
    return dir;
}

}  // namespace hrapp
