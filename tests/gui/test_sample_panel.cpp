// The Sample panel (issue 12), offscreen: during a gpt-tiny run it shows text generated from a copy of
// the current weights (a step of the run in progress) without blocking the GUI thread; after the run it
// shows text from the saved weights, the same text core's Generator makes from model.safetensors with
// the panel's options (temperature 1 with the default seed). An image model's run leaves it saying there is nothing
// to sample. HEADROOM_SAMPLE_PNG=FILE saves the panel during the run as a picture.
#include <QtTest>

#include <QFile>
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
        QSignalSpy finished(&controller, &RunController::runFinished);
        QString why;
        QVERIFY2(controller.start(c, ro, &why), qPrintable(why));

        // during the run: the weights of a step of the run in progress
        // (the first copy may be of step 0, asked for before the first step; later ones follow every 300 ms)
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last().first().toLongLong() >= 1, 120000);
        QVERIFY(controller.isRunning());
        const qint64 step = shown.last().first().toLongLong();
        QVERIFY2(panel.text().startsWith(QLatin1String("little pigs")), qPrintable(panel.text()));
        QVERIFY(panel.text().trimmed().size() > QStringLiteral("little pigs").size());
        QVERIFY2(panel.status().contains(QString::number(step)), qPrintable(panel.status()));
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
