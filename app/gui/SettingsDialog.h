#pragma once
// Edit > Preferences: language, theme, chart refresh rate, hardware sampling interval and
// notifications (webhook URL and format, when to send, a test message, desktop notifications). It edits
// an AppSettings value; the window saves and applies what exec() accepted.
#include <QDialog>

#include "gui/AppSettings.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace hrapp {

class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SettingsDialog(const AppSettings& current, QWidget* parent = nullptr);

    // What the dialog shows now (accepted or not).
    AppSettings settings() const;

    QLineEdit* webhookUrlEdit() const { return m_url; }
    QComboBox* webhookFormatCombo() const { return m_format; }

public slots:
    // Sends "Headroom: test message" to the URL and format in the dialog (not yet saved).
    void sendTestMessage();

signals:
    // The test message's fate, for the log and the status bar: level is an hr::LogLevel.
    void message(int level, const QString& text);

private:
    AppSettings m_start;
    QComboBox* m_language = nullptr;
    QComboBox* m_theme = nullptr;
    QSpinBox* m_refresh = nullptr;
    QSpinBox* m_interval = nullptr;
    QLineEdit* m_url = nullptr;
    QComboBox* m_format = nullptr;
    QCheckBox* m_onFinished = nullptr;
    QCheckBox* m_onFailed = nullptr;
    QSpinBox* m_every = nullptr;
    QCheckBox* m_desktop = nullptr;
};

}  // namespace hrapp
