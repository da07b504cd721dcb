// The `headroom` command line: train, presets, devices (and report/plan where built), or the main
// window when no subcommand is given.
#include "cli/cli.h"

#include <unistd.h>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocale>
#include <QTranslator>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/plan_command.h"
#include "cli/train_command.h"
#include "gui/gui_main.h"
#include "report/report_command.h"

namespace hrapp {

namespace {


void print(const QString& s) { std::fputs(s.toLocal8Bit().constData(), stdout); }
void eprint(const QString& s) { std::fputs(s.toLocal8Bit().constData(), stderr); }

QString mainHelp() {
    return QCoreApplication::translate("Cli", "Headroom %1: train neural networks within your GPU's memory, and see why memory is what it is.\n"
              "\n"
              "Usage:\n"
              "  headroom                      open the workbench window\n"
              "  headroom train [options]      train a model headless (see headroom train --help)\n"
              "  headroom plan [options]       predict a run's memory by category and layer; --budget finds\n"
              "                                the strategies that fit (see headroom plan --help)\n"
              "  headroom presets              list the built-in models\n"
              "  headroom devices              list the devices Headroom can train on\n"
              "  headroom runs [options]       list the run history\n"
              "  headroom report RUN [options] write a run's report (html, pdf, json, csv)\n"
              "  headroom --version            print the version\n"
              "  headroom --help               this help\n"
              "\n"
              "Exit codes: 0 success, 1 failure, 2 bad input (a flag, file, model spec or dataset).\n")
        .arg(QString::fromUtf8(HEADROOM_VERSION));
}

bool haveDisplay() {
    const char* platform = std::getenv("QT_QPA_PLATFORM");
    if (platform && *platform) return true;  // offscreen, xcb, wayland: the user chose
    return (std::getenv("DISPLAY") && *std::getenv("DISPLAY")) ||
           (std::getenv("WAYLAND_DISPLAY") && *std::getenv("WAYLAND_DISPLAY"));
}

// Installs the zh_CN (or other) translation for command-line messages when the locale asks for it.
void installCliTranslator(QCoreApplication& app) {
    static QTranslator translator;
    if (translator.load(QLocale(), QStringLiteral("headroom"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        app.installTranslator(&translator);
}

}  // namespace

int run_main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    // Qt warns on every start when XDG_RUNTIME_DIR is unset (servers, containers, CI): give it one.
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        QByteArray dir = QDir::tempPath().toLocal8Bit() + "/runtime-" + QByteArray::number(::getuid());
        QDir().mkpath(QString::fromLocal8Bit(dir));
        QFile::setPermissions(QString::fromLocal8Bit(dir), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                                                QFileDevice::ExeOwner);
        qputenv("XDG_RUNTIME_DIR", dir);
    }
    if (args.empty()) {
        if (!haveDisplay()) {
            QCoreApplication app(argc, argv);
            installCliTranslator(app);
            eprint(QCoreApplication::translate("Cli", "headroom: no display found, so the window cannot open.\n"
                      "Run headless instead, for example:\n"
                      "  headroom train --preset seed-cnn --data fashion-mnist --epochs 1 --out runs/demo\n"
                      "or start the window under a display (DISPLAY / WAYLAND_DISPLAY), e.g. with xvfb-run.\n"
                      "See headroom --help.\n"));
            return 2;
        }
        return run_gui(argc, argv);
    }
    const std::string& cmd = args[0];
    // Subcommands that open windows or render charts need a QApplication; report handles its own.
    if (cmd == "gui") return run_gui(argc, argv);
    if (cmd == "report" || cmd == "runs") {
        QStringList rest;
        for (std::size_t i = 1; i < args.size(); ++i) rest << QString::fromStdString(args[i]);
        return cmd == "report" ? run_report_command(rest) : run_runs_command(rest);
    }

    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("Headroom"));
    QCoreApplication::setOrganizationName(QStringLiteral("Headroom"));
    installCliTranslator(app);
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        print(mainHelp());
        return 0;
    }
    if (cmd == "--version" || cmd == "-v") {
        print(QStringLiteral("headroom %1\n").arg(QString::fromUtf8(HEADROOM_VERSION)));
        return 0;
    }
    if (cmd == "train") return run_train_command(rest);
    if (cmd == "plan") return run_plan_command(rest);
    if (cmd == "presets") return run_presets_command(rest);
    if (cmd == "devices") return run_devices_command(rest);
    eprint(QCoreApplication::translate("Cli", "headroom: unknown command '%1'; use train, plan, presets, devices, runs or report (see headroom --help)\n")
               .arg(QString::fromStdString(cmd)));
    return 2;
}

}  // namespace hrapp
