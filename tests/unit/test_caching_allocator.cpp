// The caching allocator's bookkeeping (core/backend/cuda/caching_allocator.h) on a fake device heap:
// size classes, reuse, split, merge, fragmentation, the out-of-memory path (cache freed, retried,
// then an error that explains) and exact ledger totals. Needs no GPU and no CUDA toolkit: the class
// is plain C++ and header-only.
#include <QtTest/QtTest>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "backend/cuda/caching_allocator.h"
#include "base/error.h"

using namespace hr;

namespace {

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

// A fake device: hands out non-overlapping fake addresses (never dereferenced) up to a capacity.
struct FakeHeap {
    std::size_t capacity = 0;
    std::size_t used = 0;
    std::uintptr_t next = 0x100000000ull;
    std::map<std::uintptr_t, std::size_t> live;
    int allocs = 0, frees = 0, failed = 0;
    std::vector<std::pair<void*, std::size_t>> zeroed;

    DeviceHeap heap() {
        DeviceHeap h;
        h.raw_alloc = [this](std::size_t bytes) -> void* {
            if (used + bytes > capacity) {
                ++failed;
                return nullptr;
            }
            const std::uintptr_t p = next;
            next += bytes + 4096;  // a gap: segments are never adjacent
            live[p] = bytes;
            used += bytes;
            ++allocs;
            return reinterpret_cast<void*>(p);
        };
        h.raw_free = [this](void* p) {
            auto it = live.find(reinterpret_cast<std::uintptr_t>(p));
            if (it == live.end()) throw Error("fake heap: freeing an unknown pointer");
            used -= it->second;
            live.erase(it);
            ++frees;
        };
        h.mem_info = [this](std::size_t& f, std::size_t& t) {
            f = capacity - used;
            t = capacity;
            return true;
        };
        h.zero = [this](void* p, std::size_t n) { zeroed.emplace_back(p, n); };
        return h;
    }
};

std::uintptr_t addr(const std::shared_ptr<Storage>& s) { return reinterpret_cast<std::uintptr_t>(s->data()); }

}  // namespace

class CachingAllocatorTest : public QObject {
    Q_OBJECT

private slots:
    void sizeClasses() {
        QCOMPARE(CachingAllocator::round_size(0), std::size_t(512));
        QCOMPARE(CachingAllocator::round_size(1), std::size_t(512));
        QCOMPARE(CachingAllocator::round_size(512), std::size_t(512));
        QCOMPARE(CachingAllocator::round_size(513), std::size_t(1024));
        QCOMPARE(CachingAllocator::segment_size(512), 2 * MiB);
        QCOMPARE(CachingAllocator::segment_size(1 * MiB), 2 * MiB);
        QCOMPARE(CachingAllocator::segment_size(1 * MiB + 512), 20 * MiB);
        QCOMPARE(CachingAllocator::segment_size(10 * MiB), 20 * MiB);
        QCOMPARE(CachingAllocator::segment_size(10 * MiB + 512), 12 * MiB);
        QCOMPARE(CachingAllocator::segment_size(30 * MiB), 30 * MiB);
        QCOMPARE(CachingAllocator::segment_size(31 * MiB), 32 * MiB);
    }

