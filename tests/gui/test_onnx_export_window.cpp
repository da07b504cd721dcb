// The Runs tab's "Export as ONNX…" (RunsView::exportOnnx): a finished image run's folder becomes an ONNX file
// that ONNX's checker accepts (python3-onnx, when installed), with the message the window shows; a run that
// left no folder says so and writes nothing. tests/runtime/test_onnx_export.cpp checks the files' numbers.
#include <QtTest>

#include <filesystem>

#include "gui/RunsView.h"
#include "programs.h"
#include "store/run_store.h"
#include "test_support.h"
#include "train/preset_training.h"
#include "train/trainer.h"

using namespace hrapp;
namespace fs = std::filesystem;

class OnnxExportWindowTest : public QObject {
    Q_OBJECT

private slots:
    void theRunsTabExportsARunAsOnnx() {
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (Debian's dataset-fashion-mnist)");
        const std::string dir = hrtest::temp_dir("onnx-window");
        hr::TrainConfig c = hr::default_train_config("mlp");
        c.data = "fashion-mnist";
        c.device = "cpu";
        c.threads = 2;
        c.train_limit = 128;
        c.test_limit = 64;
        c.model = hr::preset_model_for_data("mlp", c);
        c.model_source = "preset:mlp";
        const std::string run = dir + "/run";
        fs::create_directories(run);
        hr::Trainer t(c);
        t.set_run_folder(run);
        const hr::TrainResult r = t.run();
        QCOMPARE(r.status, std::string("finished"));
        t.save_weights(run + "/model.safetensors");

        RunStore store;
        QVERIFY(store.open(QString::fromStdString(dir + "/runs.sqlite")));
        const qint64 id = store.beginRun(c, QStringLiteral("mlp"), QString::fromStdString(run));
        store.finishRun(id, r);
        const qint64 none = store.beginRun(c, QStringLiteral("no folder"));
        store.finishRun(none, r);
        RunsView view(&store);

        const QString file = QString::fromStdString(dir + "/mlp.onnx");
        const QString said = view.exportOnnx(id, file, false);
        QVERIFY2(said.contains(QStringLiteral("Wrote")) && said.contains(QStringLiteral("opset 17")), qPrintable(said));
        QVERIFY(QFileInfo(file).size() > 0);
        if (QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) {
            const auto check = hrtest::run_program(
                QStringLiteral("/usr/bin/python3"),
                {QStringLiteral("-c"), QStringLiteral("import sys\ntry:\n    import onnx\nexcept ImportError:\n    sys.exit(0)\n"
                                                     "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)"),
                 file});
            QVERIFY2(check.exit_code == 0, qPrintable(check.output));
        }

        const QString file2 = QString::fromStdString(dir + "/none.onnx");
        const QString why = view.exportOnnx(none, file2, false);
        QVERIFY2(why.contains(QStringLiteral("no model.safetensors")), qPrintable(why));
        QVERIFY(!QFileInfo::exists(file2));
    }
};

QTEST_MAIN(OnnxExportWindowTest)
#include "test_onnx_export_window.moc"
