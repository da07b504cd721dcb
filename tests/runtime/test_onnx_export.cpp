// ONNX export (exporters/onnx, docs/export.md) checked by what reads it (DESIGN decision 14): ONNX's own
// checker (python3-onnx 1.12, full_check with shape inference) accepts every file, and ONNX Runtime
// (onnxruntime-node 1.30.0, pinned in tests/runtimes) computes the same logits as Headroom on Fashion-MNIST's
// 10,000 test images for every image preset (a few training steps each: the point is equality, not
// accuracy), on a table made here, at batch 7 over everything and batch 1 over the first images (a dynamic
// batch); resnet-mini trained 100 steps (6,400 images) with batch norm scores the run report's test accuracy, to
// the image (a whole epoch: tests/slow/test_onnx_resnet_epoch.cpp). Each case prints its line of the table in
// docs/export.md ("Checked by ONNX Runtime").
// Skips with the reason without node_modules, python3-onnx or the data set.
#include <QProcess>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "backend/backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/table.h"
#include "exporters/onnx/onnx_export.h"
#include "io/safetensors.h"
#include "memory/ledger.h"
#include "nn/model.h"
#include "onnx_check.h"
#include "programs.h"
#include "test_support.h"
#include "train/checkpoint.h"
#include "train/device.h"
#include "train/eval_weights.h"
#include "train/preset_training.h"
#include "train/resume.h"
#include "train/trainer.h"

using namespace hr;
namespace fs = std::filesystem;

using namespace hrtest::onnx;

class OnnxExportTest : public QObject {
    Q_OBJECT
    std::string dir_;
    DatasetPair fashion_;
    std::vector<float> raw_;   // the test images as the ONNX graph takes them: u8 / 255
    std::vector<float> seen_;  // the same as Headroom's model sees them (the run's normalisation)

