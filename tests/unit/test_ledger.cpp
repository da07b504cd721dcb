// The memory ledger: exact accounting of parameters, gradients and optimizer state for every preset,
// live/peak bookkeeping and the timeline.
#include <QtTest>

#include <map>
#include <random>
#include <tuple>

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

    // Each layer's split at the total peak, against a replay that copies every layer's live split whenever
    // the total reaches a new high (the plain definition): random allocations and frees over 40 layers,
    // layers first seen after a peak, and reset_peaks between.
    void layerPeakSplitMatchesAPlainReplay() {
        MemoryLedger ledger;
        std::map<int, CategoryBytes> live, at_peak;
        std::size_t total = 0, peak = 0;
        std::vector<std::tuple<std::uint64_t, std::size_t, MemCategory, int>> held;
        std::mt19937 rng(7);
        for (int i = 0; i < 4000; ++i) {
            if (i == 1500 || i == 3100) {
                ledger.reset_peaks();
                at_peak = live;
                peak = total;
            }
            if (!held.empty() && rng() % 5 < 2) {
                const std::size_t k = rng() % held.size();
                const auto [id, bytes, cat, layer] = held[k];
                held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
                ledger.on_free(id);
                at(live[layer], cat) -= bytes;
                total -= bytes;
            } else {
                const std::size_t bytes = 1 + rng() % 4096;
                const MemCategory cat = all_categories()[rng() % all_categories().size()];
                const int layer = static_cast<int>(rng() % (i < 2000 ? 20 : 40)) - 1;  // new layers later
                held.emplace_back(ledger.on_alloc(bytes, cat, layer), bytes, cat, layer);
                at(live[layer], cat) += bytes;
                total += bytes;
                if (total > peak) {
                    peak = total;
                    at_peak = live;
                }
            }
            if (i % 97 == 0 || i == 3999) {
                const LedgerSnapshot s = ledger.snapshot();
                QCOMPARE(s.peak_total, peak);
                QCOMPARE(s.layer_peak_split.size(), at_peak.size());
                for (const auto& [layer, split] : at_peak) QVERIFY2(s.layer_peak_split.at(layer) == split, qPrintable(QString::number(i)));
            }
        }
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
