// DataLoader: every sample once per epoch, seeded order, drop_last, torchvision-exact
// normalisation, prefetch-thread shutdown at any point, and the ledger's data bytes.
#include <QtTest/QtTest>

#include <cmath>
#include <cstring>
#include <set>

#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "memory/ledger.h"

using namespace hr;

namespace {

// count samples of (1, 2, 3); pixels 0 and 1 hold the sample id (low, high byte), label = id % 10.
Dataset make_ids(std::int64_t count) {
    Dataset d;
    d.name = "ids";
    d.count = count;
    d.sample_shape = {1, 2, 3};
    d.num_classes = 10;
    d.images.resize(static_cast<std::size_t>(count) * 6);
    d.labels.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) {
        d.images[i * 6 + 0] = static_cast<std::uint8_t>(i & 0xff);
        d.images[i * 6 + 1] = static_cast<std::uint8_t>(i >> 8);
        for (int k = 2; k < 6; ++k) d.images[i * 6 + k] = static_cast<std::uint8_t>((i * 5 + k) % 256);
        d.labels[i] = i % 10;
    }
    return d;
}

// With mean 0, std 1 the value is v / 255: recover the sample id.
std::int64_t sample_id(const Batch& b, std::int64_t j) {
    auto lo = std::lround(b.images[j * 6 + 0] * 255.0f);
    auto hi = std::lround(b.images[j * 6 + 1] * 255.0f);
    return lo + 256 * hi;
}

std::vector<std::int64_t> run_epoch(DataLoader& l, int epoch, std::vector<std::int64_t>* sizes = nullptr) {
    l.start_epoch(epoch);
    std::vector<std::int64_t> ids;
    Batch b;
    std::int64_t expect_index = 0;
    while (l.next(b)) {
        if (b.index != expect_index++) return {};
        if (static_cast<std::int64_t>(b.images.size()) != b.size * 6) return {};
        if (static_cast<std::int64_t>(b.labels.size()) != b.size) return {};
        for (std::int64_t j = 0; j < b.size; ++j) {
            std::int64_t id = sample_id(b, j);
            if (b.labels[j] != id % 10) return {};
            ids.push_back(id);
        }
        if (sizes) sizes->push_back(b.size);
    }
    return ids;
}

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

}  // namespace

class TestDataLoader : public QObject {
    Q_OBJECT

private slots:
    void each_sample_once_per_epoch() {
        Dataset d = make_ids(103);
        DataLoader l(d, 16, true, 42, false, 0.0f, 1.0f);
        QCOMPARE(l.steps_per_epoch(), std::int64_t{7});
        for (int epoch = 0; epoch < 3; ++epoch) {
            std::vector<std::int64_t> sizes;
            auto ids = run_epoch(l, epoch, &sizes);
            QCOMPARE(ids.size(), std::size_t{103});
            QCOMPARE(std::set<std::int64_t>(ids.begin(), ids.end()).size(), std::size_t{103});
            QCOMPARE(*std::max_element(ids.begin(), ids.end()), std::int64_t{102});
            QCOMPARE(sizes, (std::vector<std::int64_t>{16, 16, 16, 16, 16, 16, 7}));
            QCOMPARE(ids, l.epoch_order(epoch));
        }
        Batch b;
        QVERIFY(!l.next(b));  // still at the end of the epoch
    }

    // A batch is a view of its slot: while the consumer holds it the prefetch thread must not refill it
    // (it has time to: every other slot is ready long before the check), and the batch's rows stay the
    // samples of its own place in the epoch's order; depth 1 (the consumer's slot is the only one) still
    // goes through every epoch.
    void held_batch_is_not_refilled() {
        Dataset d = make_ids(400);
        for (int depth : {1, 2, 3}) {
            DataLoader l(d, 16, true, 5, false, 0.0f, 1.0f, nullptr, depth);
            for (int epoch = 0; epoch < 2; ++epoch) {
                l.start_epoch(epoch);
                const std::vector<std::int64_t> order = l.epoch_order(epoch);
                Batch b;
                std::int64_t seen = 0;
                while (l.next(b)) {
                    QThread::msleep(2);
                    for (std::int64_t j = 0; j < b.size; ++j)
                        QCOMPARE(sample_id(b, j), order[static_cast<std::size_t>(b.index * 16 + j)]);
                    seen += b.size;
                }
                QCOMPARE(seen, std::int64_t{400});
            }
        }
    }

