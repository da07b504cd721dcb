// headroom_dist_bench: the measurements behind scripts/bench dist (bench/dist.sh). Not a test: it asserts
// nothing. Each rank prints nothing; rank 0 prints one JSON object on stdout.
//
//   [mpirun -np N] headroom_dist_bench train --preset NAME --stage dp|zero1|zero2|zero3|tp-head|pipeline|none
//                  [--micro M]   (pipeline: M micro-batches a step, default 8)
//                  [--batch 64] [--steps 20] [--warmup 3] [--threads 1] [--precision fp32]
//                  [--vocab V] [--seq T]   (a language model: random token windows, its head untied)
//       Trains on synthetic data with the trainer's step runner (train/step_runner.h) on CPU ranks (Open
//       MPI under mpirun; a world of one without it) and reports steps/s, samples/s, each rank's peak memory by category (the
//       ledger), the host time blocked on communication and the payload per step.
//   headroom_dist_bench plan --preset NAME [--batch 64] [--precision fp32] [--optimizer adam]
//                  [--ranks 1,2,8]
//       The planner's per-rank prediction for every stage (docs/distributed.md's tables).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "dist/communicator.h"
#include "nn/transformer_spec.h"
#include "plan/planner.h"
#include "strategy/training_state.h"
#include "train/step_runner.h"

#include "bench_rows.h"

using namespace hr;
using json = nlohmann::json;

namespace {

std::map<std::string, std::string> parse(int argc, char** argv, int first) {
    std::map<std::string, std::string> a;
    for (int i = first; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) != 0) throw InputError("expected --flag value, got " + k);
        a[k.substr(2)] = argv[i + 1];
    }
    return a;
}

std::string get(const std::map<std::string, std::string>& a, const std::string& k, const std::string& d) {
    auto it = a.find(k);
    return it == a.end() ? d : it->second;
}

json categories(const CategoryBytes& b) {
    json j = json::object();
    for (MemCategory c : all_categories())
        if (at(b, c)) j[category_name(c)] = at(b, c);
    return j;
}

