// headroom_gpu_bench: Headroom's side of `scripts/bench gpu` (bench/gpu.sh, docs/benchmarks.md).
// Trains a preset on random data on cuda:0 with the trainer's own device step (train/step_runner.h
// DeviceStepRunner: the step without host synchronisation, uploads, forward, loss, backward, optimizer;
// per-step figures through the ring), optionally with the full step captured as a CUDA graph and
// replayed, and prints one JSON object:
// ms/step from CUDA events on the compute stream, the ledger's peak and peak plus reserved, and the
// device's used memory. A developer tool: it links libcudart for the events (the program does not).
// The memory three ways (issue 43, item 6): the planner's prediction for this model, batch and device
// (predict_memory: its device total, i.e. the ledger's categories, and its reserve, the caching
// allocator's segments), the ledger's peak over the whole run, and the driver's peak: the largest
// (total - free) cudaMemGetInfo gives during the run, polled every millisecond from a second thread,
// minus what was in use before the run's first allocation (the context and the libraries' handles:
// in use after the backend was made, less what its allocator then held). Workspaces: cuBLAS's (the
// backend hands it one, cuda_sizes.h) and cuDNN's are allocations, so in all three; what the cuBLAS and
// cuDNN handles and lazily loaded kernels take is in the driver's figure only (the planner counts it
// as device_overhead, outside its total). No NCCL here (one process).
//
//   headroom_gpu_bench --preset seed-cnn --batch 64 [--optimizer sgd --lr 0.01 --momentum 0.9]
//                      [--precision fp32] [--steps 200] [--warmup 20] [--graphs] [--dump-spec FILE]
// Exit 2 with a message when there is no usable GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/step_figures.h"
#include "base/error.h"
#include "nn/model_spec.h"
#include "plan/planner.h"
#include "strategy/training_state.h"
#include "train/step_runner.h"

#include "bench_rows.h"

using namespace hr;

