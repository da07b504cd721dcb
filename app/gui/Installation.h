#pragma once
// The program's icon, from the share folders of settings/Installation.h (which this includes: the paths
// of the data files are QtCore only, for the command line too).
#include <QIcon>
#include <QString>

#include "settings/Installation.h"

namespace hrapp {

// The program's icon from the first share folder with the hicolor files (SVG and PNG sizes), else
// the icon theme's entry for kAppId (an installed desktop), else a null icon.
QIcon applicationIcon(const QString& programDir = QString());

}  // namespace hrapp