    void seeded_order() {
        Dataset d = make_ids(500);
        DataLoader a(d, 32, true, 7, false, 0.0f, 1.0f);
        DataLoader b(d, 32, true, 7, false, 0.0f, 1.0f);
        DataLoader c(d, 32, true, 8, false, 0.0f, 1.0f);
        auto a0 = run_epoch(a, 0), a1 = run_epoch(a, 1);
        QCOMPARE(run_epoch(b, 0), a0);  // same seed, same epoch: same order
        QCOMPARE(run_epoch(b, 1), a1);
        QVERIFY(a0 != a1);               // different epoch: different order
        QVERIFY(run_epoch(c, 0) != a0);  // different seed: different order
        QCOMPARE(run_epoch(a, 0), a0);   // revisiting an epoch repeats it
        std::vector<std::int64_t> sorted(500);
        std::iota(sorted.begin(), sorted.end(), 0);
        QVERIFY(a0 != sorted);
        DataLoader plain(d, 32, false, 7, false, 0.0f, 1.0f);
        QCOMPARE(run_epoch(plain, 0), sorted);
        QCOMPARE(run_epoch(plain, 5), sorted);
    }

    void drop_last() {
        Dataset d = make_ids(103);
        DataLoader l(d, 16, true, 1, true, 0.0f, 1.0f);
        QCOMPARE(l.steps_per_epoch(), std::int64_t{6});
        std::vector<std::int64_t> sizes;
        auto ids = run_epoch(l, 0, &sizes);
        QCOMPARE(sizes, (std::vector<std::int64_t>(6, 16)));
        QCOMPARE(std::set<std::int64_t>(ids.begin(), ids.end()).size(), std::size_t{96});
        // The kept samples are the first 96 of the epoch's order.
        auto order = l.epoch_order(0);
        QCOMPARE(ids, std::vector<std::int64_t>(order.begin(), order.begin() + 96));
        Dataset small = make_ids(10);
        QVERIFY_THROWS_EXCEPTION(InputError, DataLoader(small, 16, true, 1, true, 0.0f, 1.0f));
        QVERIFY_THROWS_EXCEPTION(InputError, DataLoader(d, 0, true, 1, false, 0.0f, 1.0f));
    }

    void normalisation_matches_torchvision() {
        Dataset d;
        d.name = "all-bytes";
        d.count = 1;
        d.sample_shape = {1, 16, 16};
        d.num_classes = 10;
        for (int v = 0; v < 256; ++v) d.images.push_back(static_cast<std::uint8_t>(v));
        d.labels = {3};
        // Bit patterns from torch 1.13: torch.arange(256).float().div(255).sub_(m).div_(s).
        const int probes[6] = {0, 1, 37, 128, 200, 255};
        struct Case {
            float mean, std;
            std::uint32_t expect[6];
        } cases[2] = {
            {0.2860f, 0.3530f, {0xbf4f6929, 0xbf4c911b, 0xbecc5e24, 0x3f1c9e13, 0x3fb4b111, 0x4001734f}},
            {0.1307f, 0.3081f, {0xbed93271, 0xbed2ae20, 0x3d3f69bf, 0x3f9a3d7a, 0x4007c593, 0x4034933d}},
        };
        for (const auto& c : cases) {
            DataLoader l(d, 4, false, 0, false, c.mean, c.std);
            Batch b;
            QVERIFY(l.next(b));
            QCOMPARE(b.size, std::int64_t{1});
            QCOMPARE(b.labels.size(), std::size_t{1});
            QCOMPARE(b.labels[0], std::int64_t{3});
            QCOMPARE(b.images.size(), std::size_t{256});
            for (int i = 0; i < 6; ++i) QCOMPARE(bits(b.images[probes[i]]), c.expect[i]);
            for (int v = 0; v < 256; ++v) {
                float x = static_cast<float>(v) / 255.0f;
                QCOMPARE(bits(b.images[v]), bits((x - c.mean) / c.std));
            }
            QVERIFY(!l.next(b));
        }
    }

