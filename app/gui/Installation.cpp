#include "gui/Installation.h"

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

QIcon applicationIcon(const QString& programDir) {
    const QString id = QString::fromLatin1(kAppId);
    for (const QString& share : shareDirs(programDir)) {
        const QString hicolor = share + QStringLiteral("/icons/hicolor/");
        QIcon icon;
        const QString svg = hicolor + QStringLiteral("scalable/apps/") + id + QStringLiteral(".svg");
        if (QFileInfo::exists(svg)) icon.addFile(svg);
        for (int size : {16, 24, 32, 48, 64, 128, 256}) {
            const QString png = hicolor + QStringLiteral("%1x%1/apps/").arg(size) + id + QStringLiteral(".png");
            if (QFileInfo::exists(png)) icon.addFile(png, QSize(size, size));
        }
        if (!icon.isNull()) return icon;
    }
    return QIcon::fromTheme(id);
}

}  // namespace hrapp
