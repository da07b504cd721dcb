// The memory ledger: exact accounting of parameters, gradients and optimizer state for every preset,
// live/peak bookkeeping and the timeline.
#include <QtTest>

#include "backend/cpu/cpu_backend.h"
#include "nn/model.h"
#include "optim/optimizer.h"

using namespace hr;

class LedgerTest : public QObject {
    Q_OBJECT

private slots:
    void liveAndPeak() {
        auto ledger = std::make_shared<MemoryLedger>();
        CpuAllocator a(ledger);
        {
            auto s1 = a.allocate(1000, MemCategory::activations, 3);
            auto s2 = a.allocate(24, MemCategory::parameters);
            QCOMPARE(ledger->live_bytes(MemCategory::activations), std::size_t(1000));
            QCOMPARE(ledger->live_total(), std::size_t(1024));
        }
        LedgerSnapshot s = ledger->snapshot();
        QCOMPARE(s.live_total, std::size_t(0));
        QCOMPARE(s.peak_total, std::size_t(1024));
        QCOMPARE(at(s.peak, MemCategory::activations), std::size_t(1000));
        QCOMPARE(at(s.at_peak, MemCategory::parameters), std::size_t(24));
        QCOMPARE(s.layers.at(3).peak, std::size_t(1000));
        QCOMPARE(s.layers.at(3).live, std::size_t(0));
        auto tl = ledger->timeline();
        QCOMPARE(tl.size(), std::size_t(4));
        QCOMPARE(tl[0].delta, std::int64_t(1000));
        QCOMPARE(tl.back().live_total, std::size_t(0));
        ledger->reset_peaks();
        QCOMPARE(ledger->snapshot().peak_total, std::size_t(0));
    }

    void timelineIsBounded() {
        auto ledger = std::make_shared<MemoryLedger>();
        CpuAllocator a(ledger);
        for (std::size_t i = 0; i < MemoryLedger::kTimelineCapacity + 500; ++i) a.allocate(8, MemCategory::other);
        auto tl = ledger->timeline();
        QCOMPARE(tl.size(), MemoryLedger::kTimelineCapacity);
        QVERIFY(tl.front().t_seconds <= tl.back().t_seconds);
    }

    void exactForEveryPreset_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("optimizer");
        for (auto& n : preset_names()) {
            QTest::newRow((n + " sgd").c_str()) << QString::fromStdString(n) << "sgd";
            QTest::newRow((n + " sgd+momentum").c_str()) << QString::fromStdString(n) << "momentum";
            QTest::newRow((n + " adam").c_str()) << QString::fromStdString(n) << "adam";
        }
    }
    void exactForEveryPreset() {
        QFETCH(QString, preset);
        QFETCH(QString, optimizer);
        auto ledger = std::make_shared<MemoryLedger>();
        auto be = make_cpu_backend(1, ledger);
        ModelSpec spec = preset_model(preset.toStdString());
        ModelOptions o;
        o.batch = 8;
        Model m(spec, *be, o);
        OptimizerConfig oc;
        if (optimizer == "adam") oc.kind = "adam";
        if (optimizer == "momentum") oc.momentum = 0.9;
        Optimizer opt(oc, *be, m.flat_param_numel(), DType::f32);
        // each parameter tensor starts on a 256-byte boundary: 64 f32 values per step
        std::int64_t P = 0;
        for (const auto& t : m.state_dict()) {
            if (!t.trainable) continue;
            QCOMPARE(t.tensor.byte_offset() % 256, std::size_t(0));
            P = (P + 63) / 64 * 64 + t.tensor.numel();
        }
        P = (P + 63) / 64 * 64;
        QVERIFY(P >= analyze_model_spec(spec).total_params);
        QCOMPARE(m.param_count(), analyze_model_spec(spec).total_params);
        LedgerSnapshot s = ledger->snapshot();
        QCOMPARE(at(s.live, MemCategory::parameters), std::size_t(P * 4));
        QCOMPARE(at(s.live, MemCategory::gradients), std::size_t(P * 4));
        QCOMPARE(at(s.live, MemCategory::optimizer_state), std::size_t(P * 4 * optimizer_states_per_param(oc)));
        // everything the model allocated is in the ledger, category by category
        CategoryBytes mb = m.allocated_bytes();
        for (MemCategory c : {MemCategory::parameters, MemCategory::gradients, MemCategory::activations,
                              MemCategory::workspace, MemCategory::other})
            QCOMPARE(at(s.live, c), at(mb, c));
        // activations: per-sample bytes of the spec report times the batch (+ BatchNorm's per-channel stats)
        std::size_t bn_stats = 0;
        for (auto& l : analyze_model_spec(spec).layers)
            if (l.type == "batchnorm2d") bn_stats += 2 * 4 * static_cast<std::size_t>(l.output_shape[0]);
        QCOMPARE(at(s.live, MemCategory::activations),
                 std::size_t(analyze_model_spec(spec).activation_bytes_per_sample * 8) + bn_stats);
    }
};

QTEST_APPLESS_MAIN(LedgerTest)
#include "test_ledger.moc"
