#pragma once
// Layers (DESIGN.md decision 1): each declares its parameters, the tensors it keeps for backward and
// its workspace, and implements forward/backward. The public non-virtual forward()/backward() validate
// shapes, then call the virtual *_impl. Backward ACCUMULATES parameter gradients (+=) and WRITES the
// input gradient (=) when dx is defined.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/model_spec.h"
#include "tensor/tensor.h"

namespace hr {

struct ParamDecl {
    enum class Init { uniform_fan_in, ones, zeros };  // uniform_fan_in: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch
    std::string name;  // "weight", "bias"
    Shape shape;
    Init init = Init::uniform_fan_in;
    std::int64_t fan_in = 1;
};

// Non-trainable state saved with the weights (BatchNorm running statistics).
struct BufferDecl {
    std::string name;  // "running_mean", "running_var", "num_batches_tracked"
    Shape shape;
    DType dtype = DType::f32;
    double init = 0.0;
};

// Tensors besides the output that forward keeps for backward (with the batch dimension).
struct SavedDecl {
    std::string what;  // "indices", "mask", "mean", "invstd"
    Shape shape;
    DType dtype = DType::f32;
};

struct LayerIO {
    Backend* backend = nullptr;
    bool training = true;
    Tensor x;                     // forward input (N, ...)
    Tensor y;                     // forward output (N, ...)
    Tensor dy;                    // backward: gradient of the output
    Tensor dx;                    // backward: gradient of the input, written when defined
    std::vector<Tensor> params;   // ParamDecl order
    std::vector<Tensor> grads;    // ParamDecl order, accumulated
    std::vector<Tensor> buffers;  // BufferDecl order
    std::vector<Tensor> saved;    // SavedDecl order
    Tensor workspace;             // workspace_bytes() bytes (u8), may be undefined when 0
    std::uint64_t seed = 0;       // dropout: counter-based RNG stream of this layer and step
    std::uint64_t counter = 0;
    bool recompute = false;       // forward again for activation checkpointing: same outputs, but no
                                  // state updates (BatchNorm running statistics)
};

class Layer {
public:
    explicit Layer(LayerSpec spec) : spec_(std::move(spec)) {}
    virtual ~Layer() = default;

    const LayerSpec& spec() const { return spec_; }
    const std::string& type() const { return spec_.type; }

    // Per-sample output shape for a per-sample input shape (validated by analyze_model_spec already).
    virtual Shape output_shape(const Shape& in) const = 0;
    virtual std::vector<ParamDecl> params(const Shape& in) const { return {}; }
    virtual std::vector<BufferDecl> buffers(const Shape& in) const { return {}; }
    virtual std::vector<SavedDecl> saved(std::int64_t batch, const Shape& in) const { return {}; }
    virtual std::size_t workspace_bytes(const Backend& b, std::int64_t batch, const Shape& in, DType dtype) const {
        return 0;
    }
    // The output is a view of the input (Flatten): no activation memory of its own.
    virtual bool output_is_view() const { return false; }

    void forward(LayerIO& io) const;
    void backward(LayerIO& io) const;

protected:
    virtual void forward_impl(LayerIO& io) const = 0;
    virtual void backward_impl(LayerIO& io) const = 0;

private:
    LayerSpec spec_;
};

// Builds the layer for a spec entry (not "residual": that is a graph node, see nn/model.h).
std::unique_ptr<Layer> make_layer(const LayerSpec& spec);

}  // namespace hr
