// The planner's device description and GPU totals, on a machine without a GPU: what-if plans for GPUs
// that are not here (they work and say they use the table's defaults), the caching allocator's
// rounding counted exactly, the context/handle overhead and the 5 % fit margin, the rates behind the
// step-time estimate (nominal in tests, pinned on demand, measured and cached otherwise), and run.json's
// device_info.
#include <QtTest>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_sizes.h"
#include "base/error.h"
#include "plan/device_calibration.h"
#include "plan/device_description.h"
#include "plan/planner.h"
#include "strategy/pipeline.h"
#include "train/run_record.h"
#include "test_support.h"

using namespace hr;

namespace {
constexpr std::size_t MiB = std::size_t(1) << 20;

PlanRequest request(const std::string& device, const std::string& preset = "resnet-mini", std::int64_t batch = 64) {
    PlanRequest r;
    r.spec = preset_model(preset);
    r.batch = batch;
    r.device = device;
    r.train_samples = 60000;
    r.test_samples = 10000;
    return r;
}
}  // namespace

class DevicePlanTest : public QObject {
    Q_OBJECT

private slots:
    // The split --pipeline K proposes (pipeline_balanced_split) against every split there is: the largest
    // stage's cost is the least any split reaches, by time and by memory, for CNNs and GPTs at 2 to 4
    // stages. A head tied to the token embedding costs what an untied one does (it multiplies by the same
    // V x C weight, and its stage holds a copy of it): before, its 0 parameters made GPT-2's time split
    // ignore the head's 2 V C FLOPs a token, a third of the model's.
    void pipelineSplitsBalance() {
        for (const char* preset : {"mlp", "seed-cnn", "resnet-mini", "gpt-tiny", "gpt2-124m"})
            for (bool by_time : {true, false}) {
                const ModelSpec spec = preset_model(preset);
                const std::vector<double> cost = pipeline_layer_costs(spec, by_time);
                const int L = static_cast<int>(cost.size());
                for (int K = 2; K <= std::min(4, L); ++K) {
                    auto largest = [&](const std::vector<int>& first) {
                        double worst = 0;
                        for (int k = 0; k < K; ++k) {
                            double c = 0;
                            for (int i = first[static_cast<std::size_t>(k)]; i < first[static_cast<std::size_t>(k) + 1]; ++i)
                                c += cost[static_cast<std::size_t>(i)];
                            worst = std::max(worst, c);
                        }
                        return worst;
                    };
                    // every split: K - 1 cuts among the L - 1 places between layers
                    double best = std::numeric_limits<double>::infinity();
                    std::vector<int> cuts(static_cast<std::size_t>(K) - 1);
                    std::function<void(int, int)> walk = [&](int k, int from) {
                        if (k == K - 1) {
                            std::vector<int> first{0};
                            first.insert(first.end(), cuts.begin(), cuts.end());
                            first.push_back(L);
                            best = std::min(best, largest(first));
                            return;
                        }
                        for (int c = from; c <= L - (K - 1 - k); ++c) {
                            cuts[static_cast<std::size_t>(k)] = c;
                            walk(k + 1, c + 1);
                        }
                    };
                    walk(0, 1);
                    const PipelineSplit sp = pipeline_balanced_split(spec, K, by_time);
                    QCOMPARE(sp.stages(), K);
                    QVERIFY2(largest(sp.first) <= best * (1 + 1e-12),
                             qPrintable(QString("%1 K=%2 %3: %4 against %5").arg(preset).arg(K).arg(by_time ? "time" : "memory")
                                            .arg(largest(sp.first)).arg(best)));
                }
            }
        for (const char* preset : {"gpt-tiny", "gpt2-124m"}) {
            const ModelSpec tied = preset_model(preset);
            ModelSpec untied = tied;
            for (LayerSpec& l : untied.layers)
                if (l.type == "lm_head") l.attrs["tied"] = false;
            for (bool by_time : {true, false})
                QCOMPARE(pipeline_layer_costs(tied, by_time), pipeline_layer_costs(untied, by_time));
            // the head's forward and backward: 3 x 2 V C FLOPs a token
            const std::int64_t V = tied.layers.back().attrs["vocab_size"], C = tied.layers.back().attrs["dim"];
            const std::int64_t T = tied.input_shape[0];
            QCOMPARE(pipeline_layer_costs(tied, true).back(), 6.0 * static_cast<double>(V * C * T));
        }
        // GPT-2 small on 2 stages by time: the head's third of the work pulls the cut towards the front
        const PipelineSplit gpt2 = pipeline_balanced_split(preset_model("gpt2-124m"), 2, true);
        qInfo("gpt2-124m on 2 stages by time: %s", gpt2.text().c_str());
    }

