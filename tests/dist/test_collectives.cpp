// ranks: 1 2 3
// The communicator's collectives on CPU ranks through Open MPI, at world sizes 1, 2 and 3 (odd sizes
// catch chunking bugs), for f32, bf16 and f16. Expected values are computed here from the formula
// every rank filled its buffer with, in double, never through the communicator.
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "dist_test.h"

using namespace hr;
using hrtest::comm;

namespace {

// Small integers: every sum over up to 3 ranks is exact in bf16 (8 significant bits) and f16.
double exact_value(int rank, std::int64_t i) { return static_cast<double>((rank + 1) * (i % 5 + 1)); }
// Fractions that do not add exactly in 8 or 11 bits.
double rough_value(int rank, std::int64_t i) { return 0.1 + 0.37 * rank + 0.013 * static_cast<double>(i % 97); }

Tensor make(DType dt, std::int64_t n, double (*f)(int, std::int64_t), int rank, std::int64_t first = 0) {
    Tensor t = Tensor::empty(hrtest::comm_backend().allocator(), {n}, dt, MemCategory::communication);
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(f(rank, first + i));
        if (dt == DType::f32) t.data<float>()[i] = v;
        else if (dt == DType::bf16) t.data<std::uint16_t>()[i] = f32_to_bf16(v);
        else t.data<std::uint16_t>()[i] = f32_to_f16(v);
    }
    return t;
}

double get(const Tensor& t, std::int64_t i) {
    if (t.dtype() == DType::f32) return t.data<float>()[i];
    if (t.dtype() == DType::bf16) return bf16_to_f32(t.data<std::uint16_t>()[i]);
    return f16_to_f32(t.data<std::uint16_t>()[i]);
}

// The value each rank put in, as the dtype stores it.
double stored(DType dt, double v) {
    const float f = static_cast<float>(v);
    if (dt == DType::f32) return f;
    if (dt == DType::bf16) return bf16_to_f32(f32_to_bf16(f));
    return f16_to_f32(f32_to_f16(f));
}

double unit_roundoff(DType dt) { return dt == DType::f32 ? 0x1p-24 : dt == DType::bf16 ? 0x1p-8 : 0x1p-11; }

// Every rank holds the same bytes in t (gathered and compared with rank 0's).
bool same_bits_on_all_ranks(const Tensor& t) {
    const int N = comm().world_size();
    Tensor all = Tensor::empty(hrtest::comm_backend().allocator(), {t.numel() * N}, t.dtype(), MemCategory::communication);
    Tensor src = t;
    comm().all_gather(src, all).wait();
    for (int r = 1; r < N; ++r)
        if (std::memcmp(all.raw(), static_cast<char*>(all.raw()) + r * t.nbytes(), t.nbytes()) != 0) return false;
    return true;
}

const std::int64_t kSizes[] = {1, 7, 1000, 4099};

}  // namespace

class CollectivesTest : public QObject {
    Q_OBJECT

private slots:
    void environment() {
        const RankEnvironment env = rank_environment();
        if (env.launched) {
            DIST_VERIFY(env.rank == comm().rank() && env.world_size == comm().world_size(),
                        "mpirun's environment agrees with MPI_Comm_rank/size");
            DIST_VERIFY(env.local_rank >= 0 && env.local_rank < env.local_size, "local rank within the node");
        } else {
            QCOMPARE(comm().world_size(), 1);
        }
        qInfo("%s: %s", env.describe().c_str(), comm().name().c_str());
    }

    void allReduceExact_data() { dtypes(); }
    void allReduceExact() {
        QFETCH(int, dtype);
        const DType dt = static_cast<DType>(dtype);
        const int N = comm().world_size(), r = comm().rank();
        for (std::int64_t n : kSizes) {
            DIST_GUARD({
                Tensor s = make(dt, n, exact_value, r), a = make(dt, n, exact_value, r), m = make(dt, n, exact_value, r);
                CommHandle hs = comm().all_reduce(s, ReduceOp::sum);
                CommHandle ha = comm().all_reduce(a, ReduceOp::avg);
                CommHandle hm = comm().all_reduce(m, ReduceOp::max);
                hm.wait();  // three in flight, waited out of order
                hs.wait();
                ha.wait();
                bool ok = true;
                for (std::int64_t i = 0; i < n; ++i) {
                    double sum = 0;
                    for (int q = 0; q < N; ++q) sum += exact_value(q, i);
                    ok &= get(s, i) == sum;
                    ok &= get(m, i) == exact_value(N - 1, i);
                    ok &= std::abs(get(a, i) - sum / N) <= 2 * unit_roundoff(dt) * sum / N;
                }
                DIST_VERIFY(ok, "all_reduce sum/avg/max of " + std::to_string(n) + " " + dtype_name(dt));
                DIST_VERIFY(same_bits_on_all_ranks(s) && same_bits_on_all_ranks(a), "every rank has the same result");
            });
        }
    }

