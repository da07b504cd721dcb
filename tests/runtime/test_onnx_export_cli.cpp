// `headroom export RUN --onnx FILE` as a person types it (the built binary, app/cli/export_command.cpp): a run
// trained by `headroom train` exported, the file accepted by ONNX's checker (python3-onnx 1.12: full_check and
// strict shape inference) and run by ONNX Runtime (onnxruntime-node 1.30.0) on Fashion-MNIST's 10,000 test images
// with the logits of Headroom's CPU forward and the run's reported test accuracy, to the image; an existing .onnx
// file replaced; and every bad input (a language model's run, a missing run, a missing or unwritable folder, a
// folder as FILE, a name that is not FILE.onnx, such as the run's own weights) refused with one line, exit 2 (1 for
// the system's refusal to write), and nothing written or changed.
// Skips with the reason without node_modules, python3-onnx or the data set.
#include <QCryptographicHash>
#include <QFile>
#include <QtTest>

#include <unistd.h>

#include <filesystem>
#include <set>

#include "base/atomic_file.h"
#include "data/dataset.h"
#include "onnx_check.h"
#include "programs.h"
#include "test_support.h"

using namespace hrtest::onnx;
namespace fs = std::filesystem;

namespace {

QByteArray digest(const std::string& path) {
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

// every file below `dir` with its digest: what "nothing written or changed" compares
std::map<std::string, QByteArray> snapshot(const std::string& dir) {
    std::map<std::string, QByteArray> m;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file()) m[e.path().string()] = digest(e.path().string());
    return m;
}

}  // namespace

class OnnxExportCliTest : public QObject {
    Q_OBJECT
    std::string dir_, image_run_, language_run_;

