// The project's layers and seams (docs/design.md, docs/architecture.md), read off the #include lines of
// the source tree, so a change that crosses one fails here instead of in a review:
// - core/ includes nothing from app/ or widgets/ (the engine knows no front end);
// - widgets/ includes nothing from app/;
// - app/cli, app/session, app/store, app/notify, app/settings and app/report include nothing from app/gui
//   (the command line and the run lifecycle work without the window);
// - the run library (those rooms and app/i18n, linked into headroom-cli) includes no widget: nothing of
//   widgets/ but its QtCore text (text/CoreText.h), no QCustomPlot, no QtWidgets header;
// - app/report includes nothing from app/cli (the command line uses the report, not the other way);
// - core/backend/cpu and core/backend/cuda include nothing from each other (what they share, the argument
//   checks, is core/backend/op_checks.h and transformer_checks.h).
#include <QtTest>
#include "test_support.h"

#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>

namespace {

struct Include {
    QString file;  // relative to the source tree
    int line = 0;
    QString target;  // what it includes, as written ("a/b.h" or <QtHeader> without the quotes or brackets)
};

QVector<Include> includesUnder(const QString& root, const QString& dir) {
    QVector<Include> out;
    static const QRegularExpression re(QStringLiteral("^\\s*#\\s*include\\s*[\"<]([^\">]+)[\">]"));
    QDirIterator it(root + QLatin1Char('/') + dir, {QStringLiteral("*.cpp"), QStringLiteral("*.h"), QStringLiteral("*.cu"),
                                                     QStringLiteral("*.cuh")},
                    QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) continue;
        int n = 0;
        while (!f.atEnd()) {
            ++n;
            const QString line = QString::fromUtf8(f.readLine());
            const auto m = re.match(line);
            if (m.hasMatch()) out.push_back({path.mid(root.size() + 1), n, m.captured(1)});
        }
    }
    return out;
}

// "file:line includes target" for every include under `dir` whose target starts with one of `forbidden`
QStringList crossings(const QString& root, const QString& dir, const QStringList& forbidden) {
    QStringList bad;
    for (const Include& inc : includesUnder(root, dir))
        for (const QString& f : forbidden)
            if (inc.target.startsWith(f)) bad << QStringLiteral("%1:%2 includes \"%3\"").arg(inc.file).arg(inc.line).arg(inc.target);
    return bad;
}

}  // namespace

class TestLayers : public QObject {
    Q_OBJECT
    const QString m_root = hrtest::qsource_path();

private slots:
    void theTreeIsThere() {
        // the checks below would pass on an empty tree: make sure they read the real one
        QVERIFY(includesUnder(m_root, QStringLiteral("core")).size() > 200);
        QVERIFY(includesUnder(m_root, QStringLiteral("app/gui")).size() > 100);
        QVERIFY(!crossings(m_root, QStringLiteral("app/gui"), {QStringLiteral("session/")}).isEmpty());
    }

    void coreKnowsNoFrontEnd() {
        // app/'s rooms as core would name them (core's own include root is core/)
        const QStringList app = {QStringLiteral("gui/"), QStringLiteral("cli/"), QStringLiteral("session/"), QStringLiteral("store/"),
                                 QStringLiteral("report/"), QStringLiteral("notify/"), QStringLiteral("settings/"),
                                 QStringLiteral("charts/"), QStringLiteral("widgets/")};
        const QStringList bad = crossings(m_root, QStringLiteral("core"), app);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void theExportersStayOutOfCore() {
        // exporters/ (the ONNX file: exporters/onnx) is on core, never the reverse, and knows no front end or Qt
        QVERIFY(includesUnder(m_root, QStringLiteral("exporters")).size() > 5);
        QStringList bad = crossings(m_root, QStringLiteral("core"), {QStringLiteral("exporters/")});
        bad += crossings(m_root, QStringLiteral("exporters"),
                         {QStringLiteral("gui/"), QStringLiteral("cli/"), QStringLiteral("session/"), QStringLiteral("widgets/"),
                          QStringLiteral("Q")});
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void widgetsKnowNoApp() {
        const QStringList app = {QStringLiteral("gui/"), QStringLiteral("cli/"), QStringLiteral("session/"), QStringLiteral("store/"),
                                 QStringLiteral("report/"), QStringLiteral("notify/")};
        const QStringList bad = crossings(m_root, QStringLiteral("widgets"), app);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void theRunWorksWithoutTheWindow() {
        QStringList bad;
        for (const char* room : {"app/cli", "app/session", "app/store", "app/notify", "app/settings", "app/report"})
            bad << crossings(m_root, QLatin1String(room), {QStringLiteral("gui/")});
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void theRunLibraryHasNoWidgets() {
        QStringList bad;
        for (const char* room : {"app/cli", "app/session", "app/store", "app/notify", "app/settings", "app/report", "app/i18n"})
            bad << crossings(m_root, QLatin1String(room),
                             {QStringLiteral("charts/"), QStringLiteral("builder/"), QStringLiteral("qcustomplot"), QStringLiteral("QApplication"), QStringLiteral("QWidget"),
                              QStringLiteral("QtWidgets"), QStringLiteral("QSystemTrayIcon"), QStringLiteral("QStyle"),
                              QStringLiteral("QPrinter")});
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void theReportKnowsNoCommandLine() {
        const QStringList bad = crossings(m_root, QStringLiteral("app/report"), {QStringLiteral("cli/")});
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }

    void theBackendsKnowNotEachOther() {
        QStringList bad = crossings(m_root, QStringLiteral("core/backend/cpu"), {QStringLiteral("backend/cuda/")});
        bad << crossings(m_root, QStringLiteral("core/backend/cuda"), {QStringLiteral("backend/cpu/")});
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QLatin1Char('\n'))));
    }
};

QTEST_APPLESS_MAIN(TestLayers)
#include "test_layers.moc"
