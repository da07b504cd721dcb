// translations/headroom_zh_CN.ts is complete, every message core/ writes (HR_MSG) has a finished
// translation there, core text reaches the window in Chinese, and switching to zh_CN changes what the
// window shows.
#include <QAction>
#include <QDirIterator>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <QTreeWidget>
#include <QXmlStreamReader>
#include "test_support.h"

#include <cctype>

#include "builder/ModelBuilder.h"
#include "data/dataset.h"
#include "gui/AppSettings.h"
#include "gui/DataPanel.h"
#include "gui/Installation.h"
#include "gui/MainWindow.h"
#include "i18n/CoreText.h"
#include "nn/model_spec.h"
#include "session/RunController.h"
#include "session/RunEvent.h"
#include "session/RunText.h"
#include "train/config.h"
#include "train/trainer.h"

namespace {

struct CoreMessage {
    QString id, text, where;
};

// The HR_MSG("id", "text") uses in a C++ source, found by a small lexer (comments, string and character
// literals, digit separators), not by lupdate: an independent reading of what lupdate should collect.
QVector<CoreMessage> hrMsgUses(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray src = f.readAll();
    QVector<CoreMessage> out;
    const qsizetype n = src.size();
    qsizetype i = 0;
    int line = 1;
    auto skipSpace = [&](qsizetype& k) {
        while (k < n) {
            if (src[k] == '\n') ++line, ++k;
            else if (std::isspace(static_cast<unsigned char>(src[k]))) ++k;
            else if (src[k] == '/' && k + 1 < n && src[k + 1] == '/') {
                while (k < n && src[k] != '\n') ++k;
            } else if (src[k] == '/' && k + 1 < n && src[k + 1] == '*') {
                k += 2;
                while (k + 1 < n && !(src[k] == '*' && src[k + 1] == '/')) line += src[k++] == '\n';
                k += 2;
            } else break;
        }
    };
    // a "..." literal at k (k on the quote); returns its bytes, k after it
    auto readString = [&](qsizetype& k) {
        QByteArray s;
        ++k;
        while (k < n && src[k] != '"') {
            char c = src[k++];
            if (c == '\\' && k < n) {
                const char e = src[k++];
                c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            }
            s += c;
        }
        ++k;
        return s;
    };
    // adjacent literals concatenated; false when the argument is not a literal
    auto readLiterals = [&](qsizetype& k, QByteArray* value) {
        skipSpace(k);
        if (k >= n || src[k] != '"') return false;
        value->clear();
        while (k < n && src[k] == '"') {
            *value += readString(k);
            skipSpace(k);
        }
        return true;
    };
    while (i < n) {
        const char c = src[i];
        if (c == '\n') {
            ++line, ++i;
        } else if (c == '/' && i + 1 < n && (src[i + 1] == '/' || src[i + 1] == '*')) {
            skipSpace(i);
        } else if (c == '"') {
            readString(i);
        } else if (c == '\'') {
            if (i > 0 && std::isalnum(static_cast<unsigned char>(src[i - 1]))) {
                ++i;  // digit separator: 100'000
                continue;
            }
            ++i;
            while (i < n && src[i] != '\'') i += src[i] == '\\' ? 2 : 1;
            ++i;
        } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            const qsizetype start = i;
            while (i < n && (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '_')) ++i;
            if (src.mid(start, i - start) != "HR_MSG") continue;
            qsizetype k = i;
            const int at = line;
            skipSpace(k);
            if (k >= n || src[k] != '(') continue;
            ++k;
            QByteArray id, text;
            if (!readLiterals(k, &id)) continue;  // the macro's own #define
            if (k >= n || src[k] != ',') continue;
            ++k;
            if (!readLiterals(k, &text)) continue;
            out.push_back({QString::fromUtf8(id), QString::fromUtf8(text), QStringLiteral("%1:%2").arg(path).arg(at)});
            i = k;
        } else {
            ++i;
        }
    }
    return out;
}

// (context, source) -> translation of the finished messages of a .ts file
QHash<QPair<QString, QString>, QString> finishedTranslations(const QString& path) {
    QHash<QPair<QString, QString>, QString> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return out;
    QXmlStreamReader xml(&f);
    QString context, source;
    while (!xml.atEnd()) {
        xml.readNext();
        if (!xml.isStartElement()) continue;
        if (xml.name() == QLatin1String("name")) context = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        else if (xml.name() == QLatin1String("source")) source = xml.readElementText(QXmlStreamReader::IncludeChildElements);
        else if (xml.name() == QLatin1String("translation")) {
            const QString type = xml.attributes().value(QLatin1String("type")).toString();
            const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);
            if (type.isEmpty() && !text.trimmed().isEmpty()) out.insert({context, source}, text);
        }
    }
    return out;
}

QSet<QString> placeholders(const QString& s) {
    QSet<QString> out;
    static const QRegularExpression re(QStringLiteral("%[1-9]"));
    for (auto it = re.globalMatch(s); it.hasNext();) out.insert(it.next().captured());
    return out;
}

}  // namespace

