#include "settings/AppSettings.h"

#include <QSettings>

namespace hrapp {

AppSettings AppSettings::load() {
    QSettings s;
    AppSettings a;
    a.language = s.value(QStringLiteral("ui/language"), a.language).toString();
    a.theme = s.value(QStringLiteral("ui/theme"), a.theme).toString();
    a.chartRefreshHz = qBound(1, s.value(QStringLiteral("ui/chartRefreshHz"), a.chartRefreshHz).toInt(), 25);
    a.telemetryIntervalMs =
        qBound(100, s.value(QStringLiteral("telemetry/intervalMs"), a.telemetryIntervalMs).toInt(), 10000);
    a.webhookUrl = s.value(QStringLiteral("notify/webhookUrl"), a.webhookUrl).toString();
    a.webhookTemplate = s.value(QStringLiteral("notify/webhookTemplate"), a.webhookTemplate).toString();
    a.notifyOnFinished = s.value(QStringLiteral("notify/onFinished"), a.notifyOnFinished).toBool();
    a.notifyOnFailed = s.value(QStringLiteral("notify/onFailed"), a.notifyOnFailed).toBool();
    a.notifyEveryEpochs = qMax(0, s.value(QStringLiteral("notify/everyEpochs"), a.notifyEveryEpochs).toInt());
    a.desktopNotifications = s.value(QStringLiteral("notify/desktop"), a.desktopNotifications).toBool();
    return a;
}

void AppSettings::save() const {
    QSettings s;
    s.setValue(QStringLiteral("ui/language"), language);
    s.setValue(QStringLiteral("ui/theme"), theme);
    s.setValue(QStringLiteral("ui/chartRefreshHz"), chartRefreshHz);
    s.setValue(QStringLiteral("telemetry/intervalMs"), telemetryIntervalMs);
    s.setValue(QStringLiteral("notify/webhookUrl"), webhookUrl);
    s.setValue(QStringLiteral("notify/webhookTemplate"), webhookTemplate);
    s.setValue(QStringLiteral("notify/onFinished"), notifyOnFinished);
    s.setValue(QStringLiteral("notify/onFailed"), notifyOnFailed);
    s.setValue(QStringLiteral("notify/everyEpochs"), notifyEveryEpochs);
    s.setValue(QStringLiteral("notify/desktop"), desktopNotifications);
}

}  // namespace hrapp
