// A language-model preset trains well with its defaults (core/train/preset_training.h): `headroom train
// --preset gpt-tiny --device cpu`, no other flag, reads Debian's fortunes, trains with the preset's AdamW,
// schedule, batch and steps, and ends with a validation loss of at most 2.3 nats per token (the generic
// defaults it had before, SGD at 0.01 for one epoch, ended at 2.77). The run's config.json holds exactly
// the preset's training settings. Skips where the headroom binary or the fortunes are missing.
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>
#include "test_support.h"

#include <nlohmann/json.hpp>

#include "data/text_data.h"
#include "programs.h"
#include "train/config.h"
#include "train/preset_training.h"

using namespace hr;

namespace {
const QString kHeadroom = hrtest::qbinary_path("headroom");
}  // namespace

class TestPresetTraining : public QObject {
    Q_OBJECT
private slots:
    void gptTinyTrainsWellWithNoFlags() {
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        if (!probe_text_data("text:fortunes").available) QSKIP("the fortunes are not installed (apt install fortunes)");
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString out = dir.filePath(QStringLiteral("run"));
        const hrtest::ProcessResult r = hrtest::run_program(
            kHeadroom, {"train", "--preset", "gpt-tiny", "--device", "cpu", "--no-history", "--quiet", "--out", out},
            QString(), 900000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const nlohmann::json run = hrtest::read_json((out + "/run.json").toStdString());
        const TrainConfig used = train_config_from_json(run.at("config"));
        const PresetTraining t = preset_training("gpt-tiny");
        QCOMPARE(used.data, t.data);
        QCOMPARE(used.optimizer.kind, t.optimizer.kind);
        QCOMPARE(used.optimizer.lr, t.optimizer.lr);
        QCOMPARE(used.optimizer.grad_clip, t.optimizer.grad_clip);
        QCOMPARE(used.schedule.kind, t.schedule.kind);
        QCOMPARE(used.batch, t.batch);
        QCOMPARE(used.steps, t.steps);
        QCOMPARE(run.at("final").at("steps").get<std::int64_t>(), t.steps);
        const double loss = run.at("final").at("test_loss").get<double>();
        qInfo("gpt-tiny with its defaults: validation loss %.4f nats/token after %lld steps", loss, (long long)t.steps);
        QVERIFY2(loss <= 2.3, qPrintable(QStringLiteral("validation loss %1 > 2.3").arg(loss)));
        QVERIFY(r.output.contains(QStringLiteral("test_loss=")));
    }
};

QTEST_MAIN(TestPresetTraining)
#include "test_preset_training.moc"
