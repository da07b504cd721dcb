#pragma once
// The GUI's settings (QSettings, organisation "Headroom"): language, theme, chart refresh rate.
// Language takes effect at the next start (the window is built in one language); the theme and the
// chart refresh rate apply at once.
#include <QString>

class QApplication;

namespace hrapp {

struct AppSettings {
    QString language = QStringLiteral("system");  // system | en | zh_CN
    QString theme = QStringLiteral("system");     // system | light | dark
    int chartRefreshHz = 20;                      // 1..25

    static AppSettings load();
    void save() const;
};

// Installs the translators for `language` ("system" follows the locale) on the application;
// returns the language actually loaded ("en" when none).
QString installTranslators(const QString& language);
// Fusion with a light or dark palette; "system" keeps the platform's style and palette.
void applyTheme(const QString& theme);
bool isDarkPalette();

}  // namespace hrapp
