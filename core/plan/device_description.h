#pragma once
// DeviceDescription: what the planner knows about a device, made once per device and process and
// cached (issue 9: predict_memory used to create a whole CUDA backend on every call).
//
// For the CPU: its memory and the calibrated step-time rates. For a GPU: capacity, compute
// capability, what a CUDA backend itself holds (the cuBLAS workspace for that compute capability and
// the op scratch: backend/cuda/cuda_sizes.h), the process overhead outside the ledger (the CUDA
// context and the cuBLAS/cuDNN handles with their lazily loaded kernels), and the cuDNN workspace of
// each convolution shape. On a GPU that is present the overhead is measured once (and kept in the
// user's cache folder, device_cache.h) and the workspaces come from cuDNN's own choice (one sizing
// backend per device and process, each shape asked once). A GPU that is not present -- "cuda:0" on a
// machine without one, or a model name: h100, h200, a100, a100-40gb, rtx4090, l40s, l4 -- is
// described from a documented table (docs/devices.md) and says so: `defaults` is true and `source`
// tells the person.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.h"
#include "base/message.h"
#include "memory/allocator.h"

namespace hr {

// Sustained rates behind the planner's step-time estimate (plan/device_calibration.h).
struct DeviceRates {
    double flops = 0;               // FLOP/s of f32 training work (multiply-adds count 2)
    double lowp_factor = 1;         // time of bf16/fp16 work relative to f32
    double host_link = 0;           // bytes/s between host and device memory
    double per_layer_seconds = 0;   // fixed cost per layer and micro-batch (launches, small ops)
    double comm_link = 0;           // bytes/s between ranks; 0: nominal (GPU 50e9 NVLink/PCIe, CPU 5e9 shared memory)
    std::string source;             // "measured on this machine (cached ...)", "nominal (HEADROOM_RATES=nominal)", ...
};

struct DeviceDescription {
    std::string device;                 // what was asked: "cpu", "cuda:0", "h100"
    std::string kind = "cpu";           // "cpu" or "cuda"
    int index = -1;                     // cuda:N on this machine, -1 otherwise
    std::string name;                   // "NVIDIA H200", "AMD EPYC 7B13 (16 threads)"
    bool present = false;               // the device is on this machine
    bool defaults = false;              // figures from the documented table, not from this machine
    Message source;                     // where the figures come from, for a person (translatable)
    std::size_t capacity_bytes = 0;     // total memory
    int cc_major = 0, cc_minor = 0;     // compute capability (GPU)
    std::size_t cublas_workspace_bytes = 0;  // held by every CUDA backend (in the ledger, workspace)
    std::size_t backend_scratch_bytes = 0;   // the backend's op scratch (in the ledger, workspace)
    std::size_t context_bytes = 0;      // CUDA context: outside the ledger
    std::size_t handles_bytes = 0;      // cuBLAS + cuDNN handles and loaded kernels: outside the ledger
    bool overhead_measured = false;     // context/handles measured on this machine
    std::string overhead_source;
    std::size_t conv_workspace_limit = std::size_t(256) << 20;
    DeviceRates rates;

    bool gpu() const { return kind == "cuda"; }
    std::size_t overhead_bytes() const { return context_bytes + handles_bytes; }
    std::size_t backend_fixed_bytes() const { return cublas_workspace_bytes + backend_scratch_bytes; }
};

// The description of `device` ("cpu", "cuda", "cuda:N", or a GPU model name), cached per process.
// threads: the CPU backend's thread count (CPU rates depend on it). Throws InputError for a name it
// does not know, naming the ones it does.
DeviceDescription describe_device(const std::string& device, int threads = 0);
// The GPU models the table knows ("h100", ...), and whether `device` is one of them.
std::vector<std::string> gpu_model_names();
bool is_gpu_model_name(const std::string& device);
// The description in one line for a person, and as JSON (run.json "device_info", docs/run-json.md).
std::string describe_device_line(const DeviceDescription& d);
nlohmann::json device_description_json(const DeviceDescription& d);

// The planner's sizing backend: a CPU backend (so every op exists; the planner's dry run calls none)
// whose conv2d_workspace_bytes answers for the described device: cuDNN's choice on a present GPU
// (asked once per shape), the documented estimate otherwise (docs/devices.md).
// tf32: the run's --precision tf32 (cuDNN picks other algorithms, with other workspaces, then).
std::unique_ptr<Backend> make_planning_backend(const DeviceDescription& d, int threads,
                                               std::shared_ptr<MemoryLedger> ledger, bool tf32 = false);
// The planner's device allocator: counts every request in `ledger`; for a GPU it also runs them
// through the CUDA caching allocator's bookkeeping (backend/cuda/caching_allocator.h) without
// memory, so the ledger's reserved_free is the allocator rounding a real run will have.
std::unique_ptr<Allocator> make_planning_allocator(const DeviceDescription& d, std::shared_ptr<MemoryLedger> ledger);

// The documented estimate of cuDNN's workspace for a convolution on a GPU that is not present:
// 0 for 1x1 convolutions, else the smaller of the input's bytes and the limit.
std::size_t estimated_conv_workspace(const Shape& x, const Shape& w, DType dtype, std::size_t limit);

// NCCL's own device memory on each GPU rank (issue 20 item 7): outside the ledger, part of the
// process overhead the planner adds to the ledger's figure. The first run of `world_size` GPU ranks
// on a GPU model measures it (free memory before the communicator minus after its first collective,
// Communicator::device_overhead_bytes) and keeps it in the cache folder (nccl-overheads.json, by GPU
// name and world size); until then it is an estimate from NCCL's default buffer sizes and says so
// (docs/distributed.md). Nothing on the CPU (MPI's buffers are host memory) or for one rank.
struct CommunicationOverhead {
    std::size_t bytes = 0;
    bool measured = false;
    std::string source;  // for a person: measured when, or how it was estimated
};
CommunicationOverhead communication_overhead(const DeviceDescription& d, int world_size);
// Keeps a run's measurement for the plans that follow (never throws). engine: "nccl 2.21.5", say.
void record_communication_overhead(const std::string& device_name, int world_size, std::size_t bytes,
                                   const std::string& engine);

// Forgets the cached descriptions (tests).
void clear_device_descriptions();

}  // namespace hr