    void shutdown_and_restart_at_any_point() {
        Dataset d = make_ids(4000);
        // Destroyed without ever starting, right after starting, and mid-epoch with a full queue.
        for (int i = 0; i < 20; ++i) {
            DataLoader a(d, 8, true, i, false, 0.0f, 1.0f);
            DataLoader b(d, 8, true, i, false, 0.0f, 1.0f);
            b.start_epoch(0);
            DataLoader c(d, 8, true, i, false, 0.0f, 1.0f, nullptr, 2);
            Batch batch;
            QVERIFY(c.next(batch));
            QVERIFY(c.next(batch));
        }
        // A new epoch started mid-way drops the old one's batches and yields a full, correct epoch.
        DataLoader l(d, 64, true, 5, false, 0.0f, 1.0f);
        l.start_epoch(0);
        Batch b;
        for (int i = 0; i < 3; ++i) QVERIFY(l.next(b));
        QCOMPARE(b.index, std::int64_t{2});
        auto ids = run_epoch(l, 1);
        QCOMPARE(ids, l.epoch_order(1));
        // Restarting the same epoch repeatedly mid-way.
        for (int k = 0; k < 10; ++k) {
            l.start_epoch(2);
            QVERIFY(l.next(b));
            QCOMPARE(b.index, std::int64_t{0});
        }
        QCOMPARE(run_epoch(l, 2), l.epoch_order(2));
        // next() without start_epoch starts epoch 0.
        DataLoader m(d, 1000, true, 9, false, 0.0f, 1.0f);
        QVERIFY(m.next(b));
        QCOMPARE(m.epoch(), 0);
        auto order = m.epoch_order(0);
        for (std::int64_t j = 0; j < b.size; ++j) QCOMPARE(sample_id(b, j), order[j]);
    }

    void ledger_records_the_prefetch_pool() {
        Dataset d = make_ids(1000);
        MemoryLedger ledger;
        {
            DataLoader l(d, 16, true, 3, false, 0.0f, 1.0f, &ledger, 3);
            // 3 slots x (16 x 6 f32 images + 16 i64 labels) = 3 x (384 + 128)
            const std::size_t expected = 3 * (16 * 6 * 4 + 16 * 8);
            QCOMPARE(l.prefetch_bytes(), expected);
            QCOMPARE(ledger.live_bytes(MemCategory::data), expected);
            run_epoch(l, 0);
            l.start_epoch(1);
            Batch b;
            QVERIFY(l.next(b));
            QCOMPARE(ledger.live_bytes(MemCategory::data), expected);  // fixed-size reuse: stable
            QCOMPARE(ledger.snapshot().peak[static_cast<std::size_t>(MemCategory::data)], expected);
            QCOMPARE(ledger.live_total(), expected);
        }
        QCOMPARE(ledger.live_bytes(MemCategory::data), std::size_t{0});
        // The pool never holds more slots than an epoch has batches.
        {
            Dataset twenty = make_ids(20);
            DataLoader l(twenty, 16, false, 0, false, 0.0f, 1.0f, &ledger, 4);
            QCOMPARE(l.steps_per_epoch(), std::int64_t{2});
            QCOMPARE(ledger.live_bytes(MemCategory::data), 2 * std::size_t{16 * 6 * 4 + 16 * 8});
            QCOMPARE(run_epoch(l, 0).size(), std::size_t{20});
        }
        QCOMPARE(ledger.live_bytes(MemCategory::data), std::size_t{0});
    }

    void works_on_synthetic_dataset() {
        DatasetPair p = load_dataset("synthetic");
        DataLoader l(p.train, 64, true, 1, false, p.train.norm_mean, p.train.norm_std);
        QCOMPARE(l.steps_per_epoch(), std::int64_t{32});
        l.start_epoch(0);
        Batch b;
        double sum = 0, sum2 = 0;
        std::size_t n = 0;
        while (l.next(b)) {
            QCOMPARE(b.images.size(), std::size_t(b.size * 784));
            for (float x : b.images) sum += x, sum2 += double(x) * x, ++n;
        }
        QCOMPARE(n, std::size_t{2048 * 784});
        // Normalised with its own statistics: mean ~0, std ~1.
        double mean = sum / n;
        QVERIFY(std::abs(mean) < 1e-3);
        QVERIFY(std::abs(std::sqrt(sum2 / n - mean * mean) - 1.0) < 1e-3);
    }
};

QTEST_APPLESS_MAIN(TestDataLoader)
#include "test_data_loader.moc"
