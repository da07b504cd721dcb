// ranks: none
// The multi-rank settings of a run (issue 10): strategy.shard, strategy.rank_batch and rank_timeout
// survive run.json's round trip, a wrong JSON type or a value out of range is refused naming the field
// and the flag, and rank_device gives each local rank its GPU the way mpirun's ranks expect (cuda ->
// cuda:LOCAL_RANK, a list -> its entry). The reference is the written spelling of each rule.
#include <QtTest/QtTest>

#include "backend/cuda/cuda_backend.h"
#include "base/error.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "dist/communicator.h"
#include "memory/ledger.h"
#include "train/config.h"
#include "train/device.h"
#include "train/trainer.h"

using namespace hr;
using json = nlohmann::json;

class RankConfigTest : public QObject {
    Q_OBJECT

    static std::string refusal(const TrainConfig& c) {
        try {
            validate_train_config(c);
        } catch (const InputError& e) {
            return e.message().id + ": " + e.what();
        }
        return "";
    }

private slots:
    void roundTripsThroughRunJson() {
        TrainConfig c;
        c.batch = 128;
        c.strategy.shard = "zero3";
        c.strategy.rank_batch = {96, 32};
        c.rank_timeout = 42.5;
        const json j = json::parse(train_config_to_json(c).dump());
        QCOMPARE(j["strategy"]["shard"].get<std::string>(), std::string("zero3"));
        QVERIFY(j["strategy"]["rank_batch"] == json({96, 32}));
        const TrainConfig back = train_config_from_json(j);
        QCOMPARE(back.strategy.shard, std::string("zero3"));
        QCOMPARE(back.strategy.rank_batch, (std::vector<std::int64_t>{96, 32}));
        QCOMPARE(back.rank_timeout, 42.5);
        validate_train_config(back);
        // a record without the fields (an older run.json): one process, the default timeout
        json old = j;
        old["strategy"].erase("shard");
        old["strategy"].erase("rank_batch");
        old.erase("rank_timeout");
        const TrainConfig o = train_config_from_json(old);
        QCOMPARE(o.strategy.shard, std::string("none"));
        QVERIFY(o.strategy.rank_batch.empty());
        QCOMPARE(o.rank_timeout, 300.0);
    }

    void wrongTypesNameTheField() {
        json j = train_config_to_json(TrainConfig{});
        j["strategy"]["rank_batch"] = "96,32";
        try {
            train_config_from_json(j);
            QFAIL("a string rank_batch was accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("strategy.rank_batch") != std::string::npos, e.what());
        }
        j["strategy"]["rank_batch"] = json({96, "x"});
        try {
            train_config_from_json(j);
            QFAIL("a non-integer entry was accepted");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("strategy.rank_batch") != std::string::npos, e.what());
        }
        j = train_config_to_json(TrainConfig{});
        j["rank_timeout"] = "soon";
        QVERIFY_THROWS_EXCEPTION(InputError, train_config_from_json(j));
    }

    void rangesAreChecked() {
        TrainConfig c;
        c.batch = 64;
        c.strategy.shard = "zero4";
        QVERIFY2(refusal(c).rfind("config.shard:", 0) == 0, refusal(c).c_str());
        QVERIFY(refusal(c).find("--shard") != std::string::npos);
        c.strategy.shard = "dp";
        c.strategy.rank_batch = {0, 64};
        QVERIFY2(refusal(c).find("--rank-batch") != std::string::npos, refusal(c).c_str());
        c.strategy.rank_batch = {65, 1};
        QVERIFY2(refusal(c).find("--rank-batch") != std::string::npos, refusal(c).c_str());
        c.strategy.rank_batch = {32, 32};
        QCOMPARE(refusal(c), std::string());
        c.rank_timeout = 0.5;
        QVERIFY2(refusal(c).find("--rank-timeout") != std::string::npos, refusal(c).c_str());
        c.rank_timeout = 300;
        c.device = "cuda:0,2";
        QCOMPARE(refusal(c), std::string());
        c.device = "cuda:0,,2";
        QVERIFY2(refusal(c).rfind("config.device:", 0) == 0, refusal(c).c_str());
    }

