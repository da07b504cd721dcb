// The Sample panel (issue 12), offscreen: during a gpt-tiny run it shows text generated from a copy of
// the current weights (a step of the run in progress) without blocking the GUI thread; after the run it
// shows text from the saved weights, the same text core's Generator makes from model.safetensors with
// the panel's options (temperature 1 with the default seed). An image model's run leaves it saying there is nothing
// to sample. HEADROOM_SAMPLE_PNG=FILE saves the panel during the run as a picture. Streaming: at
// temperature 0 the text streamed in token by token ends as `headroom generate` (another process) and
// core's non-streamed Generator make it for the same weights and prompt, partial texts on screen before
// the end are prefixes of it, and Stop ends a long generation within seconds, its text a prefix too.
#include <QtTest>
#include "test_support.h"

#include <QFile>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>

#include "gui/SamplePanel.h"
#include "nn/model_spec.h"
#include "session/RunController.h"
#include "train/generate.h"

using namespace hrapp;

class TestSamplePanel : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString corpus() {
        const QString path = m_dir.filePath(QStringLiteral("corpus.txt"));
        if (QFile::exists(path)) return path;
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write the corpus");
        for (int i = 0; i < 300; ++i)
            f.write(QStringLiteral("%1 little pigs built a house of straw, of sticks and of bricks.\n").arg(i).toUtf8());
        return path;
    }

