// The planner against the ledger: for every preset x {fp32, bf16, fp16} x {no checkpoint, all blocks}
// x {accumulation 1, 4} x {offload off, on}, the predicted bytes per category (device and host) are
// within 2% of the peak the ledger measured in a real run, and so is the total. Language models too
// (gpt-tiny on text, with selective attention recompute), and what-if plans for models far larger than
// the machine answer quickly without allocating.
#include <QtTest>
#include "test_support.h"

#include <sys/resource.h>

#include <chrono>

#include "base/error.h"
#include "data/text_data.h"
#include "nn/transformer_spec.h"
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
        std::vector<std::string> names = preset_names();  // vit-tiny among them
        names.push_back("gpt-tiny");                       // on text:fortunes (or a text file)
        for (auto& n : names)
            for (const char* p : {"fp32", "bf16", "fp16"})
                for (const char* c : {"none", "all", "attention"})
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
        c.model = preset_model(preset.toStdString(), {1, 28, 28}, 10);  // an image preset: the synthetic data's input
        const bool lm = is_token_model(c.model);
        if (checkpoint == "attention" && transformer_layer_count(c.model) == 0)
            QSKIP("selective attention recompute applies to transformers");
        c.data = "synthetic";
        c.train_limit = 256;
        c.test_limit = 64;
        c.steps = 2;
        c.batch = 64;
        if (lm) {
            c.data = probe_text_data("text:fortunes").available ? "text:fortunes" : "text:" + hrtest::source_path("README.md");
            c.batch = 8;
            c.seq = 64;
            c.train_limit = 0;
            c.test_limit = 0;
            c.eval_tokens = 512;
        }
        c.threads = 2;
        c.optimizer.kind = "adam";
        c.optimizer.lr = 1e-3;
        c.strategy.precision = precision.toStdString();
        c.strategy.checkpoint = checkpoint.toStdString();
        c.strategy.accumulate = accumulate;
        c.strategy.offload_optimizer = offload;
        TrainResult r = Trainer(c).run();
        QVERIFY2(r.status == "finished", r.error.c_str());

        PlanRequest req = plan_request(c, r.train_samples, r.test_samples);
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

    void perLayerActivationsOfATransformer() {
        // every transformer block of gpt-tiny at batch 8, seq 64, fp32 keeps the same bytes, and they are
        // what docs/transformers.md gives: h1, qkv (3), att, x1, h2, fc (4) = 11 sbh values of 4 bytes, the
        // LayerNorms' statistics 16 sb, the log-sum-exp 4 asb, and the block's output sbh values
        PlanRequest req;
        req.spec = preset_model("gpt-tiny");
        req.seq = 64;
        req.batch = 8;
        MemoryPlan p = predict_memory(req);
        const std::size_t s = 64, b = 8, h = 128, a = 4;
        int blocks = 0;
        for (const auto& l : p.layers)
            if (l.type == "transformer_block") {
                ++blocks;
                QCOMPARE(l.activation_bytes, 4 * (11 * s * b * h) + 16 * s * b + 4 * a * s * b + 4 * s * b * h);
            }
        QCOMPARE(blocks, 2);
        // selective recompute drops the attention output and its log-sum-exp from every block
        req.strategy.checkpoint = "attention";
        MemoryPlan q = predict_memory(req);
        for (const auto& l : q.layers)
            if (l.type == "transformer_block")
                QCOMPARE(l.activation_bytes, 4 * (10 * s * b * h) + 16 * s * b + 4 * s * b * h);
        QVERIFY(q.recompute_flops > 0 && p.recompute_flops == 0);
    }

    void whatIfPlanForAModelThatDoesNotFit() {
        // GPT-2 1.5B, batch 8, 1024 tokens, bf16, every block checkpointed: more memory than this machine
        // has, planned in under a second without touching memory
        struct rusage before {};
        getrusage(RUSAGE_SELF, &before);
        const auto t0 = std::chrono::steady_clock::now();
        PlanRequest req;
        req.spec = preset_model("gpt2-1.5b");
        req.batch = 8;
        req.seq = 1024;
        req.strategy.precision = "bf16";
        req.strategy.checkpoint = "all";
        req.optimizer.kind = "adamw";
        MemoryPlan p = predict_memory(req);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        struct rusage after {};
        getrusage(RUSAGE_SELF, &after);
        qInfo("gpt2-1.5b plan: %.3f s, device total %s", seconds, format_bytes(p.device_total).c_str());
        QVERIFY2(seconds < 1.0, qPrintable(QString::number(seconds)));
        // the peak resident size grew by far less than one copy of the weights (3 GB in bf16)
        QVERIFY((after.ru_maxrss - before.ru_maxrss) * 1024L < 200L * 1024 * 1024);
        const std::size_t P = 1557686400;
        QVERIFY(at(p.device, MemCategory::parameters) >= P * 2);
        QVERIFY(at(p.device, MemCategory::master_weights) >= P * 4);
        QVERIFY(at(p.device, MemCategory::optimizer_state) >= P * 8);
        QVERIFY(p.device_total > std::size_t(24) << 30);  // does not fit a 24 GiB card
        // and the search ranks strategies for a budget quickly too
        PlanSearch s = search_plans(req, std::size_t(80) << 30);
        QVERIFY(s.best >= 0);
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
