#include "plan/device_description.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/caching_allocator.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_sizes.h"
#include "base/error.h"
#include "memory/counting_allocator.h"
#include "plan/device_calibration.h"

namespace hr {

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t MiB = std::size_t(1) << 20;

// The documented table (docs/devices.md): what a GPU that is not on this machine is assumed to be.
// Capacity: what cudaMemGetInfo reports as total on that card. Overheads: typical CUDA 13 figures
// with lazy kernel loading (the context; cuBLAS + cuDNN handles and the kernels a training step loads).
// Rates: about 40 % of the card's dense peak for f32 (non-tensor) work, bf16 about 2.5x faster,
// the host link its PCIe generation's practical bandwidth.
struct GpuModel {
    const char* id;
    const char* name;
    double capacity_gib;
    int cc_major, cc_minor;
    double context_mib, handles_mib;
    double flops, lowp_factor, host_link;
    int nccl_channels;  // the channels NCCL opens between two of these cards (estimate: NVLink 16, PCIe 4)
};
const GpuModel kModels[] = {
    {"h100", "NVIDIA H100 80GB HBM3", 79.2, 9, 0, 384, 128, 27e12, 0.4, 40e9, 16},
    {"h200", "NVIDIA H200", 139.8, 9, 0, 384, 128, 27e12, 0.4, 40e9, 16},
    {"a100", "NVIDIA A100-SXM4-80GB", 79.2, 8, 0, 320, 96, 8e12, 0.4, 25e9, 16},
    {"a100-40gb", "NVIDIA A100-SXM4-40GB", 39.4, 8, 0, 320, 96, 8e12, 0.4, 25e9, 16},
    {"rtx4090", "NVIDIA GeForce RTX 4090", 23.6, 8, 9, 288, 96, 33e12, 0.4, 25e9, 4},
    {"l40s", "NVIDIA L40S", 44.4, 8, 9, 288, 96, 36e12, 0.4, 25e9, 4},
    {"l4", "NVIDIA L4", 22.0, 8, 9, 288, 96, 12e12, 0.4, 25e9, 4},
};
const GpuModel& default_model() { return kModels[0]; }

const GpuModel* find_model(const std::string& id) {
    for (const auto& m : kModels)
        if (id == m.id) return &m;
    return nullptr;
}

// The table entry closest to a present GPU (for figures that could not be measured).
const GpuModel& model_like(const std::string& name, int cc_major, int cc_minor) {
    auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
    const char* id = has("H200")                ? "h200"
                     : has("H100")              ? "h100"
                     : has("A100") && has("40") ? "a100-40gb"
                     : has("A100")              ? "a100"
                     : has("4090")              ? "rtx4090"
                     : has("L40S")              ? "l40s"
                     : has("L4")                ? "l4"
                     : cc_major >= 9            ? "h100"
                     : cc_major == 8 && cc_minor >= 6 ? "rtx4090"
                                                : "a100";
    return *find_model(id);
}

int cuda_index_of(const std::string& device) {
    if (device == "cuda") return 0;
    try {
        std::size_t pos = 0;
        const int i = std::stoi(device.substr(5), &pos);
        if (pos == device.size() - 5 && i >= 0) return i;
    } catch (...) {
    }
    throw InputError("device '" + device + "': write cuda:N with N the GPU's index (see headroom devices)");
}

std::string cpu_model_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            const auto c = line.find(':');
            if (c != std::string::npos) {
                std::string v = line.substr(c + 1);
                v.erase(0, v.find_first_not_of(' '));
                return v;
            }
        }
    return "CPU";
}

std::string names_list() {
    std::string s;
    for (const auto& m : kModels) s += (s.empty() ? "" : ", ") + std::string(m.id);
    return s;
}

