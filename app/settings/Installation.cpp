#include "settings/Installation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

namespace hrapp {

QStringList shareDirs(const QString& programDir) {
    const QString dir = programDir.isEmpty() ? QCoreApplication::applicationDirPath() : programDir;
    QStringList out;
    for (const QString& rel : {QStringLiteral("../share"), QStringLiteral("share")}) {
        const QString p = QDir::cleanPath(QDir(dir).filePath(rel));
        if (QFileInfo(p).isDir() && !out.contains(p)) out << p;
    }
    return out;
}

QString translationFile(const QString& language, const QString& programDir) {
    const QString name = QStringLiteral("headroom_%1.qm").arg(language);
    for (const QString& share : shareDirs(programDir)) {
        const QString p = share + QStringLiteral("/headroom/translations/") + name;
        if (QFileInfo::exists(p)) return p;
    }
    const QString embedded = QStringLiteral(":/i18n/") + name;
    return QFileInfo::exists(embedded) ? embedded : QString();
}

}  // namespace hrapp
