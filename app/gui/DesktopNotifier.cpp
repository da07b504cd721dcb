#include "gui/DesktopNotifier.h"

#include <QApplication>
#include <QCoreApplication>
#include <QStyle>
#include <QSystemTrayIcon>

#include "notify/webhook_notifier.h"

namespace hrapp {

DesktopNotifier::DesktopNotifier(QObject* parent) : QObject(parent) {}
DesktopNotifier::~DesktopNotifier() = default;

bool DesktopNotifier::available() {
    return qobject_cast<QApplication*>(QCoreApplication::instance()) && QSystemTrayIcon::isSystemTrayAvailable() &&
           QSystemTrayIcon::supportsMessages();
}

bool DesktopNotifier::notifyRunEnded(const QString& runName, const QString& status, const QString& error) {
    if (!available()) return false;
    if (!m_tray) {
        m_tray = new QSystemTrayIcon(this);
        m_tray->setIcon(QApplication::windowIcon().isNull()
                            ? QApplication::style()->standardIcon(QStyle::SP_ComputerIcon)
                            : QApplication::windowIcon());
        m_tray->setToolTip(QStringLiteral("Headroom"));
        m_tray->show();
    }
    const bool failedRun = status == QLatin1String("failed");
    const QString title = QCoreApplication::translate("WebhookNotifier", "Run \"%1\" %2").arg(runName, runStatusWord(status));
    m_tray->showMessage(title, error.isEmpty() ? QStringLiteral("Headroom") : error,
                        failedRun ? QSystemTrayIcon::Warning : QSystemTrayIcon::Information, 8000);
    return true;
}

}  // namespace hrapp