void apply_model(DeviceDescription& d, const GpuModel& m) {
    d.name = m.name;
    d.capacity_bytes = static_cast<std::size_t>(m.capacity_gib * GiB);
    d.cc_major = m.cc_major;
    d.cc_minor = m.cc_minor;
    d.context_bytes = static_cast<std::size_t>(m.context_mib * MiB);
    d.handles_bytes = static_cast<std::size_t>(m.handles_mib * MiB);
    d.rates.flops = m.flops;
    d.rates.lowp_factor = m.lowp_factor;
    d.rates.host_link = m.host_link;
    d.rates.per_layer_seconds = 2e-5;
    d.rates.source = std::string("the table's nominal rates for ") + m.name + " (not measured)";
}

// Present GPU: the context and handle overheads, from the cache or measured now (once per device,
// driver and library versions), with the table's context figure when it could not be measured.
void overheads_of_present(DeviceDescription& d) {
    const std::string key = d.name + " | " + cuda_versions();
    const std::string file = "device-overheads.json";
    nlohmann::json cache = nlohmann::json::parse(read_cache_file(file), nullptr, false);
    if (!cache.is_object()) cache = nlohmann::json::object();
    const GpuModel& like = model_like(d.name, d.cc_major, d.cc_minor);
    if (cache.contains(key) && cache[key].is_object()) {
        const auto& e = cache[key];
        const bool ctx = e.value("context_measured", false);
        d.context_bytes = ctx ? e.value("context_bytes", std::size_t(0)) : static_cast<std::size_t>(like.context_mib * MiB);
        d.handles_bytes = e.value("handles_bytes", std::size_t(0));
        d.overhead_measured = ctx;
        d.overhead_source = std::string(ctx ? "measured on " : "handles measured on ") +
                            e.value("measured", std::string("an earlier run")) + ", cached in " + headroom_cache_dir() +
                            "/" + file + (ctx ? "" : "; the context's size is the table's figure for " + std::string(like.name));
        return;
    }
    try {
        const CudaOverheads o = cuda_measure_overheads(d.index, -1);
        d.handles_bytes = o.handles_bytes;
        char when[32];
        const std::time_t t = std::time(nullptr);
        std::strftime(when, sizeof when, "%Y-%m-%d", std::gmtime(&t));
        cache[key] = {{"context_bytes", o.context_bytes},
                      {"handles_bytes", o.handles_bytes},
                      {"context_measured", o.context_measured},
                      {"measured", when}};
        write_cache_file(file, cache.dump(2));
        if (o.context_measured) {
            d.context_bytes = o.context_bytes;
            d.overhead_measured = true;
            d.overhead_source = "measured now: " + o.note;
        } else {
            d.context_bytes = static_cast<std::size_t>(like.context_mib * MiB);
            d.overhead_source = "handles measured now; the context's size is the table's figure for " +
                                std::string(like.name) + " (this process had the context before it could be measured)";
        }
    } catch (const std::exception& e) {
        d.context_bytes = static_cast<std::size_t>(like.context_mib * MiB);
        d.handles_bytes = static_cast<std::size_t>(like.handles_mib * MiB);
        d.overhead_source = std::string("the table's figures for ") + like.name + " (measuring failed: " + e.what() + ")";
    }
}

