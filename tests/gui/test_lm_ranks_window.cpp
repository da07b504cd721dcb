// A language model on several ranks from the window (issues 10, 12): the setup panel's "CPU × 2 ranks"
// with dp and a GPT (gpt-tiny at 16 tokens on a text file) — RunController launches `headroom train
// --config ... --ranks 2` (session/RankRelay) and nothing on the way refuses a language model; the relayed
// final metrics (validation loss per token) equal what rank 0 wrote in run.json, which says 2 ranks, and
// the epoch and steps relayed are run.json's.
#include <QtTest>
#include "test_support.h"

#include <QComboBox>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gui/TrainingSetupPanel.h"
#include "nn/model_spec.h"
#include "session/RunController.h"
#include "store/run_store.h"
#include "programs.h"

using namespace hrapp;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

nlohmann::json readJson(const QString& path) { return hrtest::read_json(path.toStdString()); }

bool same(double a, double b) { return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestLmRanksWindow : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        if (QStandardPaths::findExecutable(QStringLiteral("mpirun")).isEmpty()) QSKIP("no mpirun on PATH");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        qputenv("OMP_NUM_THREADS", "1");
    }

    void gptOnTwoRanksFromTheWindow() {
        // a text file of plain lines
        const QString text = m_dir.filePath(QStringLiteral("corpus.txt"));
        {
            std::ofstream f(text.toStdString());
            for (int i = 0; i < 400; ++i) f << "line " << i << " of the text that the ranks share, " << (i * 37) % 101 << ".\n";
        }
        TrainingSetupPanel panel;
        auto* box = panel.findChild<QComboBox*>(QStringLiteral("ranksCombo"));
        const int two = box->findData(QStringLiteral("cpu:2"));
        if (two < 0) QSKIP("the panel offers no CPU × 2 ranks on this machine");
        box->setCurrentIndex(two);
        auto* shard = panel.findChild<QComboBox*>(QStringLiteral("shardingCombo"));
        shard->setCurrentIndex(shard->findData(QStringLiteral("dp")));
        hr::TrainConfig c = defaultTrainConfig();
        panel.applyTo(c);
        c.model = hr::preset_model("gpt-tiny");
        c.model_source = "preset:gpt-tiny";
        c.data = "text:" + text.toStdString();
        c.seq = 16;
        c.tokenizer = "byte";
        c.eval_every = 2;
        c.eval_tokens = 0;
        c.batch = 4;
        c.steps = 4;
        c.epochs = 1;
        c.threads = 1;
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 1e-3;
        QCOMPARE(panel.ranks(), 2);
        QCOMPARE(c.strategy.shard, std::string("dp"));

        RunStore store;
        QVERIFY(store.open(m_dir.filePath(QStringLiteral("history.db"))));
        RunController controller;
        QVector<hr::EpochEvent> epochs;
        std::int64_t lastStep = 0;
        connect(&controller, &RunController::epochFinished, this, [&](const hr::EpochEvent& e) { epochs << e; });
        connect(&controller, &RunController::stepsReady, this, [&](const QVector<hr::StepEvent>& s) { lastStep = s.last().step; });
        QSignalSpy finished(&controller, &RunController::runFinished);
        RunOptions o;
        o.store = &store;
        o.outDir = m_dir.filePath(QStringLiteral("gpt"));
        o.ranks = 2;
        o.rankProgram = kHeadroom;
        o.sampleTelemetry = false;
        QString error;
        QVERIFY2(controller.start(c, o, &error), qPrintable(error));
        QVERIFY(controller.isMultiRank());
        QVERIFY(finished.wait(180000));
        const RunOutcome out = finished.first().first().value<RunOutcome>();
        QVERIFY2(out.result().status == "finished", out.result().error.c_str());
        const nlohmann::json j = readJson(o.outDir + QStringLiteral("/run.json"));
        QCOMPARE(j["distributed"]["world_size"].get<int>(), 2);
        QCOMPARE(j["distributed"]["stage"].get<std::string>(), std::string("dp"));
        QVERIFY(j["distributed"]["rank_batch"] == nlohmann::json({2, 2}));
        QVERIFY(same(out.result().test_loss, j["final"]["test_loss"].get<double>()));
        QCOMPARE(out.result().steps, std::int64_t(4));
        QCOMPARE(j["evals"].size(), std::size_t(2));
        QCOMPARE(lastStep, std::int64_t(4));
        QCOMPARE(epochs.size(), qsizetype(j["epochs"].size()));
        QVERIFY(same(epochs.last().test_loss, j["epochs"].back()["test_loss"].get<double>()));
        QVERIFY(same(epochs.last().test_loss, j["evals"].back()["test_loss"].get<double>()));
        QVERIFY(QFileInfo::exists(o.outDir + QStringLiteral("/model.safetensors")));
        const QVector<RunInfo> runs = store.listRuns();
        QCOMPARE(runs.size(), qsizetype(1));
        QCOMPARE(runs[0].status, QStringLiteral("finished"));
    }
};

QTEST_MAIN(TestLmRanksWindow)
#include "test_lm_ranks_window.moc"