namespace {

[[noreturn]] void usage(const std::string& why) {
    std::cerr << "headroom_gpu_bench: " << why
              << "\nusage: headroom_gpu_bench --preset NAME --batch N [--optimizer sgd|adam|adamw] [--lr X] "
                 "[--momentum X] [--precision fp32|tf32|bf16|fp16] [--steps N] [--warmup N] [--graphs] "
                 "[--dump-spec FILE]\n";
    std::exit(2);
}

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

int main(int argc, char** argv) {
    std::string preset = "seed-cnn", precision = "fp32", dump;
    std::int64_t batch = 64;
    int steps = 200, warmup = 20;
    bool graphs = false;
    OptimizerConfig opt;
    opt.kind = "sgd";
    opt.lr = 0.01;
    opt.momentum = 0.9;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        if (a == "--preset") preset = value();
        else if (a == "--batch") batch = std::stoll(value());
        else if (a == "--optimizer") opt.kind = value();
        else if (a == "--lr") opt.lr = std::stod(value());
        else if (a == "--momentum") opt.momentum = std::stod(value());
        else if (a == "--precision") precision = value();
        else if (a == "--steps") steps = std::stoi(value());
        else if (a == "--warmup") warmup = std::stoi(value());
        else if (a == "--graphs") graphs = true;
        else if (a == "--dump-spec") dump = value();
        else usage("unknown argument " + a);
    }
    try {
        const ModelSpec spec = preset_model(preset);
        if (!dump.empty()) {
            std::ofstream(dump) << model_spec_to_json(spec).dump(2) << "\n";
            return 0;
        }
        const CudaStatus st = cuda_status();
        if (st.state != CudaStatus::State::available) {
            std::cerr << "headroom_gpu_bench: no usable GPU (" << cuda_state_name(st.state) << "): " << st.reason << "\n";
            return 2;
        }
        if (opt.kind != "sgd") opt.momentum = 0;
        auto ledger = std::make_shared<MemoryLedger>();
        CudaBackendOptions o;
        o.tf32 = precision == "tf32";
        std::size_t free_b = 0, total_b = 0;
        check(cudaFree(nullptr), "cudaFree");  // the primary context, shared with the module's runtime
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        const std::size_t used_context = total_b - free_b;
        auto be = make_cuda_backend(0, ledger, o);
        be->synchronize();
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        // before the run's first allocation: the context and the libraries' handles (the backend's own
        // workspace is already in its allocator's segments, so it is taken off)
        const std::size_t reserved0 = cuda_reserved_bytes(*be);
        const std::size_t used_backend = total_b - free_b;
        const std::size_t baseline = used_backend > reserved0 ? used_backend - reserved0 : used_backend;
        std::atomic<std::size_t> max_used{used_backend};
        std::atomic<bool> polling{true};
        std::atomic<long long> polls{0};
        std::thread poller([&] {
            while (polling.load()) {
                std::size_t f = 0, t = 0;
                if (cudaMemGetInfo(&f, &t) == cudaSuccess) {
                    std::size_t used = t - f, prev = max_used.load();
                    while (used > prev && !max_used.compare_exchange_weak(prev, used)) {
                    }
                    ++polls;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
        struct Join {
            std::atomic<bool>& flag;
            std::thread& t;
            ~Join() {
                flag = false;
                if (t.joinable()) t.join();
            }
        } join{polling, poller};
        auto host = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        StrategyConfig sc;
        sc.precision = precision;
        PlanRequest req;
        req.spec = spec;
        req.batch = batch;
        req.strategy = sc;
        req.optimizer = opt;
        req.device = "cuda:0";
        const MemoryPlan plan = predict_memory(req);
        TrainingState state(spec, opt, resolve_strategy(sc, spec, batch), 1, *be, be->allocator(), *host,
                            host->allocator());
        if (graphs && !state.graph_capturable()) usage("this model cannot be captured (dropout or offload)");
        // four random batches on the host, uploaded in turn every step (as a data loader would), through the
        // trainer's own device step (train/step_runner.h): the uploads, the step, a full step replayed as a
        // CUDA graph with --graphs (captured after the first step), the figures through the ring
        hrbench::RandomRows rows(state, *be, spec, 4, 1);
        DeviceStepRunner runner(state, *be, ledger.get(), graphs, 32);
        std::vector<StepFigures> figures;
        const DeviceStepRunner::Sink keep = [&](const DeviceStepFigures& d) { figures.push_back(d.figures); };
        auto step = [&](int k) {
            rows.set_batch(k);
            DeviceStepFigures issued;
            issued.step = issued.step_in_epoch = k + 1;
            issued.epoch = 1;
            issued.rows = batch;
            issued.lr = opt.lr;
            runner.issue(rows, k, issued, DeviceStepRunner::Clock::now(), keep);
            runner.collect(keep);
        };
        for (int k = 0; k < warmup; ++k) step(k);
        be->synchronize();
        const std::size_t warmup_peak_ledger = ledger->snapshot().peak_total;
        ledger->reset_peaks();
        auto s = static_cast<cudaStream_t>(cuda_compute_stream(*be));
        cudaEvent_t e0, e1;
        check(cudaEventCreate(&e0), "cudaEventCreate");
        check(cudaEventCreate(&e1), "cudaEventCreate");
        check(cudaEventRecord(e0, s), "cudaEventRecord");
        for (int k = 0; k < steps; ++k) step(warmup + k);
        check(cudaEventRecord(e1, s), "cudaEventRecord");
        check(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        runner.drain(keep);
        be->synchronize();
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        polling = false;
        poller.join();
        const std::size_t peak_used = std::max(max_used.load(), total_b - free_b);
        const LedgerSnapshot snap = ledger->snapshot();
        nlohmann::json j = {{"impl", "headroom"},
                            {"preset", preset},
                            {"batch", batch},
                            {"precision", precision},
                            {"optimizer", opt.kind},
                            {"graphs", graphs},
                            {"steps", steps},
                            {"ms_per_step", ms / steps},
                            {"peak_ledger_bytes", snap.peak_total},
                            {"peak_reserved_bytes", snap.peak_reserved},
                            {"device_used_bytes", total_b - free_b},
                            {"device_total_bytes", total_b},
                            {"device", be->name()},
                            // the memory three ways (see the top of this file)
                            {"peak_ledger_run_bytes", std::max(warmup_peak_ledger, snap.peak_total)},
                            {"planner_device_total_bytes", plan.device_total},
                            {"planner_device_reserved_bytes", plan.device_reserved},
                            {"planner_device_overhead_bytes", plan.device_overhead},
                            {"driver_context_bytes", used_context},
                            {"driver_baseline_bytes", baseline},
                            {"driver_peak_used_bytes", peak_used},
                            {"driver_peak_bytes", peak_used - baseline},
                            {"driver_polls", polls.load()},
                            {"loss_first", figures.empty() ? 0.0 : figures.front().loss},
                            {"loss_last", figures.empty() ? 0.0 : figures.back().loss}};
        std::cout << j.dump() << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "headroom_gpu_bench: " << e.what() << "\n";
        return 1;
    }
}
