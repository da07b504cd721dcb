#pragma once
// Applying the settings (settings/AppSettings.h) to the application: its translators and its theme.
#include <QString>

#include "settings/AppSettings.h"

class QApplication;

namespace hrapp {

// Installs the translators for `language` ("system" follows the locale) on the application;
// returns the language actually loaded ("en" when none).
QString installTranslators(const QString& language);
// Fusion with a light or dark palette; "system" keeps the platform's style and palette.
void applyTheme(const QString& theme);
bool isDarkPalette();

}  // namespace hrapp
