#pragma once
// What a model needs of a backend, checked at setup (strategy/training_state.cpp): the op families each
// layer type runs (the names Backend::supports takes), so that a model a backend cannot run fails before
// anything is allocated with one message naming the op, the dtype and the layer, not mid-run.
#include <string>
#include <vector>

#include "base/dtype.h"
#include "nn/model_spec.h"

namespace hr {

class Backend;
struct OptimizerConfig;

// Every op family of the Backend interface by name (backend/backend.h lists which methods each covers).
const std::vector<std::string>& backend_op_names();
// The op families a layer type runs forward and backward. InputError for a type the catalog lacks.
std::vector<std::string> layer_backend_ops(const std::string& type);

struct BackendNeed {
    std::string op;     // "conv2d"
    DType dtype;        // the dtype it runs in
    std::string where;  // "layer 0 (conv2d)", "the loss (mse)", "the optimizer (adamw)" (English)
    enum class Part { layer, loss, optimizer } part = Part::layer;
    std::string what;   // the layer's path and type "0 (conv2d)", the loss "mse", the optimizer "adamw"
    bool host = false;  // runs on the host backend (offloaded optimizer), not the training device
};
// What training `spec` with `optimizer` needs: its layers' ops in the compute dtype, the loss, and the
// optimizer's update in the dtype of the weights it updates (f32 with master weights).
std::vector<BackendNeed> training_backend_needs(const ModelSpec& spec, const OptimizerConfig& optimizer,
                                                DType compute, bool master_weights, bool offload_optimizer);
// InputError (backend.op_unsupported) for the first need `device` (or `host`) does not support.
void check_backend_needs(const std::vector<BackendNeed>& needs, const Backend& device, const Backend& host);

}  // namespace hr
