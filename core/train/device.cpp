#include "train/device.h"

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda_compat.h"
#include "base/error.h"

namespace hr {

namespace {

int cuda_index(const std::string& device) {
    if (device == "cuda") return 0;
    try {
        std::size_t pos = 0;
        int i = std::stoi(device.substr(5), &pos);
        if (pos == device.size() - 5 && i >= 0) return i;
    } catch (...) {
    }
    throw InputError("device '" + device + "': write cuda:N with N the GPU's index (see headroom devices)");
}

// --- the self-test ---------------------------------------------------------------------------------

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

struct Pair {
    Tensor c, g;
};

// Relative difference of two result vectors: max |a - b| / max |b| (b the reference); a result that is
// zero where the reference is not, or any NaN, is as bad as it gets.
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(b[i])) return INFINITY;
        scale = std::max(scale, std::abs(double(b[i])));
        diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    }
    if (scale == 0) return diff == 0 ? 0 : INFINITY;
    return diff / scale;
}

class SelfTest {
public:
    SelfTest(Backend& g, Backend& c) : g_(g), c_(c) {}

    Pair make(const Shape& s, std::uint64_t seed) {
        const auto v = random_values(static_cast<std::size_t>(shape_numel(s)), seed);
        Pair p{Tensor::empty(c_.allocator(), s, DType::f32, MemCategory::other),
               Tensor::empty(g_.allocator(), s, DType::f32, MemCategory::other)};
        c_.copy_from_host(v.data(), p.c);
        g_.copy_from_host(v.data(), p.g);
        return p;
    }
    Pair zeros(const Shape& s) {
        return {Tensor::empty(c_.allocator(), s, DType::f32, MemCategory::other),
                Tensor::empty(g_.allocator(), s, DType::f32, MemCategory::other)};
    }
    // Compares the pair; records the first failure.
    bool same(const char* what, const Pair& p) {
        std::vector<float> a(static_cast<std::size_t>(p.g.numel())), b(a.size());
        g_.copy_to_host(p.g, a.data());
        c_.copy_to_host(p.c, b.data());
        return check(what, relative_difference(a, b));
    }
    bool check(const char* what, double rel) {
        if (rel <= kTolerance) return true;
        if (failure_.empty()) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "%s differs from the CPU by %.3g (relative; allowed %.0e)", what, rel,
                          kTolerance);
            failure_ = buf;
        }
        return false;
    }
    const std::string& failure() const { return failure_; }

    static constexpr double kTolerance = 1e-4;

private:
    Backend& g_;
    Backend& c_;
    std::string failure_;
};

}  // namespace