    void reuseFreedBlock() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        std::uintptr_t first;
        {
            auto s = a.allocate(1000, MemCategory::activations, 2);
            first = addr(s);
            QCOMPARE(s->device(), Device::cuda(0));
            QCOMPARE(s->bytes(), std::size_t(1000));
        }
        QCOMPARE(fh.allocs, 1);
        QCOMPARE(fh.frees, 0);  // cached, not returned
        auto s2 = a.allocate(900, MemCategory::gradients);
        QCOMPARE(addr(s2), first);
        QCOMPARE(fh.allocs, 1);
        QCOMPARE(a.stats().cache_hits, std::uint64_t(1));
        // Every allocation handed out is zero-filled, exactly its requested bytes.
        QCOMPARE(fh.zeroed.size(), std::size_t(2));
        QCOMPARE(fh.zeroed[1].second, std::size_t(900));
        // Large blocks are reused too.
        std::uintptr_t big;
        {
            auto b = a.allocate(50 * MiB, MemCategory::parameters);
            big = addr(b);
        }
        auto b2 = a.allocate(49 * MiB, MemCategory::parameters);
        QCOMPARE(addr(b2), big);
        QCOMPARE(fh.allocs, 2);
    }

    void splitSmallSegment() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        auto s1 = a.allocate(1 * KiB, MemCategory::activations);
        auto s2 = a.allocate(1 * KiB, MemCategory::activations);
        auto s3 = a.allocate(3000, MemCategory::activations);  // rounds to 3072
        QCOMPARE(fh.allocs, 1);  // one 2 MiB segment serves all three
        QCOMPARE(addr(s2), addr(s1) + 1 * KiB);
        QCOMPARE(addr(s3), addr(s2) + 1 * KiB);
        const auto st = a.stats();
        QCOMPARE(st.reserved, 2 * MiB);
        QCOMPARE(st.allocated, std::size_t(1024 + 1024 + 3072));
        QCOMPARE(st.requested, std::size_t(1024 + 1024 + 3000));
        QCOMPARE(st.reserved_free, 2 * MiB - 5 * KiB);
        QCOMPARE(st.live_blocks, std::size_t(3));
        QCOMPARE(st.free_blocks, std::size_t(1));  // the tail
        // A large request never comes from the small pool.
        auto big = a.allocate(2 * MiB, MemCategory::activations);
        QCOMPARE(fh.allocs, 2);
        QCOMPARE(a.stats().reserved, 22 * MiB);  // 2 MiB small + 20 MiB medium segment
    }

    void splitLargeBlockOnlyWhenWorthIt() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        auto m = a.allocate(5 * MiB, MemCategory::activations);  // 20 MiB segment, 15 MiB left free
        QCOMPARE(a.stats().free_blocks, std::size_t(1));
        QCOMPARE(a.stats().largest_free_block, 15 * MiB);
        auto m2 = a.allocate(15 * MiB, MemCategory::activations);  // served by the rest
        QCOMPARE(fh.allocs, 1);
        QCOMPARE(addr(m2), addr(m) + 5 * MiB);
        // 19.5 MiB -> its own 20 MiB segment; 0.5 MiB left is not split off (large pool: > 1 MiB).
        auto l = a.allocate(19 * MiB + 512 * KiB, MemCategory::activations);
        QCOMPARE(fh.allocs, 2);
        QCOMPARE(a.stats().allocated, 40 * MiB);
        QCOMPARE(a.stats().free_blocks, std::size_t(0));
    }

    void mergeOnFree() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        auto s1 = a.allocate(256 * KiB, MemCategory::activations);
        auto s2 = a.allocate(256 * KiB, MemCategory::activations);
        auto s3 = a.allocate(256 * KiB, MemCategory::activations);
        const std::uintptr_t base = addr(s1);
        s1.reset();
        s3.reset();  // merges with the free tail
        auto st = a.stats();
        QCOMPARE(st.free_blocks, std::size_t(2));
        QCOMPARE(st.largest_free_block, 2 * MiB - 512 * KiB);
        s2.reset();  // merges with both neighbours: one free block spans the segment
        st = a.stats();
        QCOMPARE(st.free_blocks, std::size_t(1));
        QCOMPARE(st.largest_free_block, 2 * MiB);
        QCOMPARE(st.fragmentation(), 0.0);
        // The merged block serves a request larger than any of the pieces, at the segment start.
        auto s4 = a.allocate(1 * MiB, MemCategory::activations);
        QCOMPARE(addr(s4), base);
        s4.reset();
        QCOMPARE(a.empty_cache(), 2 * MiB);
        QCOMPARE(fh.frees, 1);
        QCOMPARE(a.stats().reserved, std::size_t(0));
        QCOMPARE(fh.used, std::size_t(0));
    }

    void fragmentation() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        auto s1 = a.allocate(256 * KiB, MemCategory::activations);
        auto s2 = a.allocate(256 * KiB, MemCategory::activations);
        auto s3 = a.allocate(256 * KiB, MemCategory::activations);
        auto s4 = a.allocate(256 * KiB, MemCategory::activations);
        s1.reset();
        s3.reset();
        // Free: 256 KiB + 256 KiB + the 1 MiB tail = 1.5 MiB, largest piece 1 MiB.
        const auto st = a.stats();
        QCOMPARE(st.reserved_free, 1536 * KiB);
        QCOMPARE(st.largest_free_block, 1 * MiB);
        QVERIFY(std::abs(st.fragmentation() - 1.0 / 3.0) < 1e-12);
        // A segment with a live block is not returned by empty_cache.
        QCOMPARE(a.empty_cache(), std::size_t(0));
        QCOMPARE(fh.frees, 0);
        QCOMPARE(ledger->snapshot().reserved_free, 2 * MiB - 512 * KiB);
    }

    void oomFreesCacheAndRetries() {
        FakeHeap fh;
        fh.capacity = 64 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        { auto s = a.allocate(40 * MiB, MemCategory::activations); }  // cached after this
        { auto small = a.allocate(4 * KiB, MemCategory::workspace); }   // a cached small segment too
        QCOMPARE(a.stats().reserved, 42 * MiB);
        // 50 MiB does not fit next to the 42 MiB cache: the cache goes back, the retry succeeds.
        auto s = a.allocate(50 * MiB, MemCategory::activations, 3);
        QCOMPARE(fh.failed, 1);
        QCOMPARE(fh.frees, 2);
        QCOMPARE(a.stats().reserved, 50 * MiB);
        QCOMPARE(a.stats().ooms, std::uint64_t(0));
    }

    void oomErrorExplainsAndAllocatorStaysUsable() {
        FakeHeap fh;
        fh.capacity = 100 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(1), ledger, fh.heap());
        auto p = a.allocate(12 * MiB, MemCategory::parameters, 0);
        auto act1 = a.allocate(40 * MiB, MemCategory::activations, 4);
        auto act2 = a.allocate(30 * MiB, MemCategory::activations, 7);
        { auto cached = a.allocate(4 * KiB, MemCategory::other); }  // 2 MiB cached, freed on OOM
        const std::size_t live_before = ledger->live_total();
        QString msg;
        try {
            a.allocate(60 * MiB, MemCategory::activations, 9);
            QFAIL("expected an out-of-memory error");
        } catch (const Error& e) {
            msg = QString::fromStdString(e.what());
        }
        QVERIFY2(msg.contains("out of GPU memory on cuda:1"), qPrintable(msg));
        QVERIFY2(msg.contains("could not allocate 60.00 MiB for activations of layer 9"), qPrintable(msg));
        QVERIFY2(msg.contains("The device has"), qPrintable(msg));
        QVERIFY2(msg.contains("free of 100.00 MiB"), qPrintable(msg));
        QVERIFY2(msg.contains("activations 70.00 MiB"), qPrintable(msg));
        QVERIFY2(msg.contains("parameters 12.00 MiB"), qPrintable(msg));
        QVERIFY2(msg.contains("Largest consumers: layer 4 40.00 MiB, layer 7 30.00 MiB, layer 0 12.00 MiB"),
                 qPrintable(msg));
        QVERIFY2(msg.contains("To cut activations (the largest category): activation checkpointing"),
                 qPrintable(msg));
        QVERIFY2(msg.contains("smaller batch"), qPrintable(msg));
        QVERIFY2(msg.contains("bf16"), qPrintable(msg));
        // Categories are listed largest first.
        QVERIFY(msg.indexOf("activations 70.00 MiB") < msg.indexOf("parameters 12.00 MiB"));
        // The cache was returned before giving up; nothing else changed.
        QCOMPARE(fh.failed, 2);
        QCOMPARE(fh.frees, 1);
        QCOMPARE(a.stats().ooms, std::uint64_t(1));
        QCOMPARE(ledger->live_total(), live_before);
        QCOMPARE(a.stats().requested, live_before);
        // Still usable: what fits is handed out, and freeing makes room for more.
        auto ok = a.allocate(512 * KiB, MemCategory::activations, 9);  // a new 2 MiB small segment fits
        QVERIFY(ok->data() != nullptr);
        act1.reset();
        act2.reset();
        auto big = a.allocate(60 * MiB, MemCategory::activations, 9);  // cache freed and retried again
        QVERIFY(big->data() != nullptr);
        QCOMPARE(ledger->live_total(), 12 * MiB + 512 * KiB + 60 * MiB);
        QCOMPARE(a.stats().reserved, 12 * MiB + 2 * MiB + 60 * MiB);
    }

    void oomSuggestionsFollowTheLargestCategory() {
        struct Case {
            MemCategory big;
            const char* expect;
        };
        const Case cases[] = {
            {MemCategory::optimizer_state, "To cut optimizer_state (the largest category): SGD"},
            {MemCategory::parameters, "To cut parameters (the largest category): bf16 mixed precision"},
            {MemCategory::gradients, "To cut gradients (the largest category): bf16 mixed precision"},
        };
        for (const Case& c : cases) {
            FakeHeap fh;
            fh.capacity = 64 * MiB;
            auto ledger = std::make_shared<MemoryLedger>();
            CachingAllocator a(Device::cuda(0), ledger, fh.heap());
            auto held = a.allocate(50 * MiB, c.big);
            auto other = a.allocate(256 * KiB, MemCategory::activations, 1);
            try {
                a.allocate(30 * MiB, MemCategory::activations, 1);
                QFAIL("expected an out-of-memory error");
            } catch (const Error& e) {
                QVERIFY2(std::string(e.what()).find(c.expect) != std::string::npos, e.what());
                QVERIFY2(std::string(e.what()).find("offload") != std::string::npos ||
                             c.big != MemCategory::optimizer_state,
                         e.what());
            }
        }
        // Nothing held yet: the requested category is the one to cut.
        FakeHeap fh;
        fh.capacity = 8 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        CachingAllocator a(Device::cuda(0), ledger, fh.heap());
        try {
            a.allocate(30 * MiB, MemCategory::activations, 2);
            QFAIL("expected an out-of-memory error");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("To cut activations: activation checkpointing") != std::string::npos,
                     e.what());
        }
    }

    void ledgerTotalsEqualLiveAllocations() {
        FakeHeap fh;
        fh.capacity = std::size_t(64) << 30;  // fake addresses: no real memory behind them
        auto ledger = std::make_shared<MemoryLedger>();
        auto a = std::make_unique<CachingAllocator>(Device::cuda(0), ledger, fh.heap());
        std::mt19937_64 rng(7);
        std::vector<std::shared_ptr<Storage>> live;
        std::size_t peak_reserved = 0;
        for (int step = 0; step < 3000; ++step) {
            const bool do_alloc = live.empty() || rng() % 2 == 0;
            if (do_alloc) {
                std::size_t bytes;
                switch (rng() % 4) {
                    case 0: bytes = rng() % 2048; break;                  // tiny (including 0)
                    case 1: bytes = rng() % (1 * MiB) + 1; break;         // small pool
                    case 2: bytes = rng() % (9 * MiB) + 1 * MiB; break;   // medium
                    default: bytes = rng() % (40 * MiB) + 10 * MiB; break; // large
                }
                const auto cat = static_cast<MemCategory>(rng() % kMemCategoryCount);
                live.push_back(a->allocate(bytes, cat, static_cast<int>(rng() % 6) - 1));
            } else {
                const std::size_t i = rng() % live.size();
                live[i] = live.back();
                live.pop_back();
            }
            if (step % 97 == 0) a->empty_cache();
            // Ledger = sum of live requests, per category and in total.
            CategoryBytes want{};
            std::size_t total = 0;
            for (const auto& s : live) {
                at(want, s->category()) += s->bytes();
                total += s->bytes();
            }
            const LedgerSnapshot snap = ledger->snapshot();
            QCOMPARE(snap.live_total, total);
            for (std::size_t c = 0; c < kMemCategoryCount; ++c) QCOMPARE(snap.live[c], want[c]);
            const auto st = a->stats();
            QCOMPARE(st.requested, total);
            QVERIFY(st.allocated >= st.requested);
            QCOMPARE(st.reserved, fh.used);
            // What the ledger shows plus reserved-but-free is what the device holds for us.
            QCOMPARE(snap.live_total + snap.reserved_free, st.reserved);
            QCOMPARE(st.live_blocks, live.size());
            peak_reserved = std::max(peak_reserved, st.reserved);
            QVERIFY(snap.peak_reserved >= st.reserved);
            if (step % 250 == 0) {
                // Live blocks never overlap.
                std::vector<std::pair<std::uintptr_t, std::size_t>> iv;
                for (const auto& s : live) iv.emplace_back(addr(s), CachingAllocator::round_size(s->bytes()));
                std::sort(iv.begin(), iv.end());
                for (std::size_t i = 1; i < iv.size(); ++i) QVERIFY(iv[i - 1].first + iv[i - 1].second <= iv[i].first);
            }
        }
        QCOMPARE(ledger->snapshot().peak_reserved, peak_reserved);
        live.clear();
        QCOMPARE(ledger->live_total(), std::size_t(0));
        QCOMPARE(a->stats().allocated, std::size_t(0));
        a->empty_cache();
        QCOMPARE(a->stats().reserved, std::size_t(0));
        QCOMPARE(fh.used, std::size_t(0));
        QCOMPARE(fh.allocs, fh.frees);
        QCOMPARE(ledger->snapshot().reserved_free, std::size_t(0));
    }

    void destructorReturnsEverything() {
        FakeHeap fh;
        fh.capacity = 1024 * MiB;
        auto ledger = std::make_shared<MemoryLedger>();
        {
            CachingAllocator a(Device::cuda(0), ledger, fh.heap());
            { auto s = a.allocate(3 * MiB, MemCategory::other); }
            { auto s = a.allocate(100, MemCategory::other); }
            QCOMPARE(fh.live.size(), std::size_t(2));
        }
        QCOMPARE(fh.live.size(), std::size_t(0));
        QCOMPARE(fh.used, std::size_t(0));
    }
};

QTEST_APPLESS_MAIN(CachingAllocatorTest)
#include "test_caching_allocator.moc"