int train(const std::map<std::string, std::string>& a) {
    ModelSpec spec = preset_model(get(a, "preset", "seed-cnn"));
    const bool lm = is_token_model(spec);
    if (lm) {  // a language model with a head of its own (a split head needs one) on random windows
        apply_sequence_length(spec, std::stoll(get(a, "seq", "64")));
        resize_vocabulary(spec, std::stoll(get(a, "vocab", "8192")));
        spec.layers.back().attrs["tied"] = false;
    }
    const std::int64_t B = std::stoll(get(a, "batch", "64"));
    const int steps = std::stoi(get(a, "steps", "20")), warmup = std::stoi(get(a, "warmup", "3"));
    const int threads = std::stoi(get(a, "threads", "1"));
    StrategyConfig sc;
    const std::string stage = get(a, "stage", "none");
    // tp-head: the last layer split over the ranks; pipeline: the layers in stages (with --micro micro-batches)
    // zero3-offload: zero3 with the parameters (and gradients, optimizer) in host memory (--offload-params)
    sc.shard = stage == "tp-head" || stage == "pipeline" ? "none" : stage == "zero3-offload" ? "zero3" : stage;
    sc.offload_parameters = stage == "zero3-offload";
    if (stage == "pipeline") sc.accumulate = std::stoll(get(a, "micro", "8"));
    sc.precision = get(a, "precision", "fp32");
    OptimizerConfig o;
    o.kind = get(a, "optimizer", "adam");
    o.lr = 1e-3;
    std::unique_ptr<Communicator> comm;
    if (rank_environment().launched) comm = make_mpi_communicator(120.0);
    const int N = comm ? comm->world_size() : 1, rank = comm ? comm->rank() : 0;
    if (stage == "tp-head") sc.tp_head = N;
    if (stage == "pipeline") sc.pipeline = N;
    auto ledger = std::make_shared<MemoryLedger>(), host_ledger = std::make_shared<MemoryLedger>();
    auto be = make_cpu_backend(threads, ledger), host = make_cpu_backend(threads, host_ledger);
    const ResolvedStrategy rs = resolve_strategy(sc, spec, B, N, rank);
    TrainingState st(spec, o, rs, 1, *be, be->allocator(), *host, host->allocator(), false, comm.get());
    Communicator* c = st.communicator();
    // a few global batches, made before timing; the trainer's own step runner takes them (train/step_runner.h:
    // the pipeline's 1F1B schedule, or micro-batches with the loss read back and agreed over the ranks)
    hrbench::RandomRows rows(st, *be, spec);
    const std::unique_ptr<HostStepRunner> runner = make_host_step_runner(st, comm.get(), ledger.get());
    auto step = [&](int s) {
        rows.set_batch(s);
        runner->step(rows, s, o.lr);
    };
    for (int s = 0; s < warmup; ++s) step(s);
    if (comm) comm->barrier();
    ledger->reset_peaks();
    host_ledger->reset_peaks();
    const CommStats before = c ? c->stats() : CommStats{};
    const double offload_before = st.offload_bytes();
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) step(warmup + s);
    if (comm) comm->barrier();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const CommStats after = c ? c->stats() : CommStats{};
    const LedgerSnapshot snap = ledger->snapshot(), host_snap = host_ledger->snapshot();
    const double offloaded = (st.offload_bytes() - offload_before) / steps;
    // the slowest rank sets the pace; memory and waiting per rank
    const double slowest = comm ? comm->all_reduce_value(seconds, ReduceOp::max) : seconds;
    const double waited = after.wait_seconds - before.wait_seconds;
    std::vector<double> peaks(static_cast<std::size_t>(N), 0.0), waits(static_cast<std::size_t>(N), 0.0),
        host_peaks(static_cast<std::size_t>(N), 0.0);
    for (int r = 0; r < N; ++r) {
        peaks[static_cast<std::size_t>(r)] =
            comm ? comm->all_reduce_value(r == rank ? static_cast<double>(snap.peak_total) : 0.0, ReduceOp::sum)
                 : static_cast<double>(snap.peak_total);
        host_peaks[static_cast<std::size_t>(r)] =
            comm ? comm->all_reduce_value(r == rank ? static_cast<double>(host_snap.peak_total) : 0.0, ReduceOp::sum)
                 : static_cast<double>(host_snap.peak_total);
        waits[static_cast<std::size_t>(r)] = comm ? comm->all_reduce_value(r == rank ? waited : 0.0, ReduceOp::sum) : waited;
    }
    if (rank == 0) {
        json j;
        j["model"] = spec.name;
        j["stage"] = stage;
        j["precision"] = sc.precision;
        j["ranks"] = N;
        j["threads_per_rank"] = threads;
        j["batch"] = B;
        j["steps"] = steps;
        j["seconds"] = slowest;
        j["steps_per_second"] = steps / slowest;
        j["samples_per_second"] = static_cast<double>(steps * B) / slowest;
        j["peak_bytes_per_rank"] = peaks;
        j["host_peak_bytes_per_rank"] = host_peaks;   // the host ledger: offloaded state
        j["offload_bytes_per_step"] = offloaded;      // parameter offload: host<->device, rank 0
        j["rank0_peak_by_category"] = categories(snap.at_peak);
        j["comm_wait_share_per_rank"] = json::array();
        for (double w : waits) j["comm_wait_share_per_rank"].push_back(w / slowest);
        j["comm_payload_bytes_per_step"] = (after.bytes - before.bytes) / steps;
        j["collectives_per_step"] = static_cast<double>(after.collectives - before.collectives) / steps;
        std::printf("%s\n", j.dump().c_str());
    }
    return 0;
}

int plan(const std::map<std::string, std::string>& a) {
    std::vector<int> ranks;
    std::stringstream ss(get(a, "ranks", "1,2,8"));
    for (std::string t; std::getline(ss, t, ',');) ranks.push_back(std::stoi(t));
    json out = json::array();
    for (int n : ranks)
        for (const char* stage : {"dp", "zero1", "zero2", "zero3"}) {
            PlanRequest r;
            r.spec = preset_model(get(a, "preset", "resnet-mini"));
            r.batch = std::stoll(get(a, "batch", "64"));
            r.strategy.precision = get(a, "precision", "fp32");
            r.strategy.shard = stage;
            r.optimizer.kind = get(a, "optimizer", "adam");
            r.threads = 1;
            r.world_size = n;
            const MemoryPlan p = predict_memory(r);
            out.push_back({{"ranks", n},
                           {"stage", stage},
                           {"device", categories(p.device)},
                           {"device_total", p.device_total},
                           {"flat_elements", p.flat_elements},
                           {"shard_elements", p.shard_elements},
                           {"padding_elements", p.padding_elements},
                           {"values", validate_model_spec(r.spec).total_params},
                           {"communication_bytes_per_step", p.communication_bytes}});
        }
    std::printf("%s\n", out.dump().c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        const auto a = parse(argc, argv, 2);
        if (mode == "train") return train(a);
        if (mode == "plan") return plan(a);
        std::fprintf(stderr, "usage: headroom_dist_bench train|plan --preset NAME ... (see bench/dist_bench.cpp)\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "headroom_dist_bench: %s\n", e.what());
        return 1;
    }
}