    // A rank's loader (rows [first, first + count) of each batch) hands out exactly those rows of the
    // full loader's batches, in the same shuffled order, and its buffers hold only its share.
    void aRanksLoaderHandsOutItsRowsOfEveryBatch() {
        const Dataset d = make_synthetic("synthetic/train", 200, 7);
        DataLoader full(d, 64, true, 5, true, 0.5f, 0.25f);
        MemoryLedger ledger;
        DataLoader part(d, 64, true, 5, true, 0.5f, 0.25f, &ledger, 3, 40, 24);
        QCOMPARE(part.steps_per_epoch(), std::int64_t(3));  // 200 / 64, the last incomplete batch dropped
        QCOMPARE(part.prefetch_bytes(), std::size_t(3 * 24 * (d.sample_numel() * 4 + 8)));
        QCOMPARE(ledger.live_total(), part.prefetch_bytes());
        for (int epoch = 0; epoch < 2; ++epoch) {
            full.start_epoch(epoch);
            part.start_epoch(epoch);
            Batch a, b;
            int batches = 0;
            while (full.next(a)) {
                QVERIFY(part.next(b));
                QCOMPARE(b.size, std::int64_t(24));
                const std::int64_t per = d.sample_numel();
                for (std::int64_t i = 0; i < 24; ++i) {
                    QCOMPARE(b.labels[static_cast<std::size_t>(i)], a.labels[static_cast<std::size_t>(40 + i)]);
                    QVERIFY(std::equal(b.images.begin() + i * per, b.images.begin() + (i + 1) * per,
                                       a.images.begin() + (40 + i) * per));
                }
                ++batches;
            }
            QVERIFY(!part.next(b));
            QCOMPARE(batches, 3);
        }
        QVERIFY_THROWS_EXCEPTION(Error, DataLoader(d, 64, true, 5, false, 0.5f, 0.25f, nullptr, 3, 40, 24));  // needs drop_last
        QVERIFY_THROWS_EXCEPTION(Error, DataLoader(d, 64, true, 5, true, 0.5f, 0.25f, nullptr, 3, 50, 24));   // past the batch
    }

    void eachLocalRankGetsItsGpu() {
        RankEnvironment env;
        env.world_size = 4;
        env.local_size = 2;
        env.launched = true;
        env.rank = 3;
        env.local_rank = 1;
        QCOMPARE(rank_device("cuda", env), std::string("cuda:1"));
        QCOMPARE(rank_device("cuda:0,2", env), std::string("cuda:2"));
        QCOMPARE(rank_device("cpu", env), std::string("cpu"));
        env.local_size = 3;
        QVERIFY_THROWS_EXCEPTION(InputError, rank_device("cuda:0,2", env));
        RankEnvironment one;  // one process: the flag as it is
        QCOMPARE(rank_device("cuda:0,2", one), std::string("cuda:0,2"));
    }

    void ranksFindTheirGpuAmongTheVisibleOnes() {
        RankEnvironment env;
        env.world_size = 2;
        env.local_size = 2;
        env.launched = true;
        env.rank = 1;
        env.local_rank = 1;
        qunsetenv("CUDA_VISIBLE_DEVICES");
        QCOMPARE(rank_device("cuda", env, 4), std::string("cuda:1"));
        QCOMPARE(rank_device("auto", env, 0), std::string("cpu"));  // no GPU: nothing is self-tested
        if (cuda_device_count() == 0) {
            // GPUs said to be there but this rank's cannot be used: an error, not a CPU rank among GPU ranks
            try {
                rank_device("auto", env, 4);
                QFAIL("a rank whose GPU cannot be used went on with --device auto");
            } catch (const InputError& e) {
                const std::string m = e.what();
                QVERIFY2(m.rfind("rank 1: device auto: ", 0) == 0, m.c_str());
                QVERIFY2(m.find("--device cpu") != std::string::npos, m.c_str());
            }
        }
        // two ranks, one GPU that both see: NCCL would refuse them, so say so before
        QVERIFY_THROWS_EXCEPTION(InputError, rank_device("cuda", env, 1));
        // the launcher gave each rank its own GPU: the one it sees is cuda:0
        qputenv("CUDA_VISIBLE_DEVICES", "1");
        QCOMPARE(rank_device("cuda", env, 1), std::string("cuda:0"));
        qunsetenv("CUDA_VISIBLE_DEVICES");
        QCOMPARE(rank_gpu_index(3, 4, 8, false), 3);
        QCOMPARE(rank_gpu_index(0, 1, 1, false), 0);
        try {
            rank_gpu_index(2, 3, 2, false);
            QFAIL("3 ranks on 2 GPUs were accepted");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(m.find("3 ranks run on this machine but it has 2 GPUs") != std::string::npos, m.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(RankConfigTest)
#include "test_rank_config.moc"
