#pragma once
// The program's settings (QSettings, organisation "Headroom"): language, theme, chart refresh rate,
// telemetry interval and notifications. QtCore only: the command line and the notifiers read them too
// (the window's Preferences edit them; gui/AppSettings.h applies the language and the theme).
// Language takes effect at the next start (the window is built in one language); the theme and the
// chart refresh rate apply at once.
#include <QString>

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

}  // namespace hrapp
