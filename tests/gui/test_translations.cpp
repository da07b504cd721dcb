// translations/headroom_zh_CN.ts is complete, and switching to zh_CN changes what the window shows.
#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QMenuBar>
#include <QStandardPaths>
#include <QTest>
#include <QXmlStreamReader>

#include "gui/AppSettings.h"
#include "gui/MainWindow.h"

class TestTranslations : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
    }

    void tsFileIsComplete() {
        QFile f(QStringLiteral(HR_SOURCE_DIR "/translations/headroom_zh_CN.ts"));
        QVERIFY2(f.open(QIODevice::ReadOnly), "translations/headroom_zh_CN.ts is missing");
        QXmlStreamReader xml(&f);
        int messages = 0;
        QStringList bad;
        QString context, source;
        while (!xml.atEnd()) {
            xml.readNext();
            if (!xml.isStartElement()) continue;
            if (xml.name() == QLatin1String("name")) context = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            else if (xml.name() == QLatin1String("source")) source = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            else if (xml.name() == QLatin1String("translation")) {
                ++messages;
                const QString type = xml.attributes().value(QLatin1String("type")).toString();
                const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
                if (!type.isEmpty() || text.trimmed().isEmpty())
                    bad << QStringLiteral("%1: \"%2\" (%3)").arg(context, source, type.isEmpty() ? QStringLiteral("empty") : type);
            }
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(messages > 100);
        QVERIFY2(bad.isEmpty(), qPrintable(QStringLiteral("%1 unfinished entries:\n").arg(bad.size()) + bad.join('\n')));
    }

    void switchingToChineseChangesTexts() {
        QString englishStart, englishFile, englishDock;
        {
            hrapp::installTranslators(QStringLiteral("en"));
            hrapp::MainWindow w;
            w.setPersistState(false);
            englishStart = w.startAction()->text();
            englishFile = w.menuBar()->actions().first()->text();
            englishDock = w.findChild<QDockWidget*>(QStringLiteral("builderDock"))->windowTitle();
        }
        QCOMPARE(englishStart, QStringLiteral("&Start"));
        QCOMPARE(hrapp::installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        {
            hrapp::MainWindow w;
            w.setPersistState(false);
            QVERIFY(w.startAction()->text() != englishStart);
            QVERIFY(w.menuBar()->actions().first()->text() != englishFile);
            const QString dock = w.findChild<QDockWidget*>(QStringLiteral("builderDock"))->windowTitle();
            QVERIFY(dock != englishDock);
            QVERIFY2(dock.contains(QChar(0x6a21)), qPrintable(dock));  // 模型
        }
        hrapp::installTranslators(QStringLiteral("en"));
    }
};

QTEST_MAIN(TestTranslations)
#include "test_translations.moc"
