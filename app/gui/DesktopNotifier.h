#pragma once
// DesktopNotifier: the window's tray message when a run ends, where the desktop has a system tray (a
// widget of the window's: the command line, app/notify, sends webhooks only).
#include <QObject>
#include <QString>

class QSystemTrayIcon;

namespace hrapp {

class DesktopNotifier : public QObject {
    Q_OBJECT
public:
    explicit DesktopNotifier(QObject* parent = nullptr);
    ~DesktopNotifier() override;
    static bool available();  // a system tray exists
    // Shows "Run <name> finished" etc.; returns false where no tray is available.
    bool notifyRunEnded(const QString& runName, const QString& status, const QString& error = QString());

private:
    QSystemTrayIcon* m_tray = nullptr;
};

}  // namespace hrapp