DeviceDescription describe_uncached(const std::string& device, int threads) {
    DeviceDescription d;
    d.device = device;
    if (device == "cpu") {
        d.kind = "cpu";
        d.present = true;
        const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
        const unsigned t = threads > 0 ? static_cast<unsigned>(threads) : hw;
        d.name = cpu_model_name() + " (" + std::to_string(t) + " thread" + (t == 1 ? "" : "s") + ")";
        const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
        d.capacity_bytes = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
        d.source = Message(HR_MSG("device.source_here", "this machine"));
        d.overhead_source = "none: the ledger counts what the CPU backend allocates";
        return d;
    }
    d.kind = "cuda";
    d.backend_scratch_bytes = cuda_sizes::kOpScratchBytes;
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
        d.index = cuda_index_of(device);
        CudaDeviceInfo info;
        if (cuda_device_properties(d.index, info)) {
            d.present = true;
            d.name = info.name;
            d.capacity_bytes = info.total_bytes;
            d.cc_major = info.cc_major;
            d.cc_minor = info.cc_minor;
            d.source = Message(HR_MSG("device.source_here_gpu", "this machine (%1)"), {device});
            d.cublas_workspace_bytes = cuda_sizes::cublas_workspace_bytes_for(d.cc_major, d.cc_minor);
            overheads_of_present(d);
            return d;
        }
        // not on this machine: plan with the default model, and say so
        const GpuModel& m = default_model();
        apply_model(d, m);
        d.defaults = true;
        d.source = cuda_device_count() > 0
                       ? Message(HR_MSG("device.source_absent", "defaults of an %1 from the table (%2 does not exist "
                                                                "here); plan with --device h100|h200|a100|... to choose "
                                                                "another"),
                                 {m.name, device})
                       : Message(HR_MSG("device.source_no_cuda", "defaults of an %1 from the table (%2); plan with "
                                                                 "--device h100|h200|a100|... to choose another"),
                                 {m.name, cuda_unavailable_reason()});
    } else if (const GpuModel* m = find_model(device)) {
        apply_model(d, *m);
        d.defaults = true;
        d.source = Message(HR_MSG("device.source_table", "defaults of an %1 from the table (not measured)"), {m->name});
    } else {
        throw InputError("unknown device '" + device + "'; use cpu, cuda:N or a GPU model to plan for: " + names_list());
    }
    d.cublas_workspace_bytes = cuda_sizes::cublas_workspace_bytes_for(d.cc_major, d.cc_minor);
    d.overhead_source = "the table's typical figures (not measured)";
    return d;
}

std::mutex& cache_mutex() {
    static std::mutex m;
    return m;
}
std::map<std::string, DeviceDescription>& cache() {
    static std::map<std::string, DeviceDescription> c;
    return c;
}

// --- the planner's sizing backend ------------------------------------------------------------------

// One CUDA backend per present device for cuDNN's workspace choices, made on the first question and
// kept for the process; each shape is asked once.
struct GpuSizer {
    std::mutex mutex;
    std::unique_ptr<Backend> backend;
    std::map<std::string, std::size_t> sizes;
};
GpuSizer& sizer_for(int index) {
    static std::mutex m;
    static std::map<int, std::unique_ptr<GpuSizer>> sizers;
    std::lock_guard<std::mutex> lock(m);
    auto& s = sizers[index];
    if (!s) s = std::make_unique<GpuSizer>();
    return *s;
}

class PlanningBackend : public CpuBackend {
public:
    PlanningBackend(const DeviceDescription& d, int threads, std::shared_ptr<MemoryLedger> ledger, bool tf32)
        : CpuBackend(threads, std::move(ledger)), d_(d), tf32_(tf32) {}

    std::size_t do_conv2d_workspace_bytes(const Shape& x, const Shape& w, const Shape& y, const Conv2dParams& p,
                                          DType dtype) const override {
        if (!d_.gpu()) return CpuBackend::do_conv2d_workspace_bytes(x, w, y, p, dtype);
        if (!d_.present) return estimated_conv_workspace(x, w, dtype, d_.conv_workspace_limit);
        GpuSizer& s = sizer_for(d_.index);
        std::lock_guard<std::mutex> lock(s.mutex);
        const std::string key =
            shape_str(x) + shape_str(w) + shape_str(y) + params_key(p) + dtype_name(dtype) + (tf32_ ? "tf32" : "");
        auto it = s.sizes.find(key);
        if (it != s.sizes.end()) return it->second;
        if (!s.backend) s.backend = make_cuda_backend(d_.index, std::make_shared<MemoryLedger>());
        cuda_set_tf32(*s.backend, tf32_);
        const std::size_t bytes = s.backend->conv2d_workspace_bytes(x, w, y, p, dtype);
        s.sizes.emplace(key, bytes);
        return bytes;
    }