    hrtest::ProcessResult headroom(const QStringList& args, int timeout_ms = 600000) {
        return hrtest::run_program(hrtest::qbinary_path("headroom"), args, QString(), timeout_ms);
    }
    // a refusal: exit `code`, one line "headroom export: ..." holding each of `words`, nothing changed in dir_
    void refused(const QStringList& args, const QStringList& words, int code = 2) {
        const auto before = snapshot(dir_);
        const auto r = headroom(QStringList{"export"} + args);
        const QString out = r.output.trimmed();
        QVERIFY2(r.exit_code == code, qPrintable(QString("exit %1: %2").arg(r.exit_code).arg(out)));
        QVERIFY2(!out.contains('\n') && out.startsWith("headroom export: "), qPrintable(out));
        for (const auto& w : words) QVERIFY2(out.contains(w), qPrintable(w + " not in: " + out));
        QVERIFY2(snapshot(dir_) == before, qPrintable("files changed after: " + out));
        qInfo("refused (exit %d): %s", r.exit_code, qPrintable(out));
    }

private slots:
    void initTestCase() {
        const QString missing = missing_runtimes();
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (Debian's dataset-fashion-mnist)");
        QVERIFY2(fs::exists(hrtest::binary_path("headroom")), "build the headroom target first");
        dir_ = hrtest::temp_dir("onnx-export-cli");
        // an image run as `headroom train` leaves it: lenet5, 10 steps of 64, scored on all 10,000 test images
        image_run_ = dir_ + "/lenet5";
        auto r = headroom({"train", "--preset", "lenet5", "--data", "fashion-mnist", "--train-limit", "640", "--device",
                           "cpu", "--threads", "2", "--out", QString::fromStdString(image_run_)});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        // a language model's run: gpt-tiny, one step
        language_run_ = dir_ + "/gpt";
        r = headroom({"train", "--preset", "gpt-tiny", "--data", "text:fortunes", "--steps", "1", "--batch", "2",
                      "--test-limit", "300", "--device", "cpu", "--threads", "2", "--out",
                      QString::fromStdString(language_run_)});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
    }

    void anExportedRunRunsInOnnxRuntimeAsInHeadroom() {
        const std::string file = dir_ + "/lenet5.onnx";
        const auto r = headroom({"export", QString::fromStdString(image_run_), "--onnx", QString::fromStdString(file)});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QVERIFY2(r.output.startsWith("wrote " + QString::fromStdString(file)) && r.output.contains("opset 17"),
                 qPrintable(r.output));
        qInfo("%s", qPrintable(r.output.trimmed()));
        const auto checked = check_with_onnx(file);
        QVERIFY2(checked.exit_code == 0, qPrintable(checked.output));
        QVERIFY2(checked.output.contains("opset 17 ir 8 logits batch,10"), qPrintable(checked.output));

        // the test images: raw (u8 / 255) for the file, normalised as the run's loader does for Headroom's forward
        const hr::DatasetPair data = hr::load_dataset("fashion-mnist");
        const hr::Dataset& t = data.test;
        std::vector<float> raw(t.images.size()), seen(t.images.size());
        for (std::size_t i = 0; i < t.images.size(); ++i) {
            volatile float x = static_cast<float>(t.images[i]) / 255.0f;
            raw[i] = x;
            volatile float c = x - data.train.norm_mean;
            seen[i] = c / data.train.norm_std;
        }
        const std::string input = dir_ + "/input.f32";
        write_floats(input, raw);
        const std::vector<float> ours = headroom_logits(image_run_ + "/model.safetensors", seen, t.count);
        const std::vector<float> ort7 = run_onnx(file, input, "1,28,28", t.count, 7, dir_ + "/ort7.f32");
        QCOMPARE(ort7.size(), ours.size());
        const Agreement a = compare(ort7, ours, 10, t.labels);
        const std::int64_t first = 200;
        const std::vector<float> ort1 = run_onnx(file, input, "1,28,28", first, 1, dir_ + "/ort1.f32");
        QCOMPARE(ort1.size(), std::size_t(first * 10));
        const Agreement a1 = compare(ort1, std::vector<float>(ours.begin(), ours.begin() + first * 10), 10, {});

        // the run's reported test accuracy (run.json final.test_accuracy, over the same 10,000 images)
        const nlohmann::json run = hrtest::read_json(image_run_ + "/run.json");
        const std::int64_t reported = std::llround(run.at("final").at("test_accuracy").get<double>() * t.count);
        qInfo("headroom export --onnx (lenet5, 10 steps): %.4f%% same prediction, largest logit difference %.3g (batch 7), "
              "%.3g (batch 1, first %lld), %llu bytes; test accuracy: report %lld/10000, ONNX Runtime %lld/10000",
              100 * a.same_prediction, a.max_abs, a1.max_abs, static_cast<long long>(first),
              static_cast<unsigned long long>(fs::file_size(file)), static_cast<long long>(reported),
              static_cast<long long>(a.correct));
        QVERIFY2(a.same_prediction >= 0.999, qPrintable(QString::number(a.same_prediction)));
        QVERIFY2(a.max_abs <= 1e-4, qPrintable(QString::number(a.max_abs)));
        QVERIFY2(a1.max_abs <= 1e-4, qPrintable(QString::number(a1.max_abs)));
        QCOMPARE(a1.same_prediction, 1.0);
        QCOMPARE(a.correct, reported);

        // the same command again over the file: replaced by an equal file (the export is deterministic), no stray
        // temporary file beside it
        const QByteArray before = digest(file);
        const auto again = headroom({"export", QString::fromStdString(image_run_), "--onnx", QString::fromStdString(file)});
        QVERIFY2(again.exit_code == 0, qPrintable(again.output));
        QCOMPARE(digest(file), before);
        for (const auto& e : fs::directory_iterator(dir_))
            QVERIFY2(!hr::is_atomic_temp_name(e.path().filename().string()), e.path().c_str());
    }

    void badInputIsRefusedAndNothingIsWritten() {
        const QString image = QString::fromStdString(image_run_), text = QString::fromStdString(language_run_);
        const QString out = QString::fromStdString(dir_ + "/out.onnx");
        // a language model's run: pointed to GGUF and Hugging Face folders (also over an existing file: unchanged)
        refused({text, "--onnx", out}, {"language model", "--hf DIR", "--gguf FILE"});
        QVERIFY(!fs::exists(out.toStdString()));
        const std::string existing = dir_ + "/existing.onnx";
        hr::write_file_atomic(existing, "not replaced");
        refused({text, "--onnx", QString::fromStdString(existing)}, {"language model"});
        refused({text + "/model.safetensors", "--onnx", out}, {"language model"});
        // a run that is not there, and a folder that is not a run
        refused({QString::fromStdString(dir_ + "/no-such-run"), "--onnx", out}, {"no-such-run", "does not exist"});
        const std::string empty = dir_ + "/empty";
        fs::create_directories(empty);
        refused({QString::fromStdString(empty), "--onnx", out}, {"model.safetensors"});
        // odd destinations: a missing folder, a file as a folder, a folder as FILE, not FILE.onnx (the run's own
        // weights, its config)
        refused({image, "--onnx", QString::fromStdString(dir_ + "/no-folder/x.onnx")}, {"no-folder", "does not exist"});
        refused({image, "--onnx", image + "/model.safetensors/x.onnx"}, {"model.safetensors is a file, not a folder"});
        refused({image, "--onnx", QString::fromStdString(empty)}, {"is a folder", "model.onnx"});
        refused({image, "--onnx", image + "/model.safetensors"}, {".onnx"});
        refused({image, "--onnx", image + "/config.json"}, {".onnx"});
        refused({image, "--onnx", out + ".tmp"}, {".onnx"});
        // a folder that cannot be written to: read-only for a user; as root (who writes anywhere) /proc, where no
        // file can be made; the system's refusal is exit 1
        if (::geteuid() == 0) {
            const auto r = headroom({"export", image, "--onnx", "/proc/headroom-test.onnx"});
            QVERIFY2(r.exit_code == 1, qPrintable(r.output));
            QVERIFY2(!r.output.trimmed().contains('\n') && r.output.contains("cannot write /proc/headroom-test.onnx"),
                     qPrintable(r.output));
            QVERIFY(!fs::exists("/proc/headroom-test.onnx"));
            qInfo("refused (exit %d): %s", r.exit_code, qPrintable(r.output.trimmed()));
        } else {
            const std::string locked = dir_ + "/locked";
            fs::create_directories(locked);
            fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
            refused({image, "--onnx", QString::fromStdString(locked + "/x.onnx")}, {"cannot write", "pick a folder"}, 1);
            fs::permissions(locked, fs::perms::owner_all);
        }
        // nothing at the destinations, the existing file as it was
        QVERIFY(!fs::exists(out.toStdString()));
        QCOMPARE(digest(existing), QCryptographicHash::hash("not replaced", QCryptographicHash::Sha256));
    }
};

QTEST_GUILESS_MAIN(OnnxExportCliTest)
#include "test_onnx_export_cli.moc"