class TestTranslations : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("HeadroomTest"));
    }

    void tsFileIsComplete() {
        QFile f(hrtest::qsource_path("translations/headroom_zh_CN.ts"));
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

    void everyCoreMessageHasAFinishedTranslation() {
        const auto translations = finishedTranslations(hrtest::qsource_path("translations/headroom_zh_CN.ts"));
        QVERIFY(!translations.isEmpty());
        QVector<CoreMessage> uses;
        QDirIterator it(hrtest::qsource_path("core"),
                        {QStringLiteral("*.cpp"), QStringLiteral("*.h"), QStringLiteral("*.cu"), QStringLiteral("*.cuh")},
                        QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) uses += hrMsgUses(it.next());
        // the lexer finds what it should: the catalog's help lines, the dataset texts, the out-of-memory advice
        QVERIFY2(uses.size() >= 60, qPrintable(QString::number(uses.size())));
        QStringList missing, badArgs, badIds;
        static const QRegularExpression idForm(QStringLiteral("^[a-z0-9_]+(\\.[a-z0-9_]+)+$"));
        for (const CoreMessage& m : uses) {
            if (!idForm.match(m.id).hasMatch()) badIds << QStringLiteral("%1: id \"%2\"").arg(m.where, m.id);
            const auto found = translations.constFind({m.id, m.text});
            if (found == translations.constEnd()) {
                missing << QStringLiteral("%1: %2 \"%3\"").arg(m.where, m.id, m.text);
                continue;
            }
            if (placeholders(*found) != placeholders(m.text))
                badArgs << QStringLiteral("%1: %2: the translation's placeholders differ").arg(m.where, m.id);
        }
        QVERIFY2(badIds.isEmpty(), qPrintable(badIds.join('\n')));
        QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 core messages without a finished translation (run "
                                                              "cmake --build build --target update_translations, then "
                                                              "translate):\n").arg(missing.size()) +
                                               missing.join('\n')));
        QVERIFY2(badArgs.isEmpty(), qPrintable(badArgs.join('\n')));
    }

    void coreTextReachesTheWindowInChinese() {
        // a core error with an id, from the code that throws it
        QString english;
        try {
            hr::load_dataset("cifar-99");
            QFAIL("no error");
        } catch (const hr::Error& e) {
            QCOMPARE(e.message().id, std::string("data.unknown"));
            english = hrapp::coreText(e);
            QCOMPARE(english, QString::fromUtf8(e.what()));  // no translator: the English
        }
        QCOMPARE(hrapp::installTranslators(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
        try {
            hr::load_dataset("cifar-99");
        } catch (const std::exception& e) {
            const QString zh = hrapp::coreText(e);
            QVERIFY2(zh.startsWith(QStringLiteral("未知数据集“cifar-99”")), qPrintable(zh));
            QVERIFY2(zh.contains(QStringLiteral("fashion-mnist, mnist")), qPrintable(zh));  // the argument, untouched
        }
        // the run's log: the trainer's lines reach the window and the command line in Chinese
        {
            hr::TrainConfig c;
            c.model = hr::preset_model("seed-cnn");
            c.data = "synthetic";
            c.steps = 1;
            c.device = "cpu";
            c.threads = 1;
            std::vector<hr::LogEvent> logs;
            hr::TrainCallbacks cb;
            cb.on_log = [&](const hr::LogEvent& e) { logs.push_back(e); };
            hr::Trainer t(c, cb);
            QCOMPARE(t.run().status, std::string("finished"));
            QString training;
            for (const hr::LogEvent& e : logs)
                if (e.text.id == "run.training") training = hrapp::logText(e);
            QVERIFY2(training.startsWith(QStringLiteral("训练 seed-cnn（21840 个参数）")), qPrintable(training));
            // and across a rank's relay (a JSON line), still translatable
            for (const hr::LogEvent& e : logs)
                if (e.text.id == "run.training") {
                    const auto back = std::get<hr::LogEvent>(
                        hrapp::runEventFromJson(nlohmann::json::parse(hrapp::runEventToJson(hrapp::RunEvent(e)).dump())));
                    QCOMPARE(hrapp::logText(back), training);
                }
        }
        // a run refused before training (its data set): the window's and the command line's message in Chinese
        {
            hrapp::RunController controller;
            hr::TrainConfig c;
            c.model = hr::preset_model("seed-cnn");
            c.data = "cifar-99";
            c.device = "cpu";
            hrapp::RunOptions ro;
            ro.outDir = QDir::temp().filePath(QStringLiteral("hr-refused-%1").arg(QCoreApplication::applicationPid()));
            ro.sampleTelemetry = false;
            QSignalSpy finished(&controller, &hrapp::RunController::runFinished);
            QString why;
            QVERIFY2(controller.start(c, ro, &why), qPrintable(why));
            QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
            const auto outcome = finished.first().first().value<hrapp::RunOutcome>();
            const QString shown = hrapp::resultError(outcome.result());
            QVERIFY2(shown.startsWith(QStringLiteral("未知数据集“cifar-99”")), qPrintable(shown));
            QVERIFY(!QFileInfo::exists(ro.outDir));  // nothing written
        }
        // an argument holding "%2" is not filled again
        QCOMPARE(hrapp::fillCoreArgs(QStringLiteral("%1 and %2"), {QStringLiteral("50%2"), QStringLiteral("x")}),
                 QStringLiteral("50%2 and x"));
        // the layer catalog's help in the builder's palette and properties
        {
            hrw::ModelBuilder b;
            b.resetSpec(hr::preset_model("seed-cnn"));
            QString tip;
            for (QTreeWidgetItemIterator it(b.palette()); *it; ++it)
                if ((*it)->data(0, Qt::UserRole + 3).toString() == QLatin1String("conv2d")) tip = (*it)->toolTip(0);
            QCOMPARE(tip, QStringLiteral("对 (N, C, H, W) 做二维卷积（groups = 1）"));
            // group titles and the layer names in words are translated; PyTorch's class names stay
            QSet<QString> groupKeys;
            for (const hr::LayerTypeInfo& info : hr::layer_catalog()) groupKeys << QString::fromStdString(info.group);
            for (int g = 0; g < b.palette()->topLevelItemCount(); ++g) {
                const QString title = b.palette()->topLevelItem(g)->text(0);
                QVERIFY2(!title.isEmpty() && !groupKeys.contains(title), qPrintable(title));  // not the raw key
            }
            QString tokenName, convName;
            for (QTreeWidgetItemIterator it(b.palette()); *it; ++it) {
                const QString type = (*it)->data(0, Qt::UserRole + 3).toString();
                if (type == QLatin1String("token_embedding")) tokenName = (*it)->text(0);
                if (type == QLatin1String("conv2d")) convName = (*it)->text(0);
            }
            QCOMPARE(tokenName, QStringLiteral("Token 嵌入"));
            QCOMPARE(convName, QStringLiteral("Conv2d"));
            b.selectPath({0});
            bool found = false;
            for (QWidget* w : b.findChildren<QWidget*>(QStringLiteral("attr_in_channels")))
                found = found || w->toolTip() == QStringLiteral("输入通道数 C");
            QVERIFY(found);
        }
        // the data panel's description and probe detail
        {
            hrapp::DataPanel panel;
            panel.setDataSpec(QStringLiteral("synthetic"));
            QStringList texts;
            for (QLabel* l : panel.findChildren<QLabel*>()) texts << l->text();
            QVERIFY2(texts.contains(QStringLiteral("生成的 28x28 光斑图像，10 个类别，2048/512 个样本；无需下载")),
                     qPrintable(texts.join('|')));
            QVERIFY2(texts.contains(QStringLiteral("在内存中生成")), qPrintable(texts.join('|')));
        }
        hrapp::installTranslators(QStringLiteral("en"));
        try {
            hr::load_dataset("cifar-99");
        } catch (const std::exception& e) {
            QCOMPARE(hrapp::coreText(e), english);
        }
    }

    void translationsAndIconAreFoundNextToTheProgram() {
        // an installed layout: <prefix>/bin/headroom and <prefix>/share/... (cmake/Package.cmake)
        QTemporaryDir prefix;
        QVERIFY(prefix.isValid());
        const QString bin = prefix.filePath("bin");
        QVERIFY(QDir().mkpath(bin));
        QCOMPARE(hrapp::translationFile("zh_CN", bin), QStringLiteral(":/i18n/headroom_zh_CN.qm"));  // the compiled-in one
        QVERIFY(hrapp::applicationIcon(bin).isNull() || !hrapp::applicationIcon(bin).availableSizes().contains(QSize(48, 48)));
        const QString qm = prefix.filePath("share/headroom/translations/headroom_zh_CN.qm");
        QVERIFY(QDir().mkpath(QFileInfo(qm).path()));
        QVERIFY(QFile::copy(hrtest::qbinary_path("share/headroom/translations/headroom_zh_CN.qm"), qm));
        QCOMPARE(hrapp::translationFile("zh_CN", bin), qm);
        QCOMPARE(hrapp::translationFile("xx", bin), QString());
        const QString png = prefix.filePath("share/icons/hicolor/48x48/apps/io.headroom.Headroom.png");
        QVERIFY(QDir().mkpath(QFileInfo(png).path()));
        QVERIFY(QFile::copy(hrtest::qbinary_path("share/icons/hicolor/48x48/apps/io.headroom.Headroom.png"), png));
        const QIcon icon = hrapp::applicationIcon(bin);
        QVERIFY(!icon.isNull());
        QVERIFY(icon.availableSizes().contains(QSize(48, 48)));
        // and the build tree has the same layout next to build/headroom
        QCOMPARE(hrapp::translationFile("zh_CN", hrtest::qbinary_path()),
                 hrtest::qbinary_path("share/headroom/translations/headroom_zh_CN.qm"));
        QVERIFY(!hrapp::applicationIcon(hrtest::qbinary_path()).isNull());
        // the window's language switch loads the file it finds
        QTranslator t;
        QVERIFY(t.load(qm));
        QVERIFY(!t.translate("hrapp::MainWindow", "&Start").isEmpty());
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
