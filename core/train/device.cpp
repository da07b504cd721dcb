#include "train/device.h"

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

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
}  // namespace

std::string resolve_device(const std::string& device) {
    if (device == "auto") {
#ifdef HEADROOM_WITH_CUDA
        if (cuda_unavailable_reason().empty()) return "cuda:0";
#endif
        return "cpu";
    }
    if (device == "cuda") return "cuda:0";
    return device;
}

std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::shared_ptr<MemoryLedger> ledger,
                                      bool tf32, std::string* note) {
    if (device == "cpu") return make_cpu_backend(threads, std::move(ledger));
    if (device == "auto") {
#ifdef HEADROOM_WITH_CUDA
        const std::string why = cuda_unavailable_reason();
        if (why.empty()) {
            CudaBackendOptions o;
            o.tf32 = tf32;
            auto b = make_cuda_backend(0, std::move(ledger), o);
            if (note) *note = "device auto: using " + b->name();
            return b;
        }
        if (note) *note = "device auto: " + why + "; using the CPU";
#else
        if (note) *note = "device auto: this build has no CUDA backend; using the CPU";
#endif
        return make_cpu_backend(threads, std::move(ledger));
    }
    if (device.rfind("cuda", 0) == 0) {
        const int index = cuda_index(device);
#ifdef HEADROOM_WITH_CUDA
        CudaBackendOptions o;
        o.tf32 = tf32;
        try {
            return make_cuda_backend(index, std::move(ledger), o);
        } catch (const InputError& e) {
            throw InputError("device '" + device + "': " + e.what());
        }
#else
        (void)index;
        throw InputError("device '" + device + "': this build has no CUDA backend (it was built without nvcc); "
                         "use --device cpu, or rebuild where the CUDA toolkit is installed");
#endif
    }
    throw InputError("unknown device '" + device + "'; use auto, cpu or cuda:N");
}

}  // namespace hr