    void initTestCase() { QCOMPARE(std::string(std::getenv("HEADROOM_RATES") ? std::getenv("HEADROOM_RATES") : ""), std::string("nominal")); }

    void gpuModelsFromTheTable() {
        const DeviceDescription h = describe_device("h100");
        QVERIFY(h.gpu());
        QVERIFY(h.defaults);
        QVERIFY(!h.present);
        QCOMPARE(h.cc_major, 9);
        QCOMPARE(h.cublas_workspace_bytes, std::size_t(32) << 20);  // Hopper: 32 MiB
        QCOMPARE(h.backend_scratch_bytes, cuda_sizes::kOpScratchBytes);
        QVERIFY(h.capacity_bytes > std::size_t(78) << 30 && h.capacity_bytes < std::size_t(81) << 30);
        QVERIFY(h.context_bytes > 0 && h.handles_bytes > 0);
        QVERIFY2(h.source.english().find("defaults") != std::string::npos, h.source.english().c_str());
        QVERIFY(h.source.translatable());
        QVERIFY2(h.rates.source.find("table") != std::string::npos, h.rates.source.c_str());
        const DeviceDescription a = describe_device("a100");
        QCOMPARE(a.cc_major, 8);
        QCOMPARE(a.cublas_workspace_bytes, std::size_t(4) << 20);  // Ampere: 4 MiB
        QVERIFY(describe_device("h200").capacity_bytes > h.capacity_bytes);
        for (const auto& n : gpu_model_names()) QVERIFY(describe_device(n).defaults);
        try {
            describe_device("tpu-v5");
            QFAIL("expected InputError");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("h100") != std::string::npos, e.what());
        }
    }

    void absentCudaDevicePlansWithDefaults() {
        if (cuda_device_count() > 0) QSKIP("cuda:0 is present here (tests/cuda check it)");
        const DeviceDescription d = describe_device("cuda:0");
        QVERIFY(d.defaults);
        QVERIFY(!d.present);
        QVERIFY2(d.source.english().find("defaults of an NVIDIA H100") != std::string::npos, d.source.english().c_str());
        const MemoryPlan p = predict_memory(request("cuda:0"));
        QVERIFY(p.device_defaults);
        QVERIFY2(p.device_note.english().find("defaults") != std::string::npos, p.device_note.english().c_str());
        QCOMPARE(device_total_bytes("cuda:0"), d.capacity_bytes);
        QCOMPARE(device_free_bytes("cuda:0"), d.capacity_bytes);
    }

    void gpuTotalsAddRoundingAndOverhead() {
        const DeviceDescription d = describe_device("h100");
        const MemoryPlan p = predict_memory(request("h100"));
        // the backend's own buffers are in the ledger's workspace
        QVERIFY(at(p.device, MemCategory::workspace) >= d.cublas_workspace_bytes + d.backend_scratch_bytes);
        QVERIFY(p.device_reserved > p.device_total);  // segments hold more than is asked for
        QCOMPARE(p.device_overhead, d.context_bytes + d.handles_bytes);
        QCOMPARE(p.process_total, p.device_reserved + p.device_overhead);
        QCOMPARE(plan_fit_bytes(p), std::size_t(std::ceil(double(p.process_total) * 1.05)));
        // the CPU: what the ledger counts is what the process holds
        const MemoryPlan c = predict_memory(request("cpu"));
        QCOMPARE(c.device_reserved, c.device_total);
        QCOMPARE(c.device_overhead, std::size_t(0));
        QCOMPARE(plan_fit_bytes(c), c.device_total);
        // the same model on the CPU and a GPU: the same parameters, gradients and activations
        QCOMPARE(at(p.device, MemCategory::parameters), at(c.device, MemCategory::parameters));
        QCOMPARE(at(p.device, MemCategory::activations), at(c.device, MemCategory::activations));
        const nlohmann::json j = plan_to_json(p);
        QCOMPARE(j["step_time_estimated"].get<bool>(), true);
        QCOMPARE(j["process_total"].get<std::size_t>(), p.process_total);
        QCOMPARE(j["device_defaults"].get<bool>(), true);
    }

    void ncclMemoryIsCountedOutsideTheLedger() {
        // issue 20 item 7: GPU ranks add NCCL's own device memory to the process overhead; an estimate
        // from NCCL's default buffers until a run has measured it, then the measured figure
        const std::string dir = QDir::tempPath().toStdString() + "/headroom-nccl-cache-" + std::to_string(::getpid());
        std::filesystem::remove_all(dir);
        qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(dir));
        const DeviceDescription d = describe_device("h100");
        PlanRequest r = request("h100");
        r.world_size = 2;
        r.strategy.shard = "dp";
        const MemoryPlan one = predict_memory(request("h100"));
        QCOMPARE(one.communication_overhead, std::size_t(0));
        const MemoryPlan est = predict_memory(r);
        // 16 channels x 2 connections x (4 MiB + 4,915,200 B + 524,288 B) + 64 MiB, worked by hand
        const std::size_t expected = std::size_t(16 * 2 * (4194304.0 + 4915200.0 + 524288.0) + 64 * 1048576.0);
        QCOMPARE(est.communication_overhead, expected);
        QVERIFY(!est.communication_overhead_measured);
        QCOMPARE(est.device_overhead, d.context_bytes + d.handles_bytes + expected);
        QCOMPARE(est.process_total, est.device_reserved + est.device_overhead);
        QVERIFY(est.communication_overhead_source.find("estimate") != std::string::npos);
        // a run of 2 ranks measured 300 MiB: plans of 2 ranks use it, plans of 4 still estimate
        record_communication_overhead(d.name, 2, 300 * MiB, "nccl 2.21.5");
        const MemoryPlan measured = predict_memory(r);
        QCOMPARE(measured.communication_overhead, 300 * MiB);
        QVERIFY(measured.communication_overhead_measured);
        QVERIFY2(measured.communication_overhead_source.find("nccl 2.21.5") != std::string::npos,
                 measured.communication_overhead_source.c_str());
        QCOMPARE(plan_to_json(measured)["communication_overhead"].get<std::size_t>(), 300 * MiB);
        r.world_size = 4;
        QVERIFY(!predict_memory(r).communication_overhead_measured);
        // CPU ranks: MPI's buffers are host memory, nothing outside the ledger on a device
        PlanRequest c = request("cpu");
        c.world_size = 2;
        c.strategy.shard = "dp";
        QCOMPARE(predict_memory(c).communication_overhead, std::size_t(0));
        qunsetenv("XDG_CACHE_HOME");
        std::filesystem::remove_all(dir);
    }

    void allocatorRoundingFollowsThePolicy() {
        // caching_allocator.h: requests <= 1 MiB share 2 MiB segments, <= 10 MiB get 20 MiB segments,
        // larger ones a segment of their size rounded up to 2 MiB
        auto ledger = std::make_shared<MemoryLedger>();
        auto alloc = make_planning_allocator(describe_device("a100"), ledger);
        std::vector<Tensor> keep;
        for (std::int64_t bytes : {std::int64_t(1000), std::int64_t(3000), std::int64_t(5 * MiB), std::int64_t(30 * MiB + 1)})
            keep.push_back(Tensor::empty(*alloc, {bytes}, DType::u8, MemCategory::activations));
        const LedgerSnapshot s = ledger->snapshot();
        QCOMPARE(s.live_total, std::size_t(1000 + 3000 + 5 * MiB + 30 * MiB + 1));
        QCOMPARE(s.live_total + s.reserved_free, 2 * MiB + 20 * MiB + 32 * MiB);
        // the CPU: counted, nothing reserved
        auto cl = std::make_shared<MemoryLedger>();
        auto ca = make_planning_allocator(describe_device("cpu"), cl);
        Tensor t = Tensor::empty(*ca, {1000}, DType::u8, MemCategory::activations);
        QCOMPARE(cl->snapshot().reserved_free, std::size_t(0));
    }

    void fitToAGpuKeepsTheMargin() {
        PlanRequest r = request("h100");
        const MemoryPlan base = predict_memory(r);
        // a budget just below the plan's fit bytes: it does not fit, although device_total would
        const std::size_t budget = plan_fit_bytes(base) - 1;
        QVERIFY(base.device_total < budget);
        const PlanSearch s = search_plans(r, budget);
        for (const auto& c : s.candidates)
            if (c.strategy.precision == "fp32" && c.strategy.checkpoint == "none" && c.strategy.micro_batch == 0 &&
                !c.strategy.offload_optimizer)
                QVERIFY(!c.fits);
        for (const auto& c : s.candidates) QCOMPARE(c.fits, plan_fit_bytes(c.plan) <= budget);
    }

    void ratesAreNominalInTestsAndCanBePinned() {
        const MemoryPlan p = predict_memory(request("cpu", "seed-cnn"));
        QVERIFY2(p.rates_source.find("nominal") != std::string::npos, p.rates_source.c_str());
        DeviceRates fast = nominal_rates("cpu");
        fast.flops *= 4;
        fast.per_layer_seconds = 0;
        fast.source = "pinned by the test";
        PlanRequest r = request("cpu", "seed-cnn");
        r.rates = fast;
        const MemoryPlan q = predict_memory(r);
        QCOMPARE(q.rates_source, std::string("pinned by the test"));
        DeviceRates slow_overhead = fast;
        slow_overhead.flops = nominal_rates("cpu").flops;
        r.rates = slow_overhead;
        const double compute_only = predict_memory(r).predicted_step_seconds;
        QVERIFY(std::abs(q.predicted_step_seconds * 4 - compute_only) <= 1e-12 * compute_only);
        pin_device_rates(fast);
        clear_device_descriptions();
        QCOMPARE(predict_memory(request("cpu", "seed-cnn")).rates_source, std::string("pinned by the test"));
        pin_device_rates(std::nullopt);
        clear_device_descriptions();
    }

    void ratesAreMeasuredOnceAndCached() {
        const std::string dir = hrtest::temp_dir("hr-cache");
        qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(dir));
        qunsetenv("HEADROOM_RATES");
        clear_device_descriptions();
        QCOMPARE(headroom_cache_dir(), dir + "/headroom");
        // a cached entry is used as it is
        const DeviceDescription probe = [] {
            qputenv("HEADROOM_RATES", "nominal");
            DeviceDescription d = describe_device("cpu", 1);
            qunsetenv("HEADROOM_RATES");
            clear_device_descriptions();
            return d;
        }();
        const std::string key = probe.name + " | 1 threads";
        nlohmann::json cached = {{key, {{"flops", 1.5e9}, {"lowp_factor", 2.0}, {"host_link", 3e9},
                                        {"per_layer_seconds", 1e-4}, {"measured", "2026-01-02"}}}};
        write_cache_file("device-rates.json", cached.dump());
        DeviceDescription d = describe_device("cpu", 1);
        QCOMPARE(d.rates.flops, 1.5e9);
        QVERIFY2(d.rates.source.find("measured on 2026-01-02") != std::string::npos, d.rates.source.c_str());
        // without an entry the micro-benchmark runs once and its figures are kept
        std::filesystem::remove(dir + "/headroom/device-rates.json");
        clear_device_descriptions();
        d = describe_device("cpu", 1);
        qInfo("measured: %.3g FLOP/s, bf16 x%.2f, %.3g B/s, %.3g s/layer (%s)", d.rates.flops, d.rates.lowp_factor,
              d.rates.host_link, d.rates.per_layer_seconds, d.rates.source.c_str());
        QVERIFY(d.rates.flops > 1e8 && d.rates.flops < 1e13);
        QVERIFY(d.rates.host_link > 1e7);
        QVERIFY(d.rates.per_layer_seconds > 0);
        const nlohmann::json file = nlohmann::json::parse(read_cache_file("device-rates.json"));
        QVERIFY(file.contains(key));
        QCOMPARE(file[key]["flops"].get<double>(), d.rates.flops);
        qputenv("HEADROOM_RATES", "nominal");
        qunsetenv("XDG_CACHE_HOME");
        clear_device_descriptions();
    }

    void runRecordCarriesTheDescription() {
        TrainConfig c;
        c.device = "cpu";
        c.model = preset_model("seed-cnn");
        TrainResult r;
        r.device_name = "cpu";
        const nlohmann::json j = make_run_record(c, r);
        QVERIFY(j.contains("device_info"));
        QCOMPARE(j["device_info"]["kind"].get<std::string>(), std::string("cpu"));
        QVERIFY(j["device_info"]["capacity_bytes"].get<std::size_t>() > 0);
        QVERIFY(j["device_info"]["rates"]["source"].get<std::string>().find("nominal") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(DevicePlanTest)
#include "test_device_plan.moc"