private slots:
    void showsTextDuringAndAfterALanguageModelRun() {
        RunController controller;
        SamplePanel panel(&controller);
        panel.resize(960, 420);
        panel.show();
        panel.setRefreshIntervalMs(300);
        hr::GenerateOptions o;
        o.prompt = "little pigs";
        o.tokens = 40;
        o.temperature = 1;  // sampled with the default seed: the same text from the same weights
        panel.setOptions(o);
        QCOMPARE(panel.text(), QString());

        hr::TrainConfig c = defaultTrainConfig();
        c.model = hr::preset_model("gpt-tiny");
        c.model_source = "preset:gpt-tiny";
        c.data = "text:" + corpus().toStdString();
        c.steps = 100000;  // stopped below, once a sample of the run in progress is on screen
        c.batch = 2;
        c.seq = 32;
        c.threads = 1;
        c.eval_tokens = 256;
        c.device = "cpu";
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 3e-3;
        RunOptions ro;
        ro.outDir = m_dir.filePath(QStringLiteral("run"));
        ro.sampleTelemetry = false;
        QSignalSpy shown(&panel, &SamplePanel::sampleShown);
        // what was on screen when each sample was shown: the panel may already be streaming the next
        // copy's sample (its prompt only) by the time the test looks again
        QStringList shownText, shownStatus;
        connect(&panel, &SamplePanel::sampleShown, this, [&] {
            shownText << panel.text();
            shownStatus << panel.status();
        });
        QSignalSpy finished(&controller, &RunController::runFinished);
        QString why;
        QVERIFY2(controller.start(c, ro, &why), qPrintable(why));

        // during the run: the weights of a step of the run in progress
        // (the first copy may be of step 0, asked for before the first step; later ones follow every 300 ms)
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toLongLong() >= 1, 120000);
        QVERIFY(controller.isRunning());
        const qint64 step = shown.last().first().toLongLong();
        QCOMPARE(shownText.size(), shown.size());
        QVERIFY2(shownText.last().startsWith(QLatin1String("little pigs")), qPrintable(shownText.last()));
        QVERIFY2(shownText.last().trimmed().size() > QStringLiteral("little pigs").size(), qPrintable(shownText.last()));
        QVERIFY2(shownStatus.last().contains(QString::number(step)), qPrintable(shownStatus.last()));
        if (const QByteArray png = qgetenv("HEADROOM_SAMPLE_PNG"); !png.isEmpty())
            QVERIFY(panel.grab().save(QString::fromLocal8Bit(png)));

        // after it: the saved weights
        shown.clear();
        controller.stop();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toLongLong() == -1, 120000);
        const QString weights = ro.outDir + QStringLiteral("/model.safetensors");
        QCOMPARE(panel.weightsPath(), weights);
        auto g = hr::Generator::from_weights(weights.toStdString(), 1);
        const hr::GenerateResult ref = g->generate(o);
        QCOMPARE(panel.text(), QString::fromStdString(ref.text));
        QVERIFY(!panel.isGenerating());
    }

    void streamsTokenByTokenAndStopsAtOnce() {
        RunController controller;
        SamplePanel panel(&controller);
        panel.resize(960, 420);
        panel.show();
        hr::GenerateOptions o;
        o.prompt = "little pigs";
        o.tokens = 600;
        o.temperature = 0;  // greedy: the same text whether streamed or not
        panel.setOptions(o);
        hr::TrainConfig c = defaultTrainConfig();
        c.model = hr::preset_model("gpt-tiny");
        c.model_source = "preset:gpt-tiny";
        c.data = "text:" + corpus().toStdString();
        c.steps = 3;
        c.batch = 2;
        c.seq = 32;
        c.threads = 1;
        c.eval_tokens = 256;
        c.device = "cpu";
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 3e-3;
        RunOptions ro;
        ro.outDir = m_dir.filePath(QStringLiteral("stream-run"));
        ro.sampleTelemetry = false;
        QSignalSpy shown(&panel, &SamplePanel::sampleShown);
        QSignalSpy finished(&controller, &RunController::runFinished);
        QStringList partial;  // the panel's text whenever part of the sample was on screen
        connect(&panel, &SamplePanel::textStreamed, &panel, [&](qint64 tokens, qint64 requested) {
            if (tokens < requested) partial << panel.text();
            if (const QByteArray png = qgetenv("HEADROOM_SAMPLE_STREAM_PNG"); !png.isEmpty() && tokens > 100 && tokens < requested)
                panel.grab().save(QString::fromLocal8Bit(png));  // a picture of the text streaming in
        });
        // samples of the run in progress (other weights) do not count: only the one of the saved weights
        connect(&controller, &RunController::runFinished, &panel, [&] { partial.clear(); });
        QString why;
        QVERIFY2(controller.start(c, ro, &why), qPrintable(why));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 120000);
        // after the run the panel samples the saved weights, streaming
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toLongLong() == -1, 120000);
        const QString weights = ro.outDir + QStringLiteral("/model.safetensors");
        auto g = hr::Generator::from_weights(weights.toStdString(), 1);
        const hr::GenerateResult ref = g->generate(o);  // not streamed
        QCOMPARE(ref.ids.size(), std::size_t(600));
        const QString full = QString::fromStdString(ref.text);
        QCOMPARE(panel.text(), full);
        const QString exe = hrtest::qbinary_path("headroom");
        if (QFile::exists(exe)) {  // and what `headroom generate` prints for the same weights and prompt
            QProcess p;
            p.start(exe, {"generate", "--weights", weights, "--prompt", "little pigs", "--tokens", "600", "--temperature", "0"});
            QVERIFY(p.waitForFinished(180000));
            QCOMPARE(p.exitCode(), 0);
            QCOMPARE(QString::fromUtf8(p.readAllStandardOutput()), full + QLatin1Char('\n'));
        }
        QVERIFY2(!partial.isEmpty(), "no part of the sample was shown before its end");
        for (const QString& t : partial) {
            QVERIFY2(full.startsWith(t) && t.size() < full.size(), qPrintable(t));
            QVERIFY(t.startsWith(QLatin1String("little pigs")));
        }

        // Stop: a long generation ends within seconds of the click, with the text so far
        o.tokens = 5000;
        panel.setOptions(o);
        QSignalSpy streamed(&panel, &SamplePanel::textStreamed);
        QSignalSpy stopped(&panel, &SamplePanel::generationStopped);
        panel.generateNow();
        QVERIFY(panel.isGenerating());
        QTRY_VERIFY_WITH_TIMEOUT(!streamed.isEmpty(), 60000);
        auto* stop = panel.findChild<QPushButton*>(QStringLiteral("sampleStop"));
        QVERIFY(stop && stop->isEnabled());
        QElapsedTimer t;
        t.start();
        stop->click();
        QVERIFY(!stop->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isGenerating(), 5000);
        QVERIFY(t.elapsed() < 5000);
        QCOMPARE(stopped.size(), 1);
        const qint64 made = stopped.first().first().toLongLong();
        QVERIFY2(made > 0 && made < 5000, qPrintable(QString::number(made)));
        const QString stoppedText = panel.text();
        if (made <= 600) QVERIFY(full.startsWith(stoppedText));
        else QVERIFY(stoppedText.startsWith(full));
        QVERIFY2(panel.status().contains(QString::number(made)), qPrintable(panel.status()));
        QTest::qWait(200);
        QCOMPARE(panel.text(), stoppedText);  // nothing more arrives
    }

    void saysSoForAModelThatIsNotALanguageModel() {
        RunController controller;
        SamplePanel panel(&controller);
        hr::TrainConfig c = defaultTrainConfig();
        c.model = hr::preset_model("mlp");
        c.data = "synthetic";
        c.steps = 2;
        c.batch = 8;
        c.threads = 1;
        c.device = "cpu";
        RunOptions ro;
        ro.sampleTelemetry = false;
        QSignalSpy finished(&controller, &RunController::runFinished);
        QSignalSpy shown(&panel, &SamplePanel::sampleShown);
        QVERIFY(controller.start(c, ro));
        QVERIFY2(panel.status().contains(QLatin1String("not a language model")), qPrintable(panel.status()));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        QTest::qWait(100);
        QVERIFY(shown.isEmpty());
        QCOMPARE(panel.text(), QString());
        QVERIFY(!panel.findChild<QWidget*>(QStringLiteral("sampleGenerate"))->isEnabled());
    }
};

QTEST_MAIN(TestSamplePanel)
#include "test_sample_panel.moc"
