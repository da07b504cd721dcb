#pragma once
// Where the program's data files are, relative to the program itself, so that the window and the CLI
// find them in an installation (/usr/bin/headroom -> /usr/share/...) and in a build tree
// (build/headroom -> build/share/..., which cmake/Package.cmake fills the same way) alike:
//   share/headroom/translations/headroom_<lang>.qm
//   share/icons/hicolor/{scalable,NxN}/apps/io.headroom.Headroom.{svg,png}
// The translations are also compiled into the program (:/i18n), the fallback when neither is there.
// QtCore only (the command line uses it); the window's icon is in gui/Installation.h.
#include <QString>
#include <QStringList>

namespace hrapp {

inline constexpr const char* kAppId = "io.headroom.Headroom";

// The share/ folders to search, best first: <dir>/../share (installed), <dir>/share (build tree).
// dir: the program's folder (QCoreApplication::applicationDirPath() when empty).
QStringList shareDirs(const QString& programDir = QString());
// The .qm file of the interface in `language` ("zh_CN"): the first of the share folders that has
// it, else the compiled-in ":/i18n/headroom_<language>.qm" ("" when there is none).
QString translationFile(const QString& language, const QString& programDir = QString());

}  // namespace hrapp