    // ONNX's checker, full (shape inference and every node against its schema), and strict shape inference: the
    // output is (batch, classes) with batch dynamic
    void check_with_onnx(const std::string& file, int classes) {
        const auto r = hrtest::onnx::check_with_onnx(file);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        QVERIFY2(r.output.contains(QString("opset 17 ir 8 logits batch,%1").arg(classes)), qPrintable(r.output));
    }
    std::vector<float> run_onnx(const std::string& file, const std::string& input, const QString& shape,
                                std::int64_t count, int batch) {
        return hrtest::onnx::run_onnx(file, input, shape, count, batch, dir_ + "/ort-" + std::to_string(batch) + ".f32");
    }
    // A short run of `preset` on Fashion-MNIST in its own folder: its weights and config, as a run leaves them.
    std::string train(const std::string& preset, std::int64_t train_limit, TrainResult* result = nullptr) {
        TrainConfig c = default_train_config(preset);
        c.data = "fashion-mnist";
        c.device = "cpu";
        c.threads = 2;
        c.epochs = 1;
        c.batch = 64;
        c.train_limit = train_limit;
        c.test_limit = result ? 0 : 64;
        c.model = preset_model_for_data(preset, c);
        c.model_source = "preset:" + preset;
        const std::string run = dir_ + "/" + preset;
        fs::create_directories(run);
        Trainer t(c);
        t.set_run_folder(run);
        const TrainResult r = t.run();
        if (r.status != "finished") qWarning("%s: %s", preset.c_str(), r.error.c_str());
        t.save_weights(run + "/model.safetensors");
        if (result) *result = r;
        return run;
    }
    // export, check, run at batch 7 (all) and 1 (the first images); prints the figures for the closing note
    void export_and_compare(const std::string& run, const std::string& name, const std::vector<float>& raw,
                            const std::vector<float>& seen, const Shape& sample, const std::vector<std::int64_t>& labels,
                            int classes, Agreement* out = nullptr, const CompressionOptions& what_if = {},
                            const std::string& reference = "") {
        const std::string file = run + "/model.onnx";
        const OnnxExportResult res = export_onnx(run, file, what_if);
        QCOMPARE(res.compressed, what_if.active());
        QCOMPARE(res.opset, 17);
        QCOMPARE(std::uint64_t(fs::file_size(file)), res.bytes);
        check_with_onnx(file, classes);
        const std::int64_t count = static_cast<std::int64_t>(labels.size());
        const std::string input = dir_ + "/input.f32";
        write_floats(input, raw);
        QString shape;
        for (auto d : sample) shape += (shape.isEmpty() ? "" : ",") + QString::number(d);
        const std::vector<float> ours =
            headroom_logits(reference.empty() ? run + "/model.safetensors" : reference, seen, count);
        const std::vector<float> ort7 = run_onnx(file, input, shape, count, 7);
        QCOMPARE(ort7.size(), ours.size());
        const Agreement a = compare(ort7, ours, classes, labels);
        const std::int64_t first = std::min<std::int64_t>(count, 200);
        const std::vector<float> ort1 = run_onnx(file, input, shape, first, 1);
        QCOMPARE(ort1.size(), std::size_t(first * classes));
        const Agreement a1 = compare(ort1, std::vector<float>(ours.begin(), ours.begin() + first * classes), classes, {});
        qInfo("%s: %lld samples, %.4f%% same prediction (batch 7), largest logit difference %.3g (batch 7), %.3g "
              "(batch 1, first %lld), %llu bytes, opset %d, %lld nodes",
              name.c_str(), static_cast<long long>(count), 100 * a.same_prediction, a.max_abs, a1.max_abs,
              static_cast<long long>(first), static_cast<unsigned long long>(res.bytes), res.opset,
              static_cast<long long>(res.nodes));
        // the per-model table of docs/export.md, printed at the end (cleanupTestCase)
        rows_ << QString::asprintf("| %s | %lld | %.2f %% | %.3g | %.3g (first %lld) | %llu | %d | %lld |", name.c_str(),
                                   static_cast<long long>(count), 100 * a.same_prediction, a.max_abs, a1.max_abs,
                                   static_cast<long long>(first), static_cast<unsigned long long>(res.bytes), res.opset,
                                   static_cast<long long>(res.nodes));
        QVERIFY2(a.same_prediction >= 0.999, qPrintable(QString::number(a.same_prediction)));
        QVERIFY2(a.max_abs <= 1e-4, qPrintable(QString::number(a.max_abs)));
        QVERIFY2(a1.max_abs <= 1e-4, qPrintable(QString::number(a1.max_abs)));
        QCOMPARE(a1.same_prediction, 1.0);
        if (out) *out = a;
    }
    QStringList rows_;

private slots:
    void cleanupTestCase() {
        if (rows_.isEmpty()) return;
        qInfo("ONNX Runtime against Headroom, per model:\n"
              "| model | samples | same prediction (batch 7) | largest logit difference (batch 7) | (batch 1) | file "
              "bytes | opset | nodes |\n|---|---|---|---|---|---|---|---|\n%s",
              qPrintable(rows_.join('\n')));
    }
    void initTestCase() {
        const QString missing = missing_runtimes();
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        if (hrtest::fashion_mnist_dir().empty())
            QSKIP("Fashion-MNIST is not installed (Debian's dataset-fashion-mnist)");
        dir_ = hrtest::temp_dir("onnx-export");
        fashion_ = load_dataset("fashion-mnist");
        const Dataset& t = fashion_.test;
        QCOMPARE(t.count, std::int64_t(10000));
        raw_.resize(t.images.size());
        seen_.resize(t.images.size());
        for (std::size_t i = 0; i < t.images.size(); ++i) {
            // the loader's float32 operations (data/loader.cpp): v / 255, then - mean, / std
            volatile float x = static_cast<float>(t.images[i]) / 255.0f;
            raw_[i] = x;
            volatile float c = x - fashion_.train.norm_mean;
            seen_[i] = c / fashion_.train.norm_std;
        }
    }

    void everyImagePresetAgreesWithOnnxRuntime_data() {
        QTest::addColumn<QString>("preset");
        for (const auto& p : preset_names())
            if (p != "tabular-mlp") QTest::newRow(p.c_str()) << QString::fromStdString(p);
    }
    void everyImagePresetAgreesWithOnnxRuntime() {
        QFETCH(QString, preset);
        const std::string run = train(preset.toStdString(), 192);  // three steps of 64
        export_and_compare(run, preset.toStdString(), raw_, seen_, {1, 28, 28}, fashion_.test.labels, 10);
    }

    void aTableAgreesWithOnnxRuntime() {
        // three clusters and a column of noise on very different scales: the graph's standardisation matters
        const std::string csv = dir_ + "/table.csv";
        std::string text = "x,y,noise,kind\n";
        std::mt19937_64 rng(5);
        std::normal_distribution<double> g(0, 0.5);
        std::uniform_real_distribution<double> u(0, 1000);
        std::vector<std::array<double, 3>> rows;
        const double cx[3] = {0, 3, 1}, cy[3] = {0, 1, 4};
        const char* names[3] = {"a", "b", "c"};
        for (int i = 0; i < 300; ++i) {
            const int k = i % 3;
            char line[160];
            std::snprintf(line, sizeof line, "%.4f,%.4f,%.3f,%s\n", cx[k] + g(rng), 10 * cy[k] + g(rng), u(rng), names[k]);
            text += line;
            double a, b, c;
            std::sscanf(line, "%lf,%lf,%lf", &a, &b, &c);
            rows.push_back({a, b, c});
        }
        std::ofstream(csv) << text;
        TrainConfig c = default_train_config("tabular-mlp");
        c.data = "csv:" + csv;
        c.target = "kind";
        c.device = "cpu";
        c.threads = 2;
        c.epochs = 3;
        c.model = preset_model_for_data("tabular-mlp", c);
        c.model_source = "preset:tabular-mlp";
        const std::string run = dir_ + "/tabular-mlp";
        fs::create_directories(run);
        Trainer t(c);
        t.set_run_folder(run);
        QCOMPARE(t.run().status, std::string("finished"));
        t.save_weights(run + "/model.safetensors");
        TableSummary summary;
        const DatasetPair p = load_table(c.data, c.target, &summary);
        std::vector<float> raw;  // the test rows' values as written in the file
        for (auto r : summary.test_rows)
            for (double v : rows[std::size_t(r)]) raw.push_back(static_cast<float>(v));
        QCOMPARE(raw.size(), p.test.features.size());
        export_and_compare(run, "tabular-mlp", raw, p.test.features, {3}, p.test.labels, 3);
    }

