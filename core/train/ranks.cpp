#include "train/ranks.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "base/error.h"
#include "dist/communicator.h"
#include "strategy/training_state.h"
#include "train/device.h"

namespace hr {

namespace {
// The process's communicator outlives the trainer that made it (MPI is initialised once per process), so
// that abort_ranks() can still end every rank after the app has recorded a failure.
std::shared_ptr<Communicator>& process_communicator() {
    static std::shared_ptr<Communicator> comm;
    return comm;
}
}  // namespace

std::string rank_device(const std::string& device, const RankEnvironment& env, int visible_gpus) {
    if (env.world_size <= 1) return device;
    // --device cuda:0,2: this rank's entry of the list (by local rank)
    if (device.rfind("cuda:", 0) == 0 && device.find(',') != std::string::npos) {
        std::vector<std::string> list;
        std::size_t start = 5;
        for (;;) {
            const std::size_t comma = device.find(',', start);
            list.push_back(device.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        if (static_cast<int>(list.size()) < env.local_size)
            throw InputError(HR_MSG("train.rank_devices_short",
                                    "--device %1 lists %2 GPU(s) but %3 ranks run on this machine; list one GPU per "
                                    "rank"),
                             {device, std::to_string(list.size()), std::to_string(env.local_size)});
        return "cuda:" + list[static_cast<std::size_t>(env.local_rank)];
    }
    if (device != "cuda" && device != "auto") return device;
    if (visible_gpus < 0) visible_gpus = cuda_device_count();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const int gpu = rank_gpu_index(env.local_rank, env.local_size, visible_gpus, visible && *visible);
    if (device == "cuda") return "cuda:" + std::to_string(gpu);
    // auto: this rank's GPU passes the self-test (no other GPU is touched); the CPU only when the machine
    // has no GPU at all. A GPU that fails is an error, not the CPU: ranks on the CPU next to ranks on GPUs
    // would take different engines (MPI and NCCL) and wait for each other forever.
    if (visible_gpus <= 0) return "cpu";
    const AutoDevice& a = auto_device(gpu);
    if (a.device.rfind("cuda", 0) != 0)
        throw InputError(HR_MSG("train.rank_gpu_failed",
                                "rank %1: %2; give every rank --device cpu, or --device cuda to skip the self-test"),
                         {std::to_string(env.rank), a.note.english()});
    return a.device;
}

std::shared_ptr<Communicator> run_communicator(Backend& be, double timeout_seconds) {
    std::shared_ptr<Communicator> comm = make_run_communicator(be, timeout_seconds);  // dist/communicator.h
    process_communicator() = comm;
    return comm;
}

int rank_threads(int threads, int world, const std::string& device, const RankEnvironment& env) {
    if (threads != 0 || world <= 1 || device.rfind("cuda", 0) == 0) return threads;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return std::max(1, static_cast<int>(cores > 0 ? cores : 1) / std::max(1, env.local_size));
}

void agree_on_control(Communicator& comm, const std::atomic<bool>& stop, const std::atomic<bool>& paused) {
    for (;;) {
        const double v = comm.all_reduce_value((stop ? 2.0 : 0.0) + (paused ? 1.0 : 0.0), ReduceOp::max);
        if (v >= 2) throw Cancelled();
        if (v < 1) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

std::pair<std::int64_t, std::int64_t> rank_share(std::int64_t rows, int rank, int world) {
    const std::int64_t lo = rows * rank / world;
    return {lo, rows * (rank + 1) / world - lo};
}

int world_size_of_run() {
    const RankEnvironment env = rank_environment();
    return env.launched ? env.world_size : 1;
}

void abort_ranks(const std::string& reason) noexcept {
    if (auto& comm = process_communicator(); comm && comm->world_size() > 1) comm->abort_all(reason);
}

void agree_on_figures(Communicator* comm, const TrainingState& st, std::initializer_list<double*> figures) {
    const ResolvedStrategy& s = st.strategy();
    if (!comm || (!st.pipelined() && s.data_world() <= 1)) return;
    const bool counts = s.counts_figures() && st.last_stage();  // (every rank is a last stage without stages)
    for (double* f : figures) *f = comm->all_reduce_value(counts ? *f : 0.0, ReduceOp::sum);
}

}  // namespace hr
