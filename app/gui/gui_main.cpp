#include "gui/gui_main.h"

#include <QApplication>

#include "gui/AppSettings.h"
#include "gui/Installation.h"
#include "gui/MainWindow.h"

namespace hrapp {

int run_gui(int argc, char** argv, const GuiOptions& options) {
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
    QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    QCoreApplication::setApplicationVersion(QStringLiteral(HEADROOM_VERSION));
    QGuiApplication::setDesktopFileName(QString::fromLatin1(kAppId));  // the .desktop entry (Wayland, taskbars)
    QApplication::setWindowIcon(applicationIcon());                     // installed or build-tree icon files
    const AppSettings settings = AppSettings::load();
    QString lang = options.language;
    if (lang.isEmpty()) lang = qEnvironmentVariable("HEADROOM_LANG");
    if (lang.isEmpty()) lang = settings.language;
    installTranslators(lang);
    applyTheme(options.theme.isEmpty() ? settings.theme : options.theme);

    MainWindow w;
    if (options.prepare) options.prepare(w);
    w.show();
    return app.exec();
}

}  // namespace hrapp