    void resnetMiniAfter100StepsScoresItsReport() {
        TrainResult r;
        // 100 steps of 64 over the first 6,400 training images, not an epoch (the running statistics of batch norm move
        // far from their start), scored on all 10,000 test images by the run itself; the real epoch (60,000 images)
        // is tests/slow/test_onnx_resnet_epoch.cpp
        const std::string run = train("resnet-mini", 6400, &r);
        QCOMPARE(r.status, std::string("finished"));
        Agreement a;
        export_and_compare(run, "resnet-mini (100 steps)", raw_, seen_, {1, 28, 28}, fashion_.test.labels, 10, &a);
        const std::int64_t reported = std::llround(r.test_accuracy * 10000);
        qInfo("resnet-mini after 100 steps (6,400 images): Headroom's report %lld/10000, ONNX Runtime %lld/10000",
              static_cast<long long>(reported), static_cast<long long>(a.correct));
        QCOMPARE(a.correct, reported);
    }

    void aWhatIfExportsAsTheFloatsItComputes() {
        // seed-cnn pruned by half and quantised to int8: ONNX Runtime computes what Headroom computes with the
        // what-if's weights, and scores `headroom eval --prune 0.5 --quantize int8`'s accuracy, to the image
        const std::string run = train("seed-cnn", 192);
        CompressionOptions w;
        w.prune = 0.5;
        w.bits = 8;
        TrainConfig c = read_run_config(run);
        c.test_limit = 0;
        const WeightsEvaluation e = evaluate_weights(c, run + "/model.safetensors", w);
        QVERIFY(e.compressed);
        // the reference: the model with the what-if applied, its state written out
        SafeTensorsFile file = read_safetensors(run + "/model.safetensors");
        auto ledger = std::make_shared<MemoryLedger>();
        std::unique_ptr<Backend> be = make_backend("cpu", 1, ledger, false, nullptr);
        ModelOptions mo;
        mo.batch = 1;
        Model m(model_spec_of(file, run), *be, mo);
        load_model_state(m, file, run);
        compress_model_weights(m, w);
        const std::string reference = dir_ + "/what-if.safetensors";
        write_safetensors(reference, model_state_file(m));
        Agreement a;
        export_and_compare(run, "seed-cnn (prune 0.5, int8)", raw_, seen_, {1, 28, 28}, fashion_.test.labels, 10, &a, w,
                           reference);
        QCOMPARE(a.correct, std::llround(e.test_accuracy_after * 10000));
    }

    void aLanguageModelIsRefusedAndNothingIsWritten() {
        // a language model's run folder: refused with one message that points elsewhere; no file left
        TrainConfig c = default_train_config("gpt-tiny");
        const std::string run = dir_ + "/gpt";
        fs::create_directories(run);
        c.model = preset_model("gpt-tiny");
        write_run_config(run, c);
        auto ledger = std::make_shared<MemoryLedger>();
        std::unique_ptr<Backend> be = make_backend("cpu", 1, ledger, false, nullptr);
        ModelOptions mo;
        mo.batch = 1;
        Model m(c.model, *be, mo);
        write_safetensors(run + "/model.safetensors", model_state_file(m));
        const std::string file = run + "/model.onnx";
        try {
            export_onnx(run, file);
            QFAIL("a language model was exported");
        } catch (const InputError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("language model") != std::string::npos && what.find("--hf") != std::string::npos &&
                         what.find("GGUF") != std::string::npos,
                     e.what());
        }
        QVERIFY(!fs::exists(file));
        for (const auto& e : fs::directory_iterator(run)) QVERIFY2(!is_atomic_temp_name(e.path().filename().string()), e.path().c_str());
    }
};

QTEST_GUILESS_MAIN(OnnxExportTest)
#include "test_onnx_export.moc"
