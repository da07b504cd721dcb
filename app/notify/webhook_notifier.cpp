#include "notify/webhook_notifier.h"

#include "settings/AppSettings.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QLoggingCategory>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

#include <cmath>

Q_LOGGING_CATEGORY(lcWebhook, "headroom.webhook")

namespace hrapp {

QString runStatusWord(const QString& status) {
    if (status == QLatin1String("finished")) return QCoreApplication::translate("WebhookNotifier", "finished");
    if (status == QLatin1String("stopped")) return QCoreApplication::translate("WebhookNotifier", "was stopped");
    return QCoreApplication::translate("WebhookNotifier", "failed");
}

std::optional<WebhookNotifier::Template> WebhookNotifier::templateFromName(const QString& name) {
    const QString n = name.trimmed().toLower();
    if (n == QLatin1String("generic") || n == QLatin1String("json")) return Template::Generic;
    if (n == QLatin1String("wecom") || n == QLatin1String("wechat-work")) return Template::WeCom;
    if (n == QLatin1String("dingtalk")) return Template::DingTalk;
    if (n == QLatin1String("feishu") || n == QLatin1String("lark")) return Template::Feishu;
    if (n == QLatin1String("slack")) return Template::Slack;
    return std::nullopt;
}

QString WebhookNotifier::templateName(Template t) {
    switch (t) {
    case Template::Generic: return QStringLiteral("generic");
    case Template::WeCom: return QStringLiteral("wecom");
    case Template::DingTalk: return QStringLiteral("dingtalk");
    case Template::Feishu: return QStringLiteral("feishu");
    case Template::Slack: return QStringLiteral("slack");
    }
    return {};
}

QStringList WebhookNotifier::templateNames() {
    return {QStringLiteral("generic"), QStringLiteral("wecom"), QStringLiteral("dingtalk"), QStringLiteral("feishu"),
            QStringLiteral("slack")};
}

WebhookNotifier::WebhookNotifier(QObject* parent) : QObject(parent), m_network(new QNetworkAccessManager(this)) {}

QByteArray WebhookNotifier::payload(Template t, const QString& event, const QString& title, const QString& text,
                                    const QJsonObject& details) {
    const QString message = text.isEmpty() ? title : title + QLatin1Char('\n') + text;
    QJsonObject o;
    switch (t) {
    case Template::Generic:
        o = QJsonObject{{QStringLiteral("source"), QStringLiteral("headroom")},
                        {QStringLiteral("event"), event},
                        {QStringLiteral("title"), title},
                        {QStringLiteral("text"), text},
                        {QStringLiteral("details"), details}};
        break;
    case Template::WeCom:  // https://developer.work.weixin.qq.com/document/path/91770
    case Template::DingTalk:  // https://open.dingtalk.com/document/robots/custom-robot-access
        o = QJsonObject{{QStringLiteral("msgtype"), QStringLiteral("text")},
                        {QStringLiteral("text"), QJsonObject{{QStringLiteral("content"), message}}}};
        break;
    case Template::Feishu:  // https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
        o = QJsonObject{{QStringLiteral("msg_type"), QStringLiteral("text")},
                        {QStringLiteral("content"), QJsonObject{{QStringLiteral("text"), message}}}};
        break;
    case Template::Slack:  // incoming webhooks
        o = QJsonObject{{QStringLiteral("text"), message}};
        break;
    }
    return QJsonDocument(o).toJson(QJsonDocument::Compact);
}

bool WebhookNotifier::send(const QString& event, const QString& title, const QString& text,
                           const QJsonObject& details) {
    if (!m_settings.url.isValid() || m_settings.url.isEmpty()) return false;
    QNetworkRequest req(m_settings.url);
    req.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json; charset=utf-8"));
    req.setHeader(QNetworkRequest::UserAgentHeader, QStringLiteral("Headroom/%1").arg(QStringLiteral(HEADROOM_VERSION)));
    req.setTransferTimeout(qMax(100, m_settings.timeoutMs));
    QNetworkReply* reply = m_network->post(req, payload(m_settings.format, event, title, text, details));
    ++m_inFlight;
    const QString url = m_settings.url.toDisplayString(QUrl::RemoveUserInfo | QUrl::RemoveQuery);
    connect(reply, &QNetworkReply::finished, this, [this, reply, event, url] {
        --m_inFlight;
        reply->deleteLater();
        const int http = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        if (reply->error() == QNetworkReply::NoError && http >= 200 && http < 300) {
            emit delivered(event, http);
            return;
        }
        QString why;
        if (reply->error() == QNetworkReply::OperationCanceledError || reply->error() == QNetworkReply::TimeoutError)
            why = QCoreApplication::translate("WebhookNotifier", "no answer within %1 s").arg(m_settings.timeoutMs / 1000.0);
        else if (http != 0)
            why = QCoreApplication::translate("WebhookNotifier", "HTTP status %1").arg(http);
        else
            why = reply->errorString();
        const QString message = QCoreApplication::translate("WebhookNotifier", "Webhook %1 failed for '%2': %3; training is not affected.").arg(url, event, why);
        qCWarning(lcWebhook).noquote() << message;
        emit failed(event, message);
    });
    return true;
}

void WebhookNotifier::notifyRunEnded(const QString& runName, const QString& status, const QString& error,
                                     const QJsonObject& metrics) {
    const bool failedRun = status == QLatin1String("failed");
    if (failedRun ? !m_settings.onFailed : !m_settings.onFinished) return;
    const QString title = QCoreApplication::translate("WebhookNotifier", "Headroom: run \"%1\" %2").arg(runName, runStatusWord(status));
    QStringList lines;
    if (!error.isEmpty()) lines << QCoreApplication::translate("WebhookNotifier", "Error: %1").arg(error);
    const QJsonValue acc = metrics.value(QStringLiteral("test_accuracy"));
    if (acc.isDouble()) lines << QCoreApplication::translate("WebhookNotifier", "Test accuracy: %1").arg(QLocale().toString(acc.toDouble() * 100, 'f', 2) + QLatin1Char('%'));
    const QJsonValue loss = metrics.value(QStringLiteral("test_loss"));
    if (loss.isDouble()) lines << QCoreApplication::translate("WebhookNotifier", "Test loss: %1").arg(QLocale().toString(loss.toDouble(), 'g', 4));
    const QJsonValue secs = metrics.value(QStringLiteral("seconds"));
    if (secs.isDouble()) lines << QCoreApplication::translate("WebhookNotifier", "Training time: %1 s").arg(QLocale().toString(secs.toDouble(), 'f', 1));
    QJsonObject details{{QStringLiteral("run"), runName}, {QStringLiteral("status"), status},
                        {QStringLiteral("metrics"), metrics}};
    if (!error.isEmpty()) details[QStringLiteral("error")] = error;
    send(failedRun ? QStringLiteral("run_failed") : QStringLiteral("run_") + status, title,
         lines.join(QLatin1Char('\n')), details);
}

void WebhookNotifier::notifyEpoch(const QString& runName, const hr::EpochEvent& e, int totalEpochs) {
    if (m_settings.everyEpochs <= 0 || e.epoch <= 0 || e.epoch % m_settings.everyEpochs != 0) return;
    const QString title = totalEpochs > 0 ? QCoreApplication::translate("WebhookNotifier", "Headroom: run \"%1\" epoch %2 of %3").arg(runName).arg(e.epoch).arg(totalEpochs)
                                          : QCoreApplication::translate("WebhookNotifier", "Headroom: run \"%1\" epoch %2").arg(runName).arg(e.epoch);
    QStringList lines;
    lines << QCoreApplication::translate("WebhookNotifier", "Train loss: %1").arg(QLocale().toString(e.train_loss, 'g', 4));
    if (std::isfinite(e.test_accuracy))
        lines << QCoreApplication::translate("WebhookNotifier", "Test accuracy: %1").arg(QLocale().toString(e.test_accuracy * 100, 'f', 2) + QLatin1Char('%'));
    auto num = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); };
    QJsonObject details{{QStringLiteral("run"), runName},
                        {QStringLiteral("epoch"), e.epoch},
                        {QStringLiteral("epochs"), totalEpochs},
                        {QStringLiteral("train_loss"), num(e.train_loss)},
                        {QStringLiteral("train_accuracy"), num(e.train_accuracy)},
                        {QStringLiteral("test_loss"), num(e.test_loss)},
                        {QStringLiteral("test_accuracy"), num(e.test_accuracy)},
                        {QStringLiteral("seconds"), num(e.seconds)}};
    send(QStringLiteral("epoch"), title, lines.join(QLatin1Char('\n')), details);
}