    // The CUDA attention kernels' scratch (cuda_sizes.h), not the CPU's per-thread tiles, on a GPU.
    std::size_t attention_workspace_bytes(std::int64_t B, std::int64_t T, std::int64_t C, int heads,
                                          DType dtype) const override {
        if (!d_.gpu()) return CpuBackend::attention_workspace_bytes(B, T, C, heads, dtype);
        return cuda_sizes::attention_workspace_bytes(B, T, C, heads);
    }

private:
    static std::string params_key(const Conv2dParams& p) {
        std::string k = "s";  // appended piece by piece (GCC 12 warns falsely on "s" + std::string&&)
        for (const auto& [sep, v] : {std::pair{"", p.stride_h}, {"x", p.stride_w}, {"p", p.pad_h}, {"x", p.pad_w},
                                     {"d", p.dilation_h}, {"x", p.dilation_w}}) {
            k += sep;
            k += std::to_string(v);
        }
        return k;
    }
    DeviceDescription d_;
    bool tf32_;
};

// The caching allocator's bookkeeping on addresses that are never touched (the planner's dry run).
DeviceHeap simulated_heap() {
    DeviceHeap h;
    auto next = std::make_shared<std::uintptr_t>(std::uintptr_t(1) << 40);
    h.raw_alloc = [next](std::size_t bytes) -> void* {
        void* p = reinterpret_cast<void*>(*next);
        *next += (bytes + 4095) / 4096 * 4096;
        return p;
    };
    h.raw_free = [](void*) {};
    h.mem_info = [](std::size_t&, std::size_t&) { return false; };
    return h;  // no zero: nothing is touched
}

}  // namespace

DeviceDescription describe_device(const std::string& device_in, int threads) {
    const std::string device = device_in == "cuda" ? "cuda:0" : device_in;
    const std::string key = device + "#" + std::to_string(device == "cpu" ? threads : 0);
    {
        std::lock_guard<std::mutex> lock(cache_mutex());
        auto it = cache().find(key);
        if (it != cache().end()) return it->second;
    }
    DeviceDescription d = describe_uncached(device, threads);  // may measure: not under the lock
    d.rates = device_rates(d, threads);
    std::lock_guard<std::mutex> lock(cache_mutex());
    return cache().emplace(key, std::move(d)).first->second;
}

void clear_device_descriptions() {
    std::lock_guard<std::mutex> lock(cache_mutex());
    cache().clear();
}

std::vector<std::string> gpu_model_names() {
    std::vector<std::string> v;
    for (const auto& m : kModels) v.push_back(m.id);
    return v;
}

bool is_gpu_model_name(const std::string& device) { return find_model(device) != nullptr; }

std::string describe_device_line(const DeviceDescription& d) {
    std::string s = d.name + ", " + format_bytes(d.capacity_bytes);
    if (d.gpu()) {
        s += ", compute capability " + std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
             "; per process outside the ledger: CUDA context " + format_bytes(d.context_bytes) +
             ", cuBLAS/cuDNN handles " + format_bytes(d.handles_bytes) + " (" + d.overhead_source +
             "); per backend in the ledger: cuBLAS workspace " + format_bytes(d.cublas_workspace_bytes) +
             ", op scratch " + format_bytes(d.backend_scratch_bytes);
    }
    s += "; step-time rates " + d.rates.source;
    if (d.defaults) s += "; " + d.source.english();
    return s;
}

namespace {
const char* const kNcclOverheadsFile = "nccl-overheads.json";
std::string nccl_overhead_key(const std::string& device_name, int world_size) {
    return device_name + " | " + std::to_string(world_size) + " ranks";
}
}  // namespace

