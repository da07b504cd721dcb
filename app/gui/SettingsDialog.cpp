#include "gui/SettingsDialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSpinBox>

#include "base/log.h"
#include "gui/DesktopNotifier.h"
#include "notify/webhook_notifier.h"

namespace hrapp {

SettingsDialog::SettingsDialog(const AppSettings& cur, QWidget* parent) : QDialog(parent), m_start(cur) {
    setObjectName(QStringLiteral("settingsDialog"));
    setWindowTitle(tr("Preferences"));
    auto* form = new QFormLayout(this);
    m_language = new QComboBox(this);
    m_language->setObjectName(QStringLiteral("languageCombo"));
    m_language->addItem(tr("System"), "system");
    m_language->addItem(QStringLiteral("English"), "en");
    m_language->addItem(QStringLiteral("简体中文"), "zh_CN");
    m_language->setCurrentIndex(qMax(0, m_language->findData(cur.language)));
    form->addRow(tr("Language"), m_language);
    auto* note = new QLabel(tr("A new language takes effect when Headroom restarts."), this);
    note->setWordWrap(true);
    form->addRow(QString(), note);
    m_theme = new QComboBox(this);
    m_theme->setObjectName(QStringLiteral("themeCombo"));
    m_theme->addItem(tr("System"), "system");
    m_theme->addItem(tr("Light"), "light");
    m_theme->addItem(tr("Dark"), "dark");
    m_theme->setCurrentIndex(qMax(0, m_theme->findData(cur.theme)));
    form->addRow(tr("Theme"), m_theme);
    m_refresh = new QSpinBox(this);
    m_refresh->setObjectName(QStringLiteral("chartRefresh"));
    m_refresh->setRange(1, 25);
    m_refresh->setSuffix(tr(" Hz"));
    m_refresh->setValue(cur.chartRefreshHz);
    m_refresh->setToolTip(tr("How often the charts redraw during a run (at most 25 times a second)"));
    form->addRow(tr("Chart refresh rate"), m_refresh);
    m_interval = new QSpinBox(this);
    m_interval->setObjectName(QStringLiteral("telemetryInterval"));
    m_interval->setRange(100, 10000);
    m_interval->setSingleStep(100);
    m_interval->setSuffix(tr(" ms"));
    m_interval->setValue(cur.telemetryIntervalMs);
    m_interval->setToolTip(tr("How often the hardware monitor reads GPU and host figures (100 ms to 10 s)"));
    form->addRow(tr("Hardware sampling interval"), m_interval);

    auto* notify = new QGroupBox(tr("Notifications"), this);
    auto* nf = new QFormLayout(notify);
    m_url = new QLineEdit(cur.webhookUrl, notify);
    m_url->setObjectName(QStringLiteral("webhookUrl"));
    m_url->setPlaceholderText(tr("https://… (empty: no webhook)"));
    m_url->setClearButtonEnabled(true);
    m_url->setMinimumWidth(360);
    m_url->setToolTip(tr("headroom train --notify settings sends to this webhook too"));
    nf->addRow(tr("Webhook URL"), m_url);
    m_format = new QComboBox(notify);
    m_format->setObjectName(QStringLiteral("webhookFormat"));
    m_format->addItem(tr("Generic JSON"), "generic");
    m_format->addItem(tr("WeCom (企业微信)"), "wecom");
    m_format->addItem(tr("DingTalk (钉钉)"), "dingtalk");
    m_format->addItem(tr("Feishu / Lark (飞书)"), "feishu");
    m_format->addItem(tr("Slack"), "slack");
    m_format->setCurrentIndex(qMax(0, m_format->findData(cur.webhookTemplate)));
    nf->addRow(tr("Message format"), m_format);
    m_onFinished = new QCheckBox(tr("When a run finishes or is stopped"), notify);
    m_onFinished->setChecked(cur.notifyOnFinished);
    m_onFailed = new QCheckBox(tr("When a run fails"), notify);
    m_onFailed->setChecked(cur.notifyOnFailed);
    m_every = new QSpinBox(notify);
    m_every->setRange(0, 100000);
    m_every->setSpecialValueText(tr("never"));
    m_every->setPrefix(tr("every "));
    m_every->setSuffix(tr(" epochs"));
    m_every->setValue(cur.notifyEveryEpochs);
    nf->addRow(tr("Send"), m_onFinished);
    nf->addRow(QString(), m_onFailed);
    nf->addRow(tr("Progress"), m_every);
    auto* testButton = new QPushButton(tr("Send a test message"), notify);
    testButton->setObjectName(QStringLiteral("webhookTest"));
    nf->addRow(QString(), testButton);
    connect(testButton, &QPushButton::clicked, this, &SettingsDialog::sendTestMessage);
    m_desktop = new QCheckBox(tr("Show a desktop notification when a run ends"), notify);
    m_desktop->setChecked(cur.desktopNotifications);
    m_desktop->setEnabled(DesktopNotifier::available());
    if (!DesktopNotifier::available()) m_desktop->setToolTip(tr("This desktop has no system tray for notifications"));
    nf->addRow(QString(), m_desktop);
    form->addRow(notify);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

AppSettings SettingsDialog::settings() const {
    AppSettings next = m_start;
    next.language = m_language->currentData().toString();
    next.theme = m_theme->currentData().toString();
    next.chartRefreshHz = m_refresh->value();
    next.telemetryIntervalMs = m_interval->value();
    next.webhookUrl = m_url->text().trimmed();
    next.webhookTemplate = m_format->currentData().toString();
    next.notifyOnFinished = m_onFinished->isChecked();
    next.notifyOnFailed = m_onFailed->isChecked();
    next.notifyEveryEpochs = m_every->value();
    next.desktopNotifications = m_desktop->isChecked();
    return next;
}

void SettingsDialog::sendTestMessage() {
    WebhookNotifier::Settings s;
    s.url = QUrl::fromUserInput(m_url->text().trimmed());
    s.format = WebhookNotifier::templateFromName(m_format->currentData().toString()).value_or(WebhookNotifier::Template::Generic);
    // the probe outlives the dialog (a slow webhook answers after OK); its answer goes to the dialog if open
    auto* probe = new WebhookNotifier(parent() ? parent() : this);
    probe->setSettings(s);
    QPointer<SettingsDialog> self(this);
    connect(probe, &WebhookNotifier::delivered, probe, [self, probe](const QString&, int http) {
        if (self) emit self->message(int(hr::LogLevel::info), tr("Webhook test message delivered (HTTP %1)").arg(http));
        probe->deleteLater();
    });
    connect(probe, &WebhookNotifier::failed, probe, [self, probe](const QString&, const QString& text) {
        if (self) emit self->message(int(hr::LogLevel::warning), text);
        probe->deleteLater();
    });
    if (!probe->send(QStringLiteral("test"), tr("Headroom: test message"), tr("Notifications from Headroom arrive here."),
                     QJsonObject{}))
        probe->deleteLater();
}

}  // namespace hrapp