// ---- which webhook ----------------------------------------------------------------------------------

WebhookNotifier::Settings savedNotifySettings() {
    const AppSettings a = AppSettings::load();
    WebhookNotifier::Settings s;
    s.url = a.webhookUrl.isEmpty() ? QUrl() : QUrl::fromUserInput(a.webhookUrl);
    s.format = WebhookNotifier::templateFromName(a.webhookTemplate).value_or(WebhookNotifier::Template::Generic);
    s.onFinished = a.notifyOnFinished;
    s.onFailed = a.notifyOnFailed;
    s.everyEpochs = a.notifyEveryEpochs;
    return s;
}

bool parseNotifyTarget(const QString& spec, WebhookNotifier::Settings* out, QString* error) {
    auto fail = [&](const QString& message) {
        if (error) *error = message;
        return false;
    };
    const QString text = spec.trimmed();
    if (text == QLatin1String("settings")) {
        if (!out) return true;  // read when the run starts
        *out = savedNotifySettings();
        if (out->url.isEmpty())
            return fail(QCoreApplication::translate("WebhookNotifier", "the window's Preferences have no webhook URL; set one "
                                                                         "there (Notifications) or give a URL"));
        return true;
    }
    WebhookNotifier::Settings s;
    QString urlText = text;
    std::optional<WebhookNotifier::Template> format;
    const int colon = text.indexOf(QLatin1Char(':'));
    if (colon > 0 && !text.mid(colon).startsWith(QLatin1String("://"))) {
        format = WebhookNotifier::templateFromName(text.left(colon));
        if (!format)
            return fail(QCoreApplication::translate("WebhookNotifier", "unknown message format '%1'; use %2")
                            .arg(text.left(colon), WebhookNotifier::templateNames().join(QStringLiteral(", "))));
        urlText = text.mid(colon + 1);
    }
    const QUrl url(urlText, QUrl::StrictMode);
    if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")) ||
        url.host().isEmpty())
        return fail(QCoreApplication::translate("WebhookNotifier", "'%1' is not a webhook: give an http(s) URL, FORMAT:URL or "
                                                                     "'settings'")
                        .arg(spec));
    if (!format) {
        const QString host = url.host().toLower();
        if (host == QLatin1String("qyapi.weixin.qq.com")) format = WebhookNotifier::Template::WeCom;
        else if (host == QLatin1String("oapi.dingtalk.com")) format = WebhookNotifier::Template::DingTalk;
        else if (host == QLatin1String("open.feishu.cn") || host == QLatin1String("open.larksuite.com"))
            format = WebhookNotifier::Template::Feishu;
        else if (host == QLatin1String("hooks.slack.com")) format = WebhookNotifier::Template::Slack;
        else format = WebhookNotifier::Template::Generic;
    }
    s.url = url;
    s.format = *format;
    if (out) *out = s;
    return true;
}

}  // namespace hrapp