CommunicationOverhead communication_overhead(const DeviceDescription& d, int world_size) {
    CommunicationOverhead o;
    if (!d.gpu() || world_size <= 1) return o;
    const nlohmann::json cache = nlohmann::json::parse(read_cache_file(kNcclOverheadsFile), nullptr, false);
    const std::string key = nccl_overhead_key(d.name, world_size);
    if (cache.is_object() && cache.contains(key) && cache[key].is_object() && cache[key].contains("bytes") &&
        cache[key]["bytes"].is_number_unsigned()) {
        o.bytes = cache[key]["bytes"].get<std::size_t>();
        o.measured = true;
        o.source = "NCCL's device memory measured by a run of " + std::to_string(world_size) + " ranks on " + d.name +
                   " (" + cache[key].value("measured", std::string("an earlier run")) + ", " +
                   cache[key].value("engine", std::string("NCCL")) + "), cached in " + headroom_cache_dir() + "/" +
                   kNcclOverheadsFile;
        return o;
    }
    // NCCL's default buffers: for every channel, a receive buffer per protocol (Simple NCCL_BUFFSIZE
    // 4 MiB, LL128 4.69 MiB, LL 0.5 MiB) for each of two connections (ring and tree), and about 64 MiB
    // of kernels and proxy state; the channels are the table's guess for two such cards
    const GpuModel& like = model_like(d.name, d.cc_major, d.cc_minor);
    const double per_connection = 4.0 * MiB + 4915200.0 + 524288.0;
    o.bytes = static_cast<std::size_t>(like.nccl_channels * 2 * per_connection + 64.0 * MiB);
    o.source = "an estimate from NCCL's default buffers (" + std::to_string(like.nccl_channels) +
               " channels, 2 connections each, 9.19 MiB per connection, 64 MiB of kernels); the first run of " +
               std::to_string(world_size) + " ranks on this GPU measures it";
    return o;
}

void record_communication_overhead(const std::string& device_name, int world_size, std::size_t bytes,
                                   const std::string& engine) {
    if (world_size <= 1 || device_name.empty()) return;
    nlohmann::json cache = nlohmann::json::parse(read_cache_file(kNcclOverheadsFile), nullptr, false);
    if (!cache.is_object()) cache = nlohmann::json::object();
    char when[32];
    const std::time_t t = std::time(nullptr);
    std::strftime(when, sizeof when, "%Y-%m-%d", std::gmtime(&t));
    cache[nccl_overhead_key(device_name, world_size)] = {{"bytes", bytes}, {"measured", when}, {"engine", engine}};
    write_cache_file(kNcclOverheadsFile, cache.dump(2));
}

nlohmann::json device_description_json(const DeviceDescription& d) {
    nlohmann::json j = {{"device", d.device},
                        {"kind", d.kind},
                        {"name", d.name},
                        {"present", d.present},
                        {"defaults", d.defaults},
                        {"source", d.source.english()},
                        {"capacity_bytes", d.capacity_bytes}};
    if (d.gpu()) {
        j["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
        j["cublas_workspace_bytes"] = d.cublas_workspace_bytes;
        j["backend_scratch_bytes"] = d.backend_scratch_bytes;
        j["context_bytes"] = d.context_bytes;
        j["handles_bytes"] = d.handles_bytes;
        j["overhead_measured"] = d.overhead_measured;
        j["overhead_source"] = d.overhead_source;
        j["conv_workspace_limit_bytes"] = d.conv_workspace_limit;
    }
    j["rates"] = {{"flops", d.rates.flops},
                  {"lowp_factor", d.rates.lowp_factor},
                  {"host_link_bytes_per_second", d.rates.host_link},
                  {"per_layer_seconds", d.rates.per_layer_seconds},
                  {"source", d.rates.source}};
    return j;
}

std::unique_ptr<Backend> make_planning_backend(const DeviceDescription& d, int threads,
                                               std::shared_ptr<MemoryLedger> ledger, bool tf32) {
    return std::make_unique<PlanningBackend>(d, threads, std::move(ledger), tf32);
}

std::unique_ptr<Allocator> make_planning_allocator(const DeviceDescription& d, std::shared_ptr<MemoryLedger> ledger) {
    if (!d.gpu()) return std::make_unique<CountingAllocator>(Device::cpu(), std::move(ledger));
    return std::make_unique<CachingAllocator>(Device::cuda(std::max(0, d.index)), std::move(ledger), simulated_heap());
}

std::size_t estimated_conv_workspace(const Shape& x, const Shape& w, DType dtype, std::size_t limit) {
    if (w.size() == 4 && w[2] == 1 && w[3] == 1) return 0;
    const std::size_t bytes = static_cast<std::size_t>(shape_numel(x)) * dtype_size(dtype);
    return std::min(bytes, limit);
}

}  // namespace hr
