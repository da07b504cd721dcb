// Issue 57 items 5 and 6 in the window. A tiny LoRA run (llama-tiny, r 4 on q and v, random start) trained here
// through the RunController with a Sample panel attached: its "Before and after" shows the starting model (the
// adapters switched off) and the trained one, greedy and sampled with one seed; the texts differ where LoRA
// changed the model, and each equals what `headroom generate --run DIR [--before]` prints for the same options;
// the comparison lands in the run's report with the validation loss at step 0 and at the end. Then the Runs
// tab's Export menu: the Hugging Face folder and the peft adapter the dialog writes (on its worker thread) equal
// `headroom export DIR --hf` / `--peft` byte for byte, the GGUF file (q8_0) equals `--gguf --type q8_0`'s, and
// ONNX of a language model is refused with one message and nothing written. Screenshots of the Sample tab's
// comparison and the export dialog at 1366 x 768 in English and Chinese when HEADROOM_SHOTS names a folder.
#include <QtTest>
#include "test_support.h"

#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "gui/AppSettings.h"
#include "gui/BeforeAfterView.h"
#include "gui/ExportDialog.h"
#include "gui/RunsView.h"
#include "gui/SamplePanel.h"
#include "nn/model_spec.h"
#include "report/report_writer.h"
#include "session/RunController.h"
#include "store/run_store.h"

using namespace hrapp;

namespace {

// The files under a folder, by relative path, with their bytes
QMap<QString, QByteArray> filesUnder(const QString& dir) {
    QMap<QString, QByteArray> out;
    QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile f(path);
        if (f.open(QIODevice::ReadOnly)) out.insert(QDir(dir).relativeFilePath(path), f.readAll());
    }
    return out;
}

QByteArray fileBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestBeforeAfterWindow : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_run;     // the LoRA run's folder
    qint64 m_runId = 0;

    QString corpus() {
        const QString path = m_dir.filePath(QStringLiteral("corpus.txt"));
        if (QFile::exists(path)) return path;
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write the corpus");
        for (int i = 0; i < 400; ++i) f.write(i % 2 ? "the cat is a zebra now\n" : "the cat says moo to the cow\n");
        return path;
    }
    QString db() const { return m_dir.filePath(QStringLiteral("history.db")); }

    // `headroom ARGS`: its stdout (exit code 0 asserted by the caller through *code)
    static QString headroom(const QStringList& args, int* code) {
        QProcess p;
        p.start(hrtest::qbinary_path("headroom"), args);
        if (!p.waitForFinished(300000)) {
            *code = -1;
            return {};
        }
        *code = p.exitCode();
        if (*code != 0) qWarning("%s", p.readAllStandardError().constData());
        return QString::fromUtf8(p.readAllStandardOutput());
    }

    void shoot(QWidget& w, const QString& name) {
        const QByteArray folder = qgetenv("HEADROOM_SHOTS");
        if (folder.isEmpty()) return;
        QVERIFY(w.grab().save(QDir(QString::fromLocal8Bit(folder)).filePath(name)));
    }

