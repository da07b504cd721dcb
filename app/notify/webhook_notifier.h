#pragma once
// WebhookNotifier: POSTs JSON to a webhook when a run finishes, fails (or is stopped), and every N
// epochs, in the generic format or a chat bot's (WeCom, DingTalk, Feishu, Slack). A webhook that fails
// or does not answer within the time-out is logged and reported through failed(); it never blocks or
// disturbs training (everything is asynchronous on the notifier's thread, normally the GUI thread).
// (The window's tray message when a run ends: gui/DesktopNotifier.h.)
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

#include <optional>

#include "train/events.h"

class QNetworkAccessManager;
class QNetworkReply;

namespace hrapp {

class WebhookNotifier : public QObject {
    Q_OBJECT
public:
    enum class Template { Generic, WeCom, DingTalk, Feishu, Slack };
    static std::optional<Template> templateFromName(const QString& name);  // generic|wecom|dingtalk|feishu|slack
    static QString templateName(Template t);
    static QStringList templateNames();

    struct Settings {
        QUrl url;                       // empty: off
        Template format = Template::Generic;
        bool onFinished = true;         // finished and stopped runs
        bool onFailed = true;
        int everyEpochs = 0;            // 0: no per-epoch messages
        int timeoutMs = 10000;
    };

    explicit WebhookNotifier(QObject* parent = nullptr);
    void setSettings(const Settings& s) { m_settings = s; }
    const Settings& settings() const { return m_settings; }

    // status: finished | stopped | failed. metrics: final metrics (test_accuracy, seconds, ...).
    void notifyRunEnded(const QString& runName, const QString& status, const QString& error = QString(),
                        const QJsonObject& metrics = QJsonObject());
    // Sends when everyEpochs > 0 and e.epoch is a multiple of it.
    void notifyEpoch(const QString& runName, const hr::EpochEvent& e, int totalEpochs = 0);

    // The request body for a message in a template (public for tests and previews).
    static QByteArray payload(Template t, const QString& event, const QString& title, const QString& text,
                              const QJsonObject& details);
    // Sends one message now (whatever the event switches say). Returns false when no URL is set.
    bool send(const QString& event, const QString& title, const QString& text, const QJsonObject& details);

    int inFlight() const { return m_inFlight; }

signals:
    void delivered(const QString& event, int httpStatus);
    void failed(const QString& event, const QString& message);  // already logged

private:
    QNetworkAccessManager* m_network;
    Settings m_settings;
    int m_inFlight = 0;
};

// The webhook a front end asked for: a URL (the message format follows the host: WeCom, DingTalk,
// Feishu/Lark, Slack, else generic JSON), FORMAT:URL (FORMAT one of templateNames()), or "settings"
// for the webhook saved in the window's Preferences. False with a message in *error; *out (may be
// null) receives the settings (URL URLs notify when a run ends, as the Preferences' defaults do).
bool parseNotifyTarget(const QString& spec, WebhookNotifier::Settings* out, QString* error);
// The webhook of the window's Preferences (AppSettings: URL, format, when).
WebhookNotifier::Settings savedNotifySettings();

// "finished", "was stopped", "failed": the status of a run's end as a notification says it (translated).
QString runStatusWord(const QString& status);


}  // namespace hrapp
