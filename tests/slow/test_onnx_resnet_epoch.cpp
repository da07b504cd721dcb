// Issue 60's "a model trained 1 epoch with batch norm (resnet-mini) gives the same test accuracy in ONNX Runtime
// as in Headroom's report, to the image", as a person does it: `headroom train --preset resnet-mini --epochs 1`
// (all 60,000 Fashion-MNIST training images, 938 steps of 64), `headroom export RUN --onnx FILE`, then ONNX
// Runtime (onnxruntime-node 1.30.0) on the 10,000 test images: its correct predictions equal run.json's
// final.test_accuracy × 10,000 exactly, and its logits are Headroom's CPU forward's within 1e-4 (batch 7 over all,
// batch 1 over the first 200). The training is about 2 CPU-minutes (docs/export.md); time-boxed by CTest.
// Skips with the reason without node_modules, python3-onnx or the data set.
#include <QElapsedTimer>
#include <QtTest>

#include <filesystem>

#include "data/dataset.h"
#include "onnx_check.h"
#include "programs.h"
#include "test_support.h"

using namespace hrtest::onnx;
namespace fs = std::filesystem;

class OnnxResnetEpochTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        const QString missing = missing_runtimes();
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (Debian's dataset-fashion-mnist)");
    }

    void resnetMiniAfterOneEpochScoresItsReport() {
        const std::string dir = hrtest::temp_dir("onnx-resnet-epoch"), run = dir + "/rn", file = dir + "/rn.onnx";
        const QString headroom = hrtest::qbinary_path("headroom");
        QElapsedTimer clock;
        clock.start();
        auto r = hrtest::run_program(headroom,
                                     {"train", "--preset", "resnet-mini", "--data", "fashion-mnist", "--epochs", "1",
                                      "--batch", "64", "--device", "cpu", "--threads", "2", "--out",
                                      QString::fromStdString(run)},
                                     QString(), 1200000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const double train_s = clock.elapsed() / 1000.0;
        const nlohmann::json record = hrtest::read_json(run + "/run.json");
        const nlohmann::json& fin = record.at("final");
        QCOMPARE(fin.at("epochs_completed").get<int>(), 1);
        QCOMPARE(fin.at("steps").get<std::int64_t>(), std::int64_t(938));  // ceil(60,000 / 64): the whole epoch
        r = hrtest::run_program(headroom, {"export", QString::fromStdString(run), "--onnx", QString::fromStdString(file)});
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const auto checked = check_with_onnx(file);
        QVERIFY2(checked.exit_code == 0 && checked.output.contains("opset 17 ir 8 logits batch,10"),
                 qPrintable(checked.output));

        const hr::DatasetPair data = hr::load_dataset("fashion-mnist");
        const hr::Dataset& t = data.test;
        QCOMPARE(t.count, std::int64_t(10000));
        std::vector<float> raw(t.images.size()), seen(t.images.size());
        for (std::size_t i = 0; i < t.images.size(); ++i) {  // the loader's float32 operations (data/loader.cpp)
            volatile float x = static_cast<float>(t.images[i]) / 255.0f;
            raw[i] = x;
            volatile float c = x - data.train.norm_mean;
            seen[i] = c / data.train.norm_std;
        }
        const std::string input = dir + "/input.f32";
        write_floats(input, raw);
        const std::vector<float> ours = headroom_logits(run + "/model.safetensors", seen, t.count);
        const std::vector<float> ort7 = run_onnx(file, input, "1,28,28", t.count, 7, dir + "/ort7.f32");
        QCOMPARE(ort7.size(), ours.size());
        const Agreement a = compare(ort7, ours, 10, t.labels);
        const std::vector<float> ort1 = run_onnx(file, input, "1,28,28", 200, 1, dir + "/ort1.f32");
        QCOMPARE(ort1.size(), std::size_t(2000));
        const Agreement a1 = compare(ort1, std::vector<float>(ours.begin(), ours.begin() + 2000), 10, {});
        const std::int64_t reported = std::llround(fin.at("test_accuracy").get<double>() * 10000);
        qInfo("resnet-mini, 1 epoch (60,000 images, 938 steps; training %.0f s wall): test accuracy in the report "
              "%lld/10000, in ONNX Runtime %lld/10000; %.2f %% same prediction, largest logit difference %.3g (batch 7), "
              "%.3g (batch 1, first 200); %llu bytes",
              train_s, static_cast<long long>(reported), static_cast<long long>(a.correct), 100 * a.same_prediction,
              a.max_abs, a1.max_abs, static_cast<unsigned long long>(fs::file_size(file)));
        QCOMPARE(a.correct, reported);
        QVERIFY2(a.same_prediction >= 0.999, qPrintable(QString::number(a.same_prediction)));
        QVERIFY2(a.max_abs <= 1e-4, qPrintable(QString::number(a.max_abs)));
        QVERIFY2(a1.max_abs <= 1e-4, qPrintable(QString::number(a1.max_abs)));
        fs::remove_all(dir);
    }
};

QTEST_GUILESS_MAIN(OnnxResnetEpochTest)
#include "test_onnx_resnet_epoch.moc"
