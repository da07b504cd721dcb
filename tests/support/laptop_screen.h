// A GUI test's main() on Qt's offscreen platform with one 1366 x 768 screen at 96 dpi (a configuration
// file the platform reads), so that layout checks and screenshots see the laptop screen the window must fit.
#pragma once

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QTest>

namespace hrtest {

template <class Test>
int run_on_laptop_screen(int argc, char** argv, int width = 1366, int height = 768) {
    const QString config = QDir::temp().filePath(
        QStringLiteral("headroom-test-screen-%1.json").arg(QCoreApplication::applicationPid()));
    {
        QFile f(config);
        if (!f.open(QIODevice::WriteOnly)) return 2;
        f.write(QStringLiteral(R"({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": %1, "height": %2,
                                   "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]})")
                    .arg(width)
                    .arg(height)
                    .toUtf8());
    }
    qputenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + config).toLocal8Bit());
    int rc = 0;
    {
        QApplication app(argc, argv);
        Test test;
        rc = QTest::qExec(&test, argc, argv);
    }
    QFile::remove(config);
    return rc;
}

}  // namespace hrtest
