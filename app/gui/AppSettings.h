#pragma once
// The GUI's settings (QSettings, organisation "Headroom"): language, theme, chart refresh rate,
// telemetry interval and notifications.
// Language takes effect at the next start (the window is built in one language); the theme and the
// chart refresh rate apply at once.
#include <QString>

class QApplication;

namespace hrapp {

struct AppSettings {
    QString language = QStringLiteral("system");  // system | en | zh_CN
    QString theme = QStringLiteral("system");     // system | light | dark
    int chartRefreshHz = 10;                      // 1..25
    int telemetryIntervalMs = 500;                // 100..10000: the hardware monitor's sampling interval
    // Notifications (app/notify): a webhook (empty URL: off) and a desktop message when a run ends.
    QString webhookUrl;
    QString webhookTemplate = QStringLiteral("generic");  // generic | wecom | dingtalk | feishu | slack
    bool notifyOnFinished = true;                  // finished and stopped runs
    bool notifyOnFailed = true;
    int notifyEveryEpochs = 0;                     // 0: no per-epoch messages
    bool desktopNotifications = true;

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