SelfTestResult backend_self_test(Backend& candidate, Backend& reference) {
    SelfTestResult r;
    const char* step = "setup";
    try {
        SelfTest t(candidate, reference);
        // GEMM: C (37, 29) = A (37, 53) @ B^T, B (29, 53)
        step = "gemm";
        Pair a = t.make({37, 53}, 1), b = t.make({29, 53}, 2), c = t.zeros({37, 29});
        reference.gemm(false, true, 1.0f, a.c, b.c, 0.0f, c.c);
        candidate.gemm(false, true, 1.0f, a.g, b.g, 0.0f, c.g);
        t.same("gemm", c);
        // convolution forward and backward: x (2, 3, 9, 9), w (4, 3, 3, 3), padding 1
        step = "convolution";
        Conv2dParams p;
        p.pad_h = p.pad_w = 1;
        Pair x = t.make({2, 3, 9, 9}, 3), w = t.make({4, 3, 3, 3}, 4), bias = t.make({4}, 5), y = t.zeros({2, 4, 9, 9});
        auto workspace = [&](Backend& be) {
            const std::size_t bytes = be.conv2d_workspace_bytes(x.c.shape(), w.c.shape(), y.c.shape(), p, DType::f32);
            return bytes ? Tensor::empty(be.allocator(), {static_cast<std::int64_t>(bytes)}, DType::u8,
                                         MemCategory::workspace)
                         : Tensor();
        };
        Tensor wsc = workspace(reference), wsg = workspace(candidate);
        reference.conv2d_forward(x.c, w.c, bias.c, y.c, p, wsc);
        candidate.conv2d_forward(x.g, w.g, bias.g, y.g, p, wsg);
        t.same("convolution forward", y);
        Pair dy = t.make({2, 4, 9, 9}, 6), dx = t.zeros({2, 3, 9, 9}), dw = t.zeros({4, 3, 3, 3}), db = t.zeros({4});
        reference.conv2d_backward_data(dy.c, w.c, dx.c, p, wsc);
        candidate.conv2d_backward_data(dy.g, w.g, dx.g, p, wsg);
        t.same("convolution backward (data)", dx);
        reference.conv2d_backward_filter(x.c, dy.c, dw.c, db.c, p, wsc);
        candidate.conv2d_backward_filter(x.g, dy.g, dw.g, db.g, p, wsg);
        t.same("convolution backward (filter)", dw);
        t.same("convolution backward (bias)", db);
        // a reduction and a loss
        step = "sum of squares";
        Pair v = t.make({10007}, 7);
        const double sc = reference.sum_squares(v.c), sg = candidate.sum_squares(v.g);
        t.check("sum of squares", std::abs(sg - sc) / std::max(std::abs(sc), 1e-30));
        step = "cross-entropy";
        Pair z = t.make({16, 10}, 8), dz = t.zeros({16, 10});
        std::vector<std::int64_t> lab(16);
        for (std::size_t i = 0; i < lab.size(); ++i) lab[i] = static_cast<std::int64_t>((i * 7) % 10);
        Tensor lc = Tensor::empty(reference.allocator(), {16}, DType::i64, MemCategory::other);
        Tensor lg = Tensor::empty(candidate.allocator(), {16}, DType::i64, MemCategory::other);
        reference.copy_from_host(lab.data(), lc);
        candidate.copy_from_host(lab.data(), lg);
        const LossResult rc = reference.softmax_cross_entropy(z.c, lc, 0.0f, dz.c, 1.0f);
        const LossResult rg = candidate.softmax_cross_entropy(z.g, lg, 0.0f, dz.g, 1.0f);
        t.check("cross-entropy loss", std::abs(rg.loss - rc.loss) / std::max(std::abs(rc.loss), 1e-30));
        t.check("cross-entropy accuracy", rg.correct == rc.correct ? 0.0 : INFINITY);
        t.same("cross-entropy gradient", dz);
        candidate.synchronize();
        r.ok = t.failure().empty();
        r.detail = r.ok ? "GEMM, convolution (forward and backward), sum of squares and cross-entropy agree with "
                          "the CPU within 1e-4"
                        : t.failure();
    } catch (const std::exception& e) {
        r.ok = false;
        r.detail = std::string(step) + " failed: " + e.what();
    }
    return r;
}

namespace {
AutoDevice choose_auto_device(int gpu) {
    AutoDevice choice;
    const CudaStatus st = cuda_status();
    if (st.state != CudaStatus::State::available) {
        choice.device = "cpu";
        std::error_code ec;
        if (st.state == CudaStatus::State::module_missing && !std::filesystem::exists("/proc/driver/nvidia/version", ec))
            // a machine without an NVIDIA driver: the missing module is not the reason (scripts/demo builds
            // none there)
            choice.note = Message(HR_MSG("device.auto_no_nvidia",
                                         "device auto: this machine has no NVIDIA GPU driver; training on the CPU"));
        else
            choice.note = Message(HR_MSG("device.auto_no_gpu", "device auto: no GPU (%1); training on the CPU"),
                                  {st.reason});
        return choice;
    }
    const std::string device = "cuda:" + std::to_string(gpu);
    std::string name = device;
    try {
        CudaBackendOptions o;  // strict f32: the self-test compares against the CPU
        auto backend = make_cuda_backend(gpu, std::make_shared<MemoryLedger>(), o);
        auto cpu = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        CudaDeviceInfo info;
        if (cuda_device_properties(gpu, info)) name = device + " (" + info.name + ")";
        choice.self_test = backend_self_test(*backend, *cpu);
    } catch (const std::exception& e) {
        choice.self_test.ok = false;
        choice.self_test.detail = std::string("the backend could not be made: ") + e.what();
    }
    if (choice.self_test.ok) {
        choice.device = device;
        choice.note = Message(HR_MSG("device.auto_gpu", "device auto: %1 passed the self-test (%2); training on the GPU"),
                              {name, choice.self_test.detail});
    } else {
        choice.device = "cpu";
        choice.note = Message(HR_MSG("device.auto_gpu_failed",
                                     "device auto: %1 failed the self-test (%2); training on the CPU"),
                              {name, choice.self_test.detail});
    }
    return choice;
}
}  // namespace

const AutoDevice& auto_device(int gpu) {
    // once per GPU and process (a rank asks for its own GPU only: no context on the others)
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<AutoDevice>> choices;
    std::lock_guard<std::mutex> lock(mutex);
    auto& slot = choices[gpu];
    if (!slot) slot = std::make_unique<AutoDevice>(choose_auto_device(gpu));
    return *slot;
}

