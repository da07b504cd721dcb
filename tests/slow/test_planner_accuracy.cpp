// The planner against the ledger: for every preset x {fp32, bf16, fp16} x {no checkpoint, all blocks}
// x {accumulation 1, 4} x {offload off, on}, the predicted bytes per category (device and host) are
// within 2% of the peak the ledger measured in a real run, and so is the total.
#include <QtTest>

#include "base/error.h"
#include "plan/planner.h"
#include "train/trainer.h"

using namespace hr;

class PlannerAccuracyTest : public QObject {
    Q_OBJECT

    static bool close(std::size_t predicted, std::size_t measured) {
        const double tol = 0.02 * static_cast<double>(std::max<std::size_t>(measured, 1));
        return std::abs(static_cast<double>(predicted) - static_cast<double>(measured)) <= tol;
    }

private slots:
    void predictedEqualsMeasured_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("precision");
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<bool>("offload");
        for (auto& n : preset_names())
            for (const char* p : {"fp32", "bf16", "fp16"})
                for (const char* c : {"none", "all"})
                    for (int a : {1, 4})
                        for (bool o : {false, true})
                            QTest::newRow(QStringLiteral("%1 %2 ckpt=%3 acc=%4 offload=%5")
                                              .arg(QString::fromStdString(n), p, c)
                                              .arg(a)
                                              .arg(o)
                                              .toUtf8())
                                << QString::fromStdString(n) << p << c << a << o;
    }

    void predictedEqualsMeasured() {
        QFETCH(QString, preset);
        QFETCH(QString, precision);
        QFETCH(QString, checkpoint);
        QFETCH(int, accumulate);
        QFETCH(bool, offload);
        TrainConfig c;
        c.model = preset_model(preset.toStdString());
        c.data = "synthetic";
        c.train_limit = 256;
        c.test_limit = 64;
        c.steps = 2;
        c.batch = 64;
        c.threads = 2;
        c.optimizer.kind = "adam";
        c.optimizer.lr = 1e-3;
        c.strategy.precision = precision.toStdString();
        c.strategy.checkpoint = checkpoint.toStdString();
        c.strategy.accumulate = accumulate;
        c.strategy.offload_optimizer = offload;
        TrainResult r = Trainer(c).run();
        QVERIFY2(r.status == "finished", r.error.c_str());

        PlanRequest req;
        req.spec = c.model;
        req.batch = c.batch;
        req.strategy = c.strategy;
        req.optimizer = c.optimizer;
        req.threads = c.threads;
        req.train_samples = r.train_samples;
        req.test_samples = r.test_samples;
        MemoryPlan p = predict_memory(req);
        for (MemCategory cat : all_categories()) {
            QVERIFY2(close(at(p.device, cat), at(r.ledger.peak, cat)),
                     qPrintable(QStringLiteral("device %1: predicted %2, measured %3")
                                    .arg(category_name(cat))
                                    .arg(at(p.device, cat))
                                    .arg(at(r.ledger.peak, cat))));
            QVERIFY2(close(at(p.host, cat), at(r.host_ledger.peak, cat)),
                     qPrintable(QStringLiteral("host %1: predicted %2, measured %3")
                                    .arg(category_name(cat))
                                    .arg(at(p.host, cat))
                                    .arg(at(r.host_ledger.peak, cat))));
        }
        QVERIFY(close(p.device_total, r.ledger.peak_total));
        QVERIFY(close(p.host_total, r.host_ledger.peak_total));
    }

    void searchFindsAFittingPlan() {
        PlanRequest req;
        req.spec = preset_model("resnet-mini");
        req.batch = 256;
        req.optimizer.kind = "adam";
        MemoryPlan base = predict_memory(req);
        const std::size_t budget = base.device_total / 3;
        PlanSearch s = search_plans(req, budget);
        QVERIFY(s.best >= 0);
        const PlanCandidate& best = s.candidates[static_cast<std::size_t>(s.best)];
        QVERIFY(best.fits);
        QVERIFY(best.plan.device_total <= budget);
        // rejected candidates say why
        bool sawRejected = false;
        for (const auto& c : s.candidates)
            if (!c.fits) {
                sawRejected = true;
                QVERIFY(c.reason.find("budget") != std::string::npos);
            }
        QVERIFY(sawRejected);
        // and the best fits for real: a run with its strategy stays under the budget
        TrainConfig c;
        c.model = req.spec;
        c.data = "synthetic";
        c.train_limit = 512;
        c.test_limit = 64;
        c.steps = 1;
        c.batch = 256;
        c.threads = 2;
        c.optimizer = req.optimizer;
        c.strategy = best.strategy;
        TrainResult r = Trainer(c).run();
        QCOMPARE(r.status, std::string("finished"));
        QVERIFY(r.ledger.peak_total <= budget + budget / 50);
    }

    void bytesParsing() {
        QCOMPARE(parse_bytes("4GiB"), std::size_t(4) << 30);
        QCOMPARE(parse_bytes("512MiB"), std::size_t(512) << 20);
        QCOMPARE(parse_bytes("1.5GB"), std::size_t(1500000000));
        QCOMPARE(parse_bytes("1000"), std::size_t(1000));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_bytes("lots"));
        QVERIFY_THROWS_EXCEPTION(InputError, parse_bytes("-3GiB"));
    }
};

QTEST_APPLESS_MAIN(PlannerAccuracyTest)
#include "test_planner_accuracy.moc"
