// seed-cnn for three epochs of Fashion-MNIST's first 10,000 training images (what the GPU machine's pack
// holds: scripts/pack-gpu-check) on the GPU reaches the CPU run's test accuracy (the whole test set)
// within one point (same seed, same data order, same initial weights): the GPU path trains, not just
// computes ops. Also the planner's GPU prediction against the run's ledger, category by category. The
// backend comes through the module loader (--device cuda:0). Skips without a CUDA device or the
// dataset.
#include <QtTest>

#include <cmath>

#include "backend/cuda/cuda_backend.h"
#include "plan/planner.h"
#include "test_support.h"
#include "train/trainer.h"

using namespace hr;

class CudaTrainTest : public QObject {
    Q_OBJECT

    static TrainConfig config(const std::string& device) {
        TrainConfig c;
        c.model = preset_model("seed-cnn");
        c.data = "fashion-mnist";
        c.epochs = 3;
        c.train_limit = 10000;  // the pack's subset; the same images where the whole set is installed
        c.batch = 64;
        c.optimizer.kind = "sgd";
        c.optimizer.lr = 0.01;
        c.optimizer.momentum = 0.9;
        c.seed = 1;
        c.device = device;
        return c;
    }

private slots:
    void seedCnnOneEpochMatchesTheCpu() {
        if (cuda_device_count() == 0) QSKIP("no CUDA device (cuda_device_count() == 0)");
        if (hrtest::fashion_mnist_dir().empty()) QSKIP("Fashion-MNIST is not installed (dataset-fashion-mnist)");
        Trainer gpu(config("cuda:0"));
        const TrainResult g = gpu.run();
        QCOMPARE(QString::fromStdString(g.status), QString("finished"));
        QVERIFY2(g.device_name.rfind("cuda:0", 0) == 0, g.device_name.c_str());
        Trainer cpu(config("cpu"));
        const TrainResult c = cpu.run();
        QCOMPARE(QString::fromStdString(c.status), QString("finished"));
        qInfo("test accuracy: GPU %.4f (%.0f images/s), CPU %.4f (%.0f images/s)", g.test_accuracy,
              g.images_per_second, c.test_accuracy, c.images_per_second);
        QVERIFY(c.test_accuracy > 0.78);  // it learned (0.81 on the 2-core Xeon, 2026-12-06)
        QVERIFY2(std::abs(g.test_accuracy - c.test_accuracy) <= 0.01,
                 qPrintable(QString("GPU %1 vs CPU %2").arg(g.test_accuracy).arg(c.test_accuracy)));
        // predicted == measured on the GPU too (the planner builds the same state, including the
        // backend's own cuBLAS workspace and op scratch)
        const MemoryPlan p = predict_memory(plan_request(config("cuda:0"), g.train_samples, g.test_samples));
        for (MemCategory cat : {MemCategory::parameters, MemCategory::gradients, MemCategory::activations,
                                MemCategory::optimizer_state, MemCategory::workspace})
            QVERIFY2(at(p.device, cat) == at(g.ledger.peak, cat),
                     qPrintable(QString("%1: predicted %2, measured %3")
                                    .arg(category_name(cat))
                                    .arg(at(p.device, cat))
                                    .arg(at(g.ledger.peak, cat))));
        QVERIFY(p.device_reserved >= p.device_total);
        QVERIFY(p.process_total > p.device_reserved);  // the context and handles on top
    }
};

QTEST_APPLESS_MAIN(CudaTrainTest)
#include "test_cuda_train.moc"
