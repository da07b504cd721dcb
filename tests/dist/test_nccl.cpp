// ranks: none
// GPU ranks through NCCL, on a machine with one GPU and no mpirun (a GPU test machine may have no Open
// MPI): the communicator bootstraps a single rank by itself, its collectives move the data as they
// should, and training through it at world size 1 equals training without a communicator (every stage,
// bit for bit: a world of one reduces nothing). Skips without CUDA, NCCL or a device.
#include <QtTest>

#include "dist/communicator.h"
#include "dist_training.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

using namespace hr;

class NcclTest : public QObject {
    Q_OBJECT

private:
    std::unique_ptr<Backend> gpu(std::shared_ptr<MemoryLedger> ledger) {
#ifdef HEADROOM_WITH_CUDA
        return make_cuda_backend(0, std::move(ledger));
#else
        (void)ledger;
        return nullptr;
#endif
    }
    // Why the GPU tests cannot run here ("" when they can).
    static QString skip_reason() {
#ifndef HEADROOM_WITH_CUDA
        return "this build has no CUDA backend";
#else
        if (!nccl_built()) return "this build has no NCCL support (nccl.h was not found)";
        if (cuda_device_count() == 0) return "no CUDA device: " + QString::fromStdString(cuda_unavailable_reason());
        return "";
#endif
    }

private slots:
    void singleRankCollectives() {
        if (const QString why = skip_reason(); !why.isEmpty()) QSKIP(qPrintable(why));
        auto ledger = std::make_shared<MemoryLedger>();
        auto be = gpu(ledger);
        std::unique_ptr<Communicator> comm;
        try {
            comm = make_nccl_communicator(*be, 60.0);
        } catch (const InputError& e) {
            QSKIP(e.what());  // no libnccl.so.2 on this machine
        }
        QCOMPARE(comm->world_size(), 1);
        QCOMPARE(comm->rank(), 0);
        qInfo("%s", comm->name().c_str());
        for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
            std::vector<float> host(1000);
            for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 17) - 8.0f;
            Tensor f = Tensor::empty(be->allocator(), {1000}, DType::f32, MemCategory::communication);
            be->copy_from_host(host.data(), f);
            Tensor a = Tensor::empty(be->allocator(), {1000}, dt, MemCategory::communication);
            Tensor out = Tensor::empty(be->allocator(), {1000}, dt, MemCategory::communication);
            be->copy(f, a);
            comm->all_reduce(a, ReduceOp::sum).wait();
            comm->all_reduce(a, ReduceOp::avg).wait();
            comm->all_gather(a, out).wait();
            Tensor back = Tensor::empty(be->allocator(), {1000}, DType::f32, MemCategory::communication);
            be->copy(out, back);
            std::vector<float> got(1000);
            be->copy_to_host(back, got.data());  // synchronises the compute stream, which waited for NCCL
            QVERIFY2(got == host, dtype_name(dt));
        }
        comm->synchronize();
        comm->check();
        QVERIFY(comm->stats().collectives == 9);
    }

    // The point-to-point path pipeline stages take on GPUs, at the one rank one GPU allows: a group holding
    // a send to this rank and a receive from it (NCCL pairs them) moves the bytes; two groups in a row,
    // each with a send and a receive, as a stage's 1F1B exchanges are; a group of ranks made by split()
    // (ncclCommSplit, NCCL 2.18+) reduces, and its traffic counts in its parent's figures.
    void pointToPointAndGroups() {
        if (const QString why = skip_reason(); !why.isEmpty()) QSKIP(qPrintable(why));
        auto ledger = std::make_shared<MemoryLedger>();
        auto be = gpu(ledger);
        std::unique_ptr<Communicator> comm;
        try {
            comm = make_nccl_communicator(*be, 60.0);
        } catch (const InputError& e) {
            QSKIP(e.what());
        }
        std::vector<float> host(4099);
        for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.25f - 3.0f;
        Tensor a = Tensor::empty(be->allocator(), {4099}, DType::f32, MemCategory::communication);
        Tensor b = Tensor::empty(be->allocator(), {4099}, DType::f32, MemCategory::communication);
        Tensor c = Tensor::empty(be->allocator(), {4099}, DType::f32, MemCategory::communication);
        be->copy_from_host(host.data(), a);
        be->fill(b, 0.0);
        be->fill(c, 0.0);
        comm->exchange({{true, a, 0}, {false, b, 0}}).wait();
        comm->exchange({{true, b, 0}, {false, c, 0}}).wait();
        std::vector<float> got(host.size());
        be->copy_to_host(c, got.data());
        QVERIFY(got == host);
        std::unique_ptr<Communicator> group;
        try {
            group = comm->split(0, 0);
        } catch (const InputError& e) {
            QSKIP(e.what());  // an NCCL older than 2.18
        }
        QCOMPARE(group->world_size(), 1);
        const std::int64_t before = comm->stats().collectives;
        group->all_reduce(c, ReduceOp::sum).wait();
        group->synchronize();
        be->copy_to_host(c, got.data());
        QVERIFY(got == host);
        QCOMPARE(comm->stats().collectives, before + 1);
        qInfo("a group's engine memory: %zu bytes", group->device_overhead_bytes());
    }

    void worldOfOneEqualsNoCommunicator_data() {
        QTest::addColumn<QString>("stage");
        for (const char* s : {"dp", "zero1", "zero2", "zero3"}) QTest::newRow(s) << s;
    }
    void worldOfOneEqualsNoCommunicator() {
        QFETCH(QString, stage);
        if (const QString why = skip_reason(); !why.isEmpty()) QSKIP(qPrintable(why));
        const ModelSpec spec = preset_model("seed-cnn");
        OptimizerConfig o;
        o.momentum = 0.9;
        StrategyConfig plain;
        hrtest::Trainee ref(spec, plain, 32, o, nullptr, gpu(std::make_shared<MemoryLedger>()));
        auto ledger = std::make_shared<MemoryLedger>();
        auto be = gpu(ledger);
        Backend& dev = *be;
        std::unique_ptr<Communicator> comm;
        try {
            comm = make_nccl_communicator(dev, 60.0);
        } catch (const InputError& e) {
            QSKIP(e.what());
        }
        StrategyConfig sc;
        sc.shard = stage.toStdString();
        hrtest::Trainee dist(spec, sc, 32, o, comm.get(), std::move(be));
        for (int s = 0; s < 3; ++s) {
            ref.step(static_cast<std::uint64_t>(s));
            dist.step(static_cast<std::uint64_t>(s));
        }
        comm->synchronize();
        QVERIFY(hrtest::bit_identical(dist.weights(), ref.weights()));
        QVERIFY(comm->stats().collectives > 0);
        dist.st.reset();  // before the communicator it uses, and that before the backend it runs on
        comm.reset();
    }
};

QTEST_APPLESS_MAIN(NcclTest)
#include "test_nccl.moc"