    // Low precision: each pairwise combine rounds once, so N values carry at most N-1 roundings (plus the
    // inputs' own); the result is the same bits everywhere.
    void allReduceRounding_data() { dtypes(); }
    void allReduceRounding() {
        QFETCH(int, dtype);
        const DType dt = static_cast<DType>(dtype);
        const int N = comm().world_size(), r = comm().rank();
        const std::int64_t n = 4099;
        DIST_GUARD({
            Tensor s = make(dt, n, rough_value, r);
            comm().all_reduce(s, ReduceOp::sum).wait();
            double worst = 0;
            for (std::int64_t i = 0; i < n; ++i) {
                double sum = 0;
                for (int q = 0; q < N; ++q) sum += stored(dt, rough_value(q, i));
                worst = std::max(worst, std::abs(get(s, i) - sum) / sum);
            }
            const double bound = std::max(1, N - 1) * unit_roundoff(dt) * 1.01;
            DIST_VERIFY(worst <= bound, "sum of rounded values within (N-1) roundings (worst " + std::to_string(worst) +
                                            ", bound " + std::to_string(bound) + ")");
            if (N == 1) DIST_VERIFY(worst == 0, "a world of one leaves the data alone");
            DIST_VERIFY(same_bits_on_all_ranks(s), "every rank has the same bits");
        });
    }

    void reduceScatter_data() { dtypes(); }
    void reduceScatter() {
        QFETCH(int, dtype);
        const DType dt = static_cast<DType>(dtype);
        const int N = comm().world_size(), r = comm().rank();
        for (std::int64_t chunk : {1, 3, 517}) {
            DIST_GUARD({
                Tensor in = make(dt, chunk * N, exact_value, r);
                Tensor out = Tensor::empty(hrtest::comm_backend().allocator(), {chunk}, dt, MemCategory::communication);
                Tensor in2 = make(dt, chunk * N, exact_value, r);
                Tensor own = in2.view(r * chunk, {chunk});  // in place: the result lands in this rank's chunk
                CommHandle h1 = comm().reduce_scatter(in, out, ReduceOp::sum);
                CommHandle h2 = comm().reduce_scatter(in2, own, ReduceOp::avg);
                h1.wait();
                h2.wait();
                bool ok = true;
                for (std::int64_t i = 0; i < chunk; ++i) {
                    double sum = 0;
                    for (int q = 0; q < N; ++q) sum += exact_value(q, r * chunk + i);
                    ok &= get(out, i) == sum;
                    ok &= std::abs(get(own, i) - sum / N) <= 2 * unit_roundoff(dt) * sum / N;
                }
                DIST_VERIFY(ok, "reduce_scatter (separate and in place), chunk " + std::to_string(chunk));
            });
        }
    }

    void allGather_data() { dtypes(); }
    void allGather() {
        QFETCH(int, dtype);
        const DType dt = static_cast<DType>(dtype);
        const int N = comm().world_size(), r = comm().rank();
        for (std::int64_t chunk : {1, 3, 517}) {
            DIST_GUARD({
                Tensor in = make(dt, chunk, exact_value, r, r * chunk);
                Tensor out = Tensor::empty(hrtest::comm_backend().allocator(), {chunk * N}, dt, MemCategory::communication);
                // in place: this rank's chunk of the output already holds its contribution
                Tensor out2 = Tensor::empty(hrtest::comm_backend().allocator(), {chunk * N}, dt, MemCategory::communication);
                Tensor mine = out2.view(r * chunk, {chunk});
                std::memcpy(mine.raw(), in.raw(), in.nbytes());
                CommHandle h2 = comm().all_gather(mine, out2);
                CommHandle h1 = comm().all_gather(in, out);
                h1.wait();
                h2.wait();
                bool ok = true;
                for (int q = 0; q < N; ++q)
                    for (std::int64_t i = 0; i < chunk; ++i) {
                        const double want = stored(dt, exact_value(q, q * chunk + i));
                        ok &= get(out, q * chunk + i) == want && get(out2, q * chunk + i) == want;
                    }
                DIST_VERIFY(ok, "all_gather (separate and in place), chunk " + std::to_string(chunk));
            });
        }
    }

    void broadcastEveryRootAndDtype() {
        const int N = comm().world_size(), r = comm().rank();
        DIST_GUARD({
            for (int root = 0; root < N; ++root) {
                Tensor f = make(DType::f32, 1001, rough_value, r);
                Tensor h = make(DType::bf16, 33, rough_value, r);
                Tensor l = Tensor::empty(hrtest::comm_backend().allocator(), {5}, DType::i64, MemCategory::other);
                for (int i = 0; i < 5; ++i) l.data<std::int64_t>()[i] = (std::int64_t(r) << 40) + i;
                CommHandle a = comm().broadcast(f, root), b = comm().broadcast(h, root), c = comm().broadcast(l, root);
                a.wait();
                b.wait();
                c.wait();
                bool ok = true;
                for (std::int64_t i = 0; i < 1001; ++i) ok &= get(f, i) == stored(DType::f32, rough_value(root, i));
                for (std::int64_t i = 0; i < 33; ++i) ok &= get(h, i) == stored(DType::bf16, rough_value(root, i));
                for (int i = 0; i < 5; ++i) ok &= l.data<std::int64_t>()[i] == (std::int64_t(root) << 40) + i;
                DIST_VERIFY(ok, "broadcast from rank " + std::to_string(root));
            }
        });
    }

