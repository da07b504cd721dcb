// headroom-cli, the command line without widgets (app/CMakeLists.txt; issue 21): the program links no
// Qt Widgets, PrintSupport or QCustomPlot (its ELF NEEDED entries, as the dynamic loader reads them), and on
// a machine without a display it trains, records, and writes a report whose charts are drawn (PNG images
// with the chart's colours in them, a PDF). Without a subcommand it says it has no window.
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include "test_support.h"

class TestHeadlessCli : public QObject {
    Q_OBJECT
    const QString m_exe = hrtest::qbinary_path("headroom-cli");
    QTemporaryDir m_dir;

    // runs headroom-cli with no display at all
    int run(const QStringList& args, QString* out = nullptr, QString* err = nullptr) {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char* v : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) env.remove(QString::fromLatin1(v));
        p.setProcessEnvironment(env);
        p.setWorkingDirectory(m_dir.path());
        p.start(m_exe, args);
        if (!p.waitForFinished(300000)) return -1;
        if (out) *out = QString::fromUtf8(p.readAllStandardOutput());
        if (err) *err = QString::fromUtf8(p.readAllStandardError());
        return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    }

private slots:
    void linksNoWidgets() {
        QProcess p;
        p.start(QStringLiteral("readelf"), {QStringLiteral("-d"), m_exe});
        QVERIFY2(p.waitForFinished(30000) && p.exitCode() == 0, "readelf (binutils) could not read headroom-cli");
        const QString dynamic = QString::fromUtf8(p.readAllStandardOutput());
        QVERIFY2(dynamic.contains(QStringLiteral("libQt6Core.so")), qPrintable(dynamic));
        for (const char* lib : {"libQt6Widgets", "libQt6PrintSupport", "libqcustomplot", "libQt6Svg"})
            QVERIFY2(!dynamic.contains(QLatin1String(lib)), lib);
    }

    void trainsAndReportsWithoutADisplay() {
        QString out, err;
        QCOMPARE(run({"train", "--preset", "seed-cnn", "--data", "synthetic", "--train-limit", "1024", "--test-limit",
                      "256", "--epochs", "2", "--device", "cpu", "--threads", "2", "--db", "h.db", "--out", "run"},
                     &out, &err),
                 0);
        QVERIFY2(out.contains(QStringLiteral("test_accuracy=")), qPrintable(out + err));
        QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("run/run.json"))));
        QCOMPARE(run({"report", "last", "--db", "h.db", "--out", "r.pdf"}, &out, &err), 0);
        QFile pdf(m_dir.filePath(QStringLiteral("r.pdf")));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(5) == "%PDF-");
        QVERIFY(pdf.size() > 20000);
        QCOMPARE(run({"report", "last", "--db", "h.db", "--out", "r.html"}, &out, &err), 0);
        QFile html(m_dir.filePath(QStringLiteral("r.html")));
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(html.readAll());
        const QRegularExpression png(QStringLiteral("data:image/png;base64,([A-Za-z0-9+/=]+)"));
        int charts = 0;
        for (auto it = png.globalMatch(text); it.hasNext();) {
            const QImage img = QImage::fromData(QByteArray::fromBase64(it.next().captured(1).toLatin1()), "PNG");
            QVERIFY(!img.isNull());
            // drawn: ink (axes, grid, labels, data) covers more than 2 % of it, and the palette's first
            // colour (the first line) is in the curves
            int blue = 0, ink = 0;
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x) {
                    const QColor c = img.pixelColor(x, y);
                    if (c != QColor(Qt::white)) ++ink;
                    if (std::abs(c.red() - 0x1f) + std::abs(c.green() - 0x77) + std::abs(c.blue() - 0xb4) < 40) ++blue;
                }
            QVERIFY2(ink > img.width() * img.height() / 50, qPrintable(QString::number(ink)));
            // the loss, accuracy and throughput curves (a short run's telemetry may be one sample)
            if (charts < 3) QVERIFY2(blue > 100, qPrintable(QStringLiteral("chart %1: %2 pixels of the first colour").arg(charts).arg(blue)));
            ++charts;
        }
        QVERIFY2(charts >= 3, qPrintable(QString::number(charts)));  // loss, accuracy, throughput, memory
    }

    void trainsATableAndPlansItsRam() {
        // a CSV whose class follows its first column: tabular-mlp drawn for 2 features and 2 classes learns it
        QFile f(m_dir.filePath(QStringLiteral("t.csv")));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("x,y,label\n");
        for (int i = 0; i < 200; ++i) f.write(QStringLiteral("%1,%2,%3\n").arg(i % 20).arg((i * 7) % 13).arg(i % 20 < 10 ? "low" : "high").toUtf8());
        f.close();
        QString out, err;
        QCOMPARE(run({"train", "--preset", "tabular-mlp", "--data", "csv:t.csv", "--target", "label", "--device", "cpu",
                      "--threads", "1", "--db", "t.db", "--out", "table-run"},
                     &out, &err),
                 0);
        QVERIFY2((out + err).contains(QStringLiteral("tabular-mlp (4482 parameters)")), qPrintable(out + err));  // 2-64-64-2
        QVERIFY2((out + err).contains(QStringLiteral("rows/s=")), qPrintable(out + err));
        const QRegularExpression acc(QStringLiteral("test_accuracy=([0-9.]+)\\s*$"));
        const QRegularExpressionMatch m = acc.match(out.trimmed());
        QVERIFY2(m.hasMatch() && m.captured(1).toDouble() > 0.9, qPrintable(out));
        // the plan states the table's RAM: 160 + 40 rows of 2 f32 features and an i64 label
        QCOMPARE(run({"plan", "--preset", "tabular-mlp", "--data", "csv:t.csv", "--target", "label"}, &out, &err), 0);
        QVERIFY2(out.contains(QStringLiteral("takes 3.12 KiB of host RAM (160 training and 40 test samples)")), qPrintable(out + err));
        // without --target: one message naming the columns, nothing written
        QCOMPARE(run({"train", "--preset", "tabular-mlp", "--data", "csv:t.csv", "--out", "none"}, &out, &err), 2);
        QVERIFY2(err.contains(QStringLiteral("--target COLUMN")) && err.contains(QStringLiteral("x, y, label")), qPrintable(err));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("none"))));
    }

    void noWindowSaysSo() {
        QString out, err;
        QCOMPARE(run({}, &out, &err), 2);
        QVERIFY2(err.contains(QStringLiteral("no window")), qPrintable(err));
        QCOMPARE(run({"--help"}, &out, &err), 0);
        QVERIFY(out.contains(QStringLiteral("train")) && out.contains(QStringLiteral("report")));
    }
};

QTEST_MAIN(TestHeadlessCli)
#include "test_headless_cli.moc"
