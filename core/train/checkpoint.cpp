#include "train/checkpoint.h"

#include <cstring>

#include "base/error.h"

namespace hr {

SafeTensorsFile model_state_file(Model& model) {
    Backend& be = model.backend();
    SafeTensorsFile f;
    for (const auto& nt : model.state_dict()) {
        SafeTensor t;
        t.name = nt.name;
        t.dtype = nt.tensor.dtype();
        t.shape = nt.tensor.shape();
        t.data.resize(nt.tensor.nbytes());
        be.copy_to_host(nt.tensor, t.data.data());
        f.tensors.push_back(std::move(t));
    }
    f.metadata["format"] = "pt";
    f.metadata["producer"] = std::string("headroom ") + HEADROOM_VERSION;
    f.metadata["model_spec"] = model_spec_to_json(model.spec()).dump();
    return f;
}

void load_model_state(Model& model, const SafeTensorsFile& file, const std::string& path) {
    Backend& be = model.backend();
    auto sd = model.state_dict();
    // check everything first, so that the model stays unchanged on error
    for (const auto& nt : sd) {
        const SafeTensor* t = file.find(nt.name);
        if (!t)
            throw InputError(path + ": tensor '" + nt.name + "' is missing; the file was written for a different model "
                             "(compare its model_spec with this one)");
        if (t->shape != nt.tensor.shape())
            throw InputError(path + ": tensor '" + nt.name + "' has shape " + shape_str(t->shape) + " but the model needs " +
                             shape_str(nt.tensor.shape()) + "; the file was written for a different model");
        const bool both_float = dtype_is_float(t->dtype) && dtype_is_float(nt.tensor.dtype());
        if (!both_float && t->dtype != nt.tensor.dtype())
            throw InputError(path + ": tensor '" + nt.name + "' is " + dtype_name(t->dtype) + " but the model needs " +
                             dtype_name(nt.tensor.dtype()));
    }
    for (const auto& t : file.tensors) {
        bool known = false;
        for (const auto& nt : sd) known = known || nt.name == t.name;
        if (!known)
            throw InputError(path + ": unexpected tensor '" + t.name + "'; the file was written for a different model");
    }
    for (auto& nt : sd) {
        const SafeTensor* t = file.find(nt.name);
        if (t->dtype == nt.tensor.dtype()) {
            be.copy_from_host(t->data.data(), nt.tensor);
        } else {
            // convert through a host tensor of the file's dtype
            CpuAllocator host(std::make_shared<MemoryLedger>());
            Tensor src = Tensor::empty(host, t->shape, t->dtype, MemCategory::other);
            std::memcpy(src.raw(), t->data.data(), t->data.size());
            Tensor tmp = Tensor::empty(be.allocator(), t->shape, t->dtype, MemCategory::other);
            be.copy_from_host(src.raw(), tmp);
            be.copy(tmp, nt.tensor);
        }
    }
}

}  // namespace hr
