#include "nn/backend_ops.h"

#include <algorithm>
#include <map>

#include "backend/backend.h"
#include "base/error.h"
#include "nn/transformer_spec.h"
#include "optim/optimizer.h"

namespace hr {

const std::vector<std::string>& backend_op_names() {
    static const std::vector<std::string> names = {
        "elementwise", "gemm",      "bias",       "conv2d",      "maxpool2d",     "avgpool2d",
        "activation",  "dropout",   "batchnorm",  "softmax_cross_entropy", "mse_loss", "embedding",
        "layernorm",   "gelu_tanh", "attention",  "cross_entropy", "copy_rows",   "transpose",
        "sgd_update",  "adam_update", "rmsnorm",    "rope",        "swiglu"};
    return names;
}

std::vector<std::string> layer_backend_ops(const std::string& type) {
    static const std::map<std::string, std::vector<std::string>> table = {
        {"conv2d", {"conv2d"}},
        {"linear", {"gemm", "bias"}},
        {"maxpool2d", {"maxpool2d"}},
        {"avgpool2d", {"avgpool2d"}},
        {"relu", {"activation"}},
        {"leaky_relu", {"activation"}},
        {"tanh", {"activation"}},
        {"sigmoid", {"activation"}},
        {"gelu", {"activation"}},
        {"dropout", {"dropout"}},
        {"flatten", {}},
        {"batchnorm2d", {"batchnorm"}},
        {"residual", {"elementwise"}},
        {"token_embedding", {"embedding"}},
        {"position_embedding", {"embedding"}},
        {"layernorm", {"layernorm"}},
        {"self_attention", {"gemm", "bias", "attention", "dropout"}},
        {"mlp", {"gemm", "bias", "gelu_tanh", "dropout"}},
        {"transformer_block", {"layernorm", "gemm", "bias", "attention", "gelu_tanh", "dropout", "elementwise"}},
        {"lm_head", {"gemm"}},
        {"rmsnorm", {"rmsnorm"}},
        {"llama_block", {"rmsnorm", "gemm", "bias", "rope", "attention", "swiglu", "elementwise"}},
        {"patch_embedding", {"conv2d", "transpose"}},
        {"class_token", {"copy_rows"}},
        {"class_token_pool", {"copy_rows"}},
    };
    const auto it = table.find(type);
    if (it == table.end()) throw InputError("unknown layer type '" + type + "'");
    return it->second;
}

namespace {
void layer_needs(const std::vector<LayerSpec>& layers, const std::string& prefix, DType dt, std::vector<BackendNeed>& out) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const LayerSpec& l = layers[i];
        const std::string path = prefix + std::to_string(i);
        const std::string what = path + " (" + l.type + ")";
        for (const std::string& op : layer_backend_ops(l.type))
            out.push_back({op, dt, "layer " + what, BackendNeed::Part::layer, what, false});
        layer_needs(l.body, path + ".body.", dt, out);
        layer_needs(l.shortcut, path + ".shortcut.", dt, out);
    }
}
}  // namespace

std::vector<BackendNeed> training_backend_needs(const ModelSpec& spec, const OptimizerConfig& optimizer, DType compute,
                                                bool master_weights, bool offload_optimizer) {
    std::vector<BackendNeed> out;
    layer_needs(spec.layers, "", compute, out);
    const bool tokens = is_token_model(spec);
    const std::string loss = tokens ? "cross_entropy" : spec.loss.type == "mse" ? "mse_loss" : "softmax_cross_entropy";
    out.push_back({loss, compute, "the loss (" + spec.loss.type + ")", BackendNeed::Part::loss, spec.loss.type, false});
    const std::string update = optimizer.kind == "sgd" ? "sgd_update" : "adam_update";
    const DType weights = master_weights || offload_optimizer ? DType::f32 : compute;
    out.push_back({update, weights, "the optimizer (" + optimizer.kind + ")", BackendNeed::Part::optimizer,
                   optimizer.kind, offload_optimizer});
    return out;
}

void check_backend_needs(const std::vector<BackendNeed>& needs, const Backend& device, const Backend& host) {
    for (const BackendNeed& n : needs) {
        const Backend& b = n.host ? host : device;
        if (b.supports(n.op, n.dtype)) continue;
        const std::vector<std::string> args = {b.name(), n.op, dtype_name(n.dtype), n.what};
        switch (n.part) {
            case BackendNeed::Part::layer:
                throw InputError(HR_MSG("backend.op_unsupported",
                                        "%1 cannot run %2 in %3, which layer %4 needs; train it on another device "
                                        "(--device) or in another precision (--precision)"),
                                 args);
            case BackendNeed::Part::loss:
                throw InputError(HR_MSG("backend.loss_unsupported",
                                        "%1 cannot run %2 in %3, which the loss (%4) needs; train it on another device "
                                        "(--device) or in another precision (--precision)"),
                                 args);
            case BackendNeed::Part::optimizer:
                throw InputError(HR_MSG("backend.optimizer_unsupported",
                                        "%1 cannot run %2 in %3, which the optimizer (%4) needs; train it on another "
                                        "device (--device), in another precision (--precision) or with another "
                                        "--optimizer"),
                                 args);
        }
    }
}

}  // namespace hr
