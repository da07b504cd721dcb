#pragma once
// Devices: the backend for --device auto | cpu | cuda:N, the self-test that lets `auto` pick the GPU,
// and what `headroom devices` shows.
//
// auto: the GPU (cuda:0; a rank's own GPU, rank_gpu_index) when CUDA is available (cuda_status(): the module, its libraries, a driver
// and a device are there) and a backend there passes a quick self-test against the CPU backend (a
// GEMM, a convolution forward and backward, a sum of squares, a cross-entropy, within tolerance);
// otherwise the CPU. The choice is made once per process and comes with a one-line note saying which
// device and why (app/ prints it first).
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cuda/cuda_backend.h"
#include "base/message.h"
#include "plan/device_description.h"

namespace hr {

// `note` receives a line for the user when a choice was made for them (auto_device().note), translatable.
// InputError for a device that does not exist or cannot be used, naming what to do instead.
std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::shared_ptr<MemoryLedger> ledger,
                                      bool tf32, Message* note);
// "cpu" or "cuda:N" that `device` resolves to (auto: auto_device().device).
std::string resolve_device(const std::string& device);

struct SelfTestResult {
    bool ok = false;
    std::string detail;  // what was compared, or the first op that disagreed (or threw) and by how much
};
// Runs the self-test ops on `candidate` and on `reference` (the CPU backend) and compares them
// (relative to each result's largest magnitude: 1e-4 for f32). Never throws: an op that throws fails.
SelfTestResult backend_self_test(Backend& candidate, Backend& reference);

struct AutoDevice {
    std::string device;   // "cuda:0" or "cpu"
    Message note;         // "device auto: cuda:0 (NVIDIA H200) passed the self-test ...; training on the GPU"
    SelfTestResult self_test;  // when a GPU was tested
};
// The choice --device auto makes for cuda:`gpu` (a rank tests its own GPU only; once per GPU and
// process, later calls return the same).
const AutoDevice& auto_device(int gpu = 0);
// The GPU of a rank among the `visible_gpus` this process sees: its local rank, or 0 when the launcher
// made one GPU visible to it (`visibility_set`: CUDA_VISIBLE_DEVICES is set). InputError when more ranks
// run on this machine than it has GPUs (NCCL refuses two ranks on one GPU).
int rank_gpu_index(int local_rank, int local_size, int visible_gpus, bool visibility_set);

// `headroom devices`: the CPU, why CUDA is (not) available, and each GPU's description.
struct DeviceReport {
    DeviceDescription cpu;
    CudaStatus cuda;             // state, reason, module path, places searched
    std::string cuda_versions;   // cuda_versions()
    std::string cuda_archs;      // cuda_built_archs(): whether each GPU has code in this build
    struct Gpu {
        CudaDeviceInfo info;             // free memory now
        DeviceDescription description;   // capacity, cc, overheads, workspaces, rates
    };
    std::vector<Gpu> gpus;
    Message cuda_line;           // "cuda     not available: <why>" / "cuda     module <path>"
};
DeviceReport device_report();
// The report as the text `headroom devices` prints (English; app/ may translate the parts instead).
std::string device_report_text(const DeviceReport& r);

}  // namespace hr