int rank_gpu_index(int local_rank, int local_size, int visible_gpus, bool visibility_set) {
    // the launcher gave this rank one GPU (CUDA_VISIBLE_DEVICES per rank), or there is one rank here
    if (visible_gpus == 1 && (visibility_set || local_size <= 1)) return 0;
    if (visible_gpus >= 1 && local_size > visible_gpus)
        throw InputError(HR_MSG("train.rank_gpus_short",
                                "%1 ranks run on this machine but it has %2 GPUs; start at most %2 ranks here, or "
                                "give each rank one GPU (CUDA_VISIBLE_DEVICES)"),
                         {std::to_string(local_size), std::to_string(visible_gpus)});
    return local_rank;
}

std::string resolve_device(const std::string& device) {
    if (device == "auto") return auto_device(0).device;
    if (device == "cuda") return "cuda:0";
    return device;
}

std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::shared_ptr<MemoryLedger> ledger,
                                      bool tf32, Message* note) {
    std::string d = device;
    if (device == "auto") {
        const AutoDevice& a = auto_device(0);
        if (note) *note = a.note;
        d = a.device;
    }
    if (d == "cpu") return make_cpu_backend(threads, std::move(ledger));
    if (d.rfind("cuda", 0) == 0) {
        const int index = cuda_index(d);
        CudaBackendOptions o;
        o.tf32 = tf32;
        try {
            return make_cuda_backend(index, std::move(ledger), o);
        } catch (const InputError& e) {
            throw InputError("device '" + device + "': " + e.what());
        }
    }
    throw InputError("unknown device '" + device + "'; use auto, cpu or cuda:N");
}

DeviceReport device_report() {
    DeviceReport r;
    r.cpu = describe_device("cpu", 0);
    r.cuda = cuda_status();
    if (r.cuda.state == CudaStatus::State::available) {
        // describe (and measure, once) before anything else creates the devices' contexts
        const int n = cuda_device_count();
        std::vector<DeviceDescription> descs;
        for (int i = 0; i < n; ++i) descs.push_back(describe_device("cuda:" + std::to_string(i)));
        const auto infos = cuda_devices();
        for (int i = 0; i < n; ++i) {
            DeviceReport::Gpu g;
            g.description = descs[static_cast<std::size_t>(i)];
            for (const auto& info : infos)
                if (info.index == i) g.info = info;
            r.gpus.push_back(std::move(g));
        }
        r.cuda_line = Message(HR_MSG("device.cuda_module", "cuda     module %1"), {r.cuda.module_path});
    } else {
        r.cuda_line = Message(HR_MSG("device.cuda_unavailable", "cuda     not available (%1): %2"),
                              {cuda_state_name(r.cuda.state), r.cuda.reason});
    }
    r.cuda_versions = cuda_versions();
    r.cuda_archs = cuda_built_archs();
    return r;
}

std::string device_report_text(const DeviceReport& r) {
    std::string s = "cpu      " + r.cpu.name + ", " + format_bytes(r.cpu.capacity_bytes) + " memory\n";
    s += r.cuda_line.english() + "\n";
    for (const auto& g : r.gpus) {
        const DeviceDescription& d = g.description;
        s += "cuda:" + std::to_string(d.index) + "   " + d.name + ", " + format_bytes(d.capacity_bytes) + " memory (" +
             format_bytes(g.info.free_bytes) + " free), compute capability " + std::to_string(d.cc_major) + "." +
             std::to_string(d.cc_minor) + "\n";
        s += "         outside the ledger per process: CUDA context " + format_bytes(d.context_bytes) +
             ", cuBLAS/cuDNN handles " + format_bytes(d.handles_bytes) + " (" + d.overhead_source + ")\n";
        s += "         per backend, in the ledger: cuBLAS workspace " + format_bytes(d.cublas_workspace_bytes) +
             ", op scratch " + format_bytes(d.backend_scratch_bytes) + "; convolution workspace up to " +
             format_bytes(d.conv_workspace_limit) + " per call\n";
        s += "         step-time rates (estimates): " + d.rates.source + "\n";
        if (!r.cuda_archs.empty())
            s += cuda_archs_cover(r.cuda_archs, d.cc_major, d.cc_minor)
                     ? "         GPU code: built for " + r.cuda_archs + ", which covers compute capability " +
                           std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) + "\n"
                     : "         GPU code: none for this GPU: " +
                           cuda_arch_missing(d.name, d.cc_major, d.cc_minor, r.cuda_archs).english() + "\n";
    }
    s += "versions " + r.cuda_versions + "\n";
    return s;
}

}  // namespace hr
