// A peer that stalls ends a run of several ranks within --rank-timeout, for both workloads (images and
// tokens). On a GPU, NCCL's collectives return at once and only order the device: a host read-back (the
// loss, the finite check, the gradient norm) would then block in cudaStreamSynchronize forever unless the
// trainer first waits for the communication with the timeout (Communicator::synchronize). The stand-in
// here behaves like that: its collectives are queued and never finish, wait() only orders, and
// synchronize() polls them under the timeout. The trainer runs in this process as rank 0 of 2 (the
// launcher's variables are set as mpirun sets them); without the waits the run would finish normally.
#include <QtTest>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/error.h"
#include "dist/communicator.h"
#include "nn/model_spec.h"
#include "nn/transformer_spec.h"
#include "test_support.h"
#include "train/run_summary.h"
#include "train/trainer.h"

using namespace hr;

namespace {

class StalledPeer : public Communicator {
public:
    StalledPeer(Backend& backend, double timeout) : backend_(backend) { set_timeout_seconds(timeout); }
    int rank() const override { return 0; }
    int world_size() const override { return 2; }
    Device device() const override { return backend_.device(); }
    std::string name() const override { return "stalled peer (test)"; }

    struct Queued : CommHandle::Impl {
        void wait() override {}  // like NCCL: orders later device work, does not block the host
        bool test() override { return false; }
    };
    CommHandle queue(const Tensor& payload) {
        count(payload);
        ++queued;
        return CommHandle(std::make_unique<Queued>());
    }
    CommHandle all_reduce(Tensor& b, ReduceOp) override { return queue(b); }
    CommHandle reduce_scatter(const Tensor& in, Tensor&, ReduceOp) override { return queue(in); }
    CommHandle all_gather(const Tensor&, Tensor& out) override { return queue(out); }
    CommHandle broadcast(Tensor& b, int) override { return queue(b); }
    void barrier() override { synchronize(); }
    double all_reduce_value(double v, ReduceOp) override { return v; }
    void synchronize() override {
        ++synchronized;
        if (queued == 0) return;
        const auto t0 = std::chrono::steady_clock::now();
        while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < timeout_seconds())
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        throw Error(HR_MSG("dist.timeout",
                           "rank %1: %2 did not finish within %3 s: another rank stopped, is stuck or took a "
                           "different path (its messages say which); --rank-timeout sets the limit"),
                    {"0", "the collectives of this step", std::to_string(static_cast<long long>(timeout_seconds()))});
    }
    void abort_all(const std::string&) noexcept override { aborted = true; }
    // like NCCL's buffers on a GPU: the engine's own memory, outside the ledger (issue 20 item 7)
    std::size_t device_overhead_bytes() const override { return std::size_t(123) << 20; }

    int queued = 0, synchronized = 0;
    bool aborted = false;

private:
    Backend& backend_;
};

std::string text_file() {
    const std::string dir = hrtest::temp_dir("rank-timeout");
    std::ofstream f(dir + "/t.txt");
    for (int i = 0; i < 2000; ++i) f << "the quick brown fox " << i << " jumps over the lazy dog\n";
    return dir + "/t.txt";
}

}  // namespace

class RankTimeoutTest : public QObject {
    Q_OBJECT

    std::shared_ptr<StalledPeer> last_;

    TrainResult run_as_rank0(TrainConfig c, double& seconds) {
        qputenv("OMPI_COMM_WORLD_SIZE", "2");
        qputenv("OMPI_COMM_WORLD_RANK", "0");
        qputenv("OMPI_COMM_WORLD_LOCAL_RANK", "0");
        qputenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
        set_run_communicator_factory([this](Backend& b, double timeout) {
            last_ = std::make_shared<StalledPeer>(b, timeout);
            return last_;
        });
        struct Restore {  // one process again, whatever happens
            ~Restore() {
                set_run_communicator_factory({});
                for (const char* v : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "OMPI_COMM_WORLD_LOCAL_SIZE"})
                    qunsetenv(v);
            }
        } restore;
        const auto t0 = std::chrono::steady_clock::now();
        TrainResult r = Trainer(std::move(c)).run();
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return r;
    }

    void expect_timeout(const TrainResult& r, double seconds, double timeout) {
        qInfo("status %s after %.2f s (%d collectives queued, %d waits): %s", r.status.c_str(), seconds,
              last_ ? last_->queued : -1, last_ ? last_->synchronized : -1, r.error.c_str());
        QCOMPARE(r.status, std::string("failed"));
        QVERIFY2(r.error.find("did not finish within 2 s") != std::string::npos, r.error.c_str());
        QVERIFY2(r.error.find("--rank-timeout") != std::string::npos, r.error.c_str());
        QVERIFY2(seconds >= timeout && seconds < timeout + 5, std::to_string(seconds).c_str());
        QVERIFY(last_ && last_->queued > 0);
    }

private slots:
    void imageRunEndsWithinTheTimeout() {
        TrainConfig c;
        c.model = preset_model("seed-cnn");
        c.data = "synthetic";
        c.device = "cpu";
        c.threads = 1;
        c.batch = 16;
        c.steps = 20;
        c.train_limit = 256;
        c.test_limit = 64;
        c.rank_timeout = 2;
        c.strategy.shard = "zero3";  // the forward's parameter gathers come before the first loss read
        double seconds = 0;
        const TrainResult r = run_as_rank0(c, seconds);
        expect_timeout(r, seconds, 2);
        QCOMPARE(r.steps, std::int64_t(0));
        // the engine's device memory reaches the result and run.json's distributed section
        QCOMPARE(r.rank_communication_overhead_bytes, std::vector<std::int64_t>{std::int64_t(123) << 20});
        const nlohmann::json d = run_distributed_summary(r, c.batch, {});
        QCOMPARE(d["communication_overhead_bytes"][0].get<std::int64_t>(), std::int64_t(123) << 20);
    }

    void textRunEndsWithinTheTimeout() {
        TrainConfig c;
        c.model = preset_model("gpt-tiny");
        c.data = "text:" + text_file();
        c.device = "cpu";
        c.threads = 1;
        c.batch = 4;
        c.seq = 32;
        c.steps = 20;
        c.rank_timeout = 2;
        c.strategy.shard = "dp";  // plain data parallel: the gradients' all-reduce before the optimizer's checks
        double seconds = 0;
        const TrainResult r = run_as_rank0(c, seconds);
        expect_timeout(r, seconds, 2);
        QVERIFY2(r.steps <= 1, std::to_string(r.steps).c_str());  // at its first read-back, not at the end
    }
};

QTEST_GUILESS_MAIN(RankTimeoutTest)
#include "test_rank_timeout.moc"
