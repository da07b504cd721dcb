#include "gui/Installation.h"

#include <QFileInfo>

namespace hrapp {

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