    void valuesBarrierAgreement() {
        const int N = comm().world_size(), r = comm().rank();
        DIST_GUARD({
            comm().barrier();
            const double s = comm().all_reduce_value(r + 0.5, ReduceOp::sum);
            const double m = comm().all_reduce_value(r + 0.5, ReduceOp::max);
            const double a = comm().all_reduce_value(r + 0.5, ReduceOp::avg);
            DIST_VERIFY(s == N * N / 2.0 && m == N - 0.5 && a == N / 2.0, "scalar sum, max, avg");
            // the last rank disagrees: every rank hears it
            const bool verdict = all_ranks_agree(comm(), r != N - 1);
            DIST_VERIFY(!verdict, "one rank's 'no' is every rank's answer");
            DIST_VERIFY(all_ranks_agree(comm(), true), "all 'yes' is 'yes'");
        });
    }

    // Wrong counts are refused before anything is sent (on every rank alike, so nobody waits).
    void badCallsThrowBeforeSending() {
        const int N = comm().world_size(), r = comm().rank();
        Tensor in = make(DType::f32, 4 * N + 1, exact_value, r);
        Tensor out = make(DType::f32, 4, exact_value, r);
        QVERIFY_THROWS_EXCEPTION(Error, comm().reduce_scatter(in, out, ReduceOp::sum));
        Tensor g = make(DType::f32, 3, exact_value, r);
        Tensor all = make(DType::f32, 3 * N, exact_value, r);
        Tensor wrong = all.view(0, {3});  // overlaps the output but is not this rank's chunk (unless rank 0)
        if (r != 0) QVERIFY_THROWS_EXCEPTION(Error, comm().all_gather(wrong, all));
        Tensor i64 = Tensor::empty(hrtest::comm_backend().allocator(), {4}, DType::i64, MemCategory::other);
        QVERIFY_THROWS_EXCEPTION(Error, comm().all_reduce(i64, ReduceOp::sum));
        // and the communicator still works
        DIST_GUARD({
            comm().all_reduce(g, ReduceOp::sum).wait();
            DIST_VERIFY(get(g, 2) == 3.0 * N * (N + 1) / 2, "a good call after refused ones");
        });
    }

    void statsCountPayload() {
        const int r = comm().rank();
        const CommStats before = comm().stats();
        Tensor t = make(DType::bf16, 100, exact_value, r);
        comm().all_reduce(t, ReduceOp::sum).wait();
        const CommStats after = comm().stats();
        QCOMPARE(after.collectives - before.collectives, std::int64_t(1));
        QCOMPARE(after.bytes - before.bytes, 200.0);
    }

    // Communicator::exchange: each rank sends to both neighbours on a ring and receives from both, one
    // group a round, three rounds. 1 MiB a message is past Open MPI's eager limit, so a send finishes only
    // once its receive is posted: transfers waited one by one in this order would wait for each other.
    // Each round's messages arrive whole, from the right rank, in order.
    void groupedExchangeOnARing() {
        const int r = comm().rank(), N = comm().world_size();
        if (N < 2) QSKIP("a ring needs 2 ranks");
        const int next = (r + 1) % N, prev = (r + N - 1) % N;
        const std::int64_t n = 262144;  // f32: 1 MiB
        const CommStats before = comm().stats();
        for (int round = 0; round < 3; ++round) {
            auto value = [&](int from, int to, std::int64_t i) { return static_cast<float>(from * 1000 + to * 10 + round) + static_cast<float>(i % 7); };
            Tensor to_next = make(DType::f32, n, rough_value, r), to_prev = make(DType::f32, n, rough_value, r);
            for (std::int64_t i = 0; i < n; ++i) {
                to_next.data<float>()[i] = value(r, next, i);
                to_prev.data<float>()[i] = value(r, prev, i);
            }
            Tensor from_prev = make(DType::f32, n, rough_value, r), from_next = make(DType::f32, n, rough_value, r);
            DIST_GUARD({
                comm().exchange({{true, to_next, next}, {false, from_prev, prev}, {true, to_prev, prev},
                                 {false, from_next, next}}).wait();
                bool ok = true;
                for (std::int64_t i = 0; i < n && ok; ++i)
                    ok = from_prev.data<float>()[i] == value(prev, r, i) && from_next.data<float>()[i] == value(next, r, i);
                DIST_VERIFY(ok, "round " + std::to_string(round));
            });
        }
        QCOMPARE(comm().stats().collectives - before.collectives, std::int64_t(12));
        QCOMPARE(comm().stats().bytes - before.bytes, 12.0 * 4 * n);
    }

private:
    static void dtypes() {
        QTest::addColumn<int>("dtype");
        QTest::newRow("f32") << static_cast<int>(DType::f32);
        QTest::newRow("bf16") << static_cast<int>(DType::bf16);
        QTest::newRow("f16") << static_cast<int>(DType::f16);
    }
};

HR_DIST_TEST_MAIN(CollectivesTest)
#include "test_collectives.moc"