private slots:
    void initTestCase() {
        if (!QFile::exists(hrtest::qbinary_path("headroom"))) QSKIP("the headroom program is not built");
    }

    void comparesBeforeAndAfter() {
        RunStore store;
        QVERIFY(store.open(db()));
        RunController controller;
        SamplePanel panel(&controller);
        panel.resize(1366, 768);
        panel.show();
        hr::GenerateOptions o;
        o.prompt = "the cat";
        o.tokens = 24;
        o.temperature = 0.9;
        panel.setOptions(o);
        hr::TrainConfig c = defaultTrainConfig();
        c.model = hr::preset_model("llama-tiny");
        c.model_source = "preset:llama-tiny";
        c.data = "text:" + corpus().toStdString();
        c.steps = 60;
        c.batch = 8;
        c.threads = 2;
        c.eval_tokens = 512;
        c.device = "cpu";
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 3e-2;
        c.strategy.lora_rank = 4;
        c.strategy.lora_alpha = 8;
        RunOptions ro;
        m_run = m_dir.filePath(QStringLiteral("lora-run"));
        ro.outDir = m_run;
        ro.store = &store;
        ro.sampleTelemetry = false;
        QSignalSpy finished(&controller, &RunController::runFinished);
        QString why;
        QVERIFY2(controller.start(c, ro, &why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 300000);
        BeforeAfterView* view = panel.beforeAfter();
        QVERIFY(view);
        QCOMPARE(QDir(view->runFolder()), QDir(m_run));
        QVERIFY(view->compareButton()->isEnabled());
        QVERIFY2(view->losses().contains(QLatin1String("step 0")), qPrintable(view->losses()));
        QSignalSpy compared(view, &BeforeAfterView::compared);
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isGenerating(), 120000);  // (the panel's own sample of the ended run)
        QTest::mouseClick(view->compareButton(), Qt::LeftButton);
        QVERIFY(view->isComparing());
        QTRY_VERIFY_WITH_TIMEOUT(!compared.isEmpty(), 120000);
        QVERIFY2(compared.first().first().toBool(), qPrintable(view->status()));
        QVERIFY2(view->status().contains(QLatin1String("adapters switched off")), qPrintable(view->status()));
        const QString gb = view->text(BeforeAfterView::Greedy, BeforeAfterView::Before);
        const QString ga = view->text(BeforeAfterView::Greedy, BeforeAfterView::After);
        const QString sb = view->text(BeforeAfterView::Sampled, BeforeAfterView::Before);
        const QString sa = view->text(BeforeAfterView::Sampled, BeforeAfterView::After);
        QVERIFY(!gb.isEmpty() && !ga.isEmpty() && !sb.isEmpty() && !sa.isEmpty());
        QVERIFY2(gb != ga, qPrintable(gb + QStringLiteral(" | ") + ga));  // LoRA changed the model
        QVERIFY2(sb != sa, qPrintable(sb + QStringLiteral(" | ") + sa));
        // each equals the command line's, before (--before) and after, greedy and sampled (seed 1)
        for (const bool before : {true, false})
            for (const bool greedy : {true, false}) {
                QStringList args{"generate", "--run", m_run, "--prompt", "the cat", "--tokens", "24", "--temperature",
                                 greedy ? "0" : "0.9", "--seed", "1", "--threads", "1"};
                if (before) args << "--before";
                int code = 0;
                const QString out = headroom(args, &code);
                QCOMPARE(code, 0);
                const QString shown = greedy ? (before ? gb : ga) : (before ? sb : sa);
                QCOMPARE(out, QStringLiteral("the cat") + shown + QLatin1Char('\n'));
            }
        // the report: both samples and the losses
        const auto runs = store.listRuns();
        QVERIFY(!runs.isEmpty());
        m_runId = runs.first().id;
        const auto data = ReportWriter::load(store, m_runId);
        QVERIFY(data);
        const QString html = ReportWriter(*data).html();
        QVERIFY(html.contains(QLatin1String("Before and after")));
        QVERIFY(html.contains(QLatin1String("adapters switched off")));
        QVERIFY(html.contains((QStringLiteral("the cat") + ga).toHtmlEscaped().left(20)));
        QVERIFY(html.contains(QLatin1String("Validation loss")));
        // pictures: the Sample tab with its comparison, English and Chinese
        for (const QString lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            installTranslators(lang);
            SamplePanel shot(&controller);
            shot.resize(1366, 768);
            shot.beforeAfter()->setRunFolder(m_run);
            shot.setOptions(o);
            shot.show();
            QSignalSpy done(shot.beforeAfter(), &BeforeAfterView::compared);
            shot.beforeAfter()->compare();
            QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 120000);
            QCOMPARE(shot.beforeAfter()->text(BeforeAfterView::Greedy, BeforeAfterView::After), ga);
            shoot(shot, QStringLiteral("before-after-%1.png").arg(lang));
        }
        installTranslators(QStringLiteral("en"));
    }

    void exportsFromTheRunsTab() {
        QVERIFY2(!m_run.isEmpty() && m_runId > 0, "comparesBeforeAndAfter trains the run");
        RunStore store;
        QVERIFY(store.open(db()));
        RunsView runs(&store);
        runs.resize(1366, 768);
        runs.show();
        bool sizesShown = true;  // each listed file's size is its size on disk
        const auto exportWith = [&](ExportKind kind, const QString& target, const QString& type, bool* ok) -> QString {
            ExportDialog* d = runs.openExport(m_runId, kind, false);
            if (!d) return QString();
            d->setTarget(target);
            if (!type.isEmpty()) d->setGgufType(type);
            d->show();
            QSignalSpy done(d, &ExportDialog::exported);
            d->start();
            [&] { QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 300000); }();
            *ok = !done.isEmpty() && done.first().first().toBool();
            const QString message = d->message();
            for (const ExportedFile& f : d->files()) sizesShown = sizesShown && QFileInfo(f.path).size() == f.bytes;
            d->close();
            return message;
        };
        int code = 0;
        bool ok = false;
        // Hugging Face folder (merged): equal to headroom export --hf, file for file, byte for byte
        const QString hfGui = m_dir.filePath(QStringLiteral("hf-window")), hfCli = m_dir.filePath(QStringLiteral("hf-cli"));
        exportWith(ExportKind::HfFolder, hfGui, {}, &ok);
        QVERIFY(ok);
        headroom({"export", m_run, "--hf", hfCli}, &code);
        QCOMPARE(code, 0);
        const auto a = filesUnder(hfGui), b = filesUnder(hfCli);
        QVERIFY(a.contains(QStringLiteral("config.json")) && a.contains(QStringLiteral("model.safetensors")));
        QCOMPARE(a.keys(), b.keys());
        for (auto it = a.begin(); it != a.end(); ++it) QVERIFY2(it.value() == b.value(it.key()), qPrintable(it.key()));
        // peft adapter: equal to headroom export --peft
        const QString pGui = m_dir.filePath(QStringLiteral("peft-window")), pCli = m_dir.filePath(QStringLiteral("peft-cli"));
        exportWith(ExportKind::PeftAdapter, pGui, {}, &ok);
        QVERIFY(ok);
        headroom({"export", m_run, "--peft", pCli}, &code);
        QCOMPARE(code, 0);
        QCOMPARE(filesUnder(pGui), filesUnder(pCli));
        QVERIFY(filesUnder(pGui).contains(QStringLiteral("adapter_model.safetensors")));
        // GGUF, the type chosen in the dialog
        const QString gGui = m_dir.filePath(QStringLiteral("window.gguf")), gCli = m_dir.filePath(QStringLiteral("cli.gguf"));
        exportWith(ExportKind::Gguf, gGui, QStringLiteral("q8_0"), &ok);
        QVERIFY(ok);
        headroom({"export", m_run, "--gguf", gCli, "--type", "q8_0"}, &code);
        QCOMPARE(code, 0);
        QVERIFY(!fileBytes(gGui).isEmpty());
        QCOMPARE(fileBytes(gGui), fileBytes(gCli));
        // ONNX of a language model: refused, one message, nothing written
        const QString onnx = m_dir.filePath(QStringLiteral("lm.onnx"));
        const QString why = exportWith(ExportKind::Onnx, onnx, {}, &ok);
        QVERIFY(!ok);
        QVERIFY2(!why.isEmpty() && !why.contains(QLatin1Char('\n')), qPrintable(why));
        QVERIFY(!QFile::exists(onnx));
        QVERIFY(sizesShown);
        // the dialog, English and Chinese, at 1366 x 768
        for (const QString lang : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
            installTranslators(lang);
            RunsView view(&store);
            view.resize(1366, 768);
            ExportDialog* d = view.openExport(m_runId, ExportKind::Gguf, false);
            QVERIFY(d);
            d->setTarget(m_dir.filePath(QStringLiteral("shot-%1.gguf").arg(lang)));
            d->show();
            QSignalSpy done(d, &ExportDialog::exported);
            d->start();
            QTRY_VERIFY_WITH_TIMEOUT(!done.isEmpty(), 300000);
            QVERIFY(d->width() <= 1366 && d->height() <= 768);
            shoot(*d, QStringLiteral("export-dialog-%1.png").arg(lang));
            d->close();
        }
        installTranslators(QStringLiteral("en"));
    }
};

QTEST_MAIN(TestBeforeAfterWindow)
#include "test_before_after_window.moc"
