#pragma once
// A trained image or table model as an ONNX file (docs/export.md), for ONNX Runtime, TensorRT, OpenVINO.
//
// Plain C++: the protobuf wire format is written by onnx_proto.cpp (no libprotobuf, no libonnx; docs/export.md says
// why). The file holds one graph at opset 17 (ai.onnx), IR version 8:
//   input  "input"   float32 (batch, C, H, W): pixel values on the [0, 1] scale (u8 / 255, torchvision's
//                    ToTensor), or (batch, F) for a table: the CSV's raw feature values, in its column order
//   output "logits"  float32 (batch, classes): the scores before softmax
// `batch` is a dynamic dimension. The run's input normalisation is baked into the graph (its first nodes:
// (input - mean) / std, the dataset's figures, or each table column's training-row statistics) and written in
// the file's metadata too (headroom.normalisation). Weights are initializers under their PyTorch state_dict
// names and layouts. Each layer type maps to opset-17 nodes by one entry of a table (onnx_layer_types()).
#include <cstdint>
#include <string>
#include <vector>

#include "base/shape.h"
#include "nn/compression.h"

namespace hr {

constexpr int kOnnxOpset = 17;

struct OnnxExportResult {
    std::string model;          // the spec's name ("resnet-mini")
    std::uint64_t bytes = 0;    // the file's size
    int opset = kOnnxOpset;
    std::int64_t nodes = 0;     // nodes in the graph
    std::int64_t parameters = 0;  // values of the model's weights and buffers written as initializers
    Shape input_shape;          // per sample
    int classes = 0;
    double norm_mean = 0, norm_std = 1;  // an image model's normalisation (a table's: per column, in the file)
    bool table = false;
    bool compressed = false;    // a pruned or quantised what-if: the floats it computes
    CompressionReport compression;
};

// RUN: a run folder (its config.json and model.safetensors) or the model.safetensors inside one; config.json
// names the data whose normalisation the graph takes, which is read again (the run's data options). `what_if`
// active: the weights pruned/quantised as `headroom eval --prune/--quantize` computes them, written as floats.
// FILE must end in .onnx, in an existing folder; an existing file there is replaced once the new one is whole. The
// bytes go to a temporary file beside FILE (made first, so an unwritable folder is found before the work) and a
// rename: on any error (InputError: a language model, a layer type without a mapping, a run without its config or
// data, a bad FILE; Error: the system refused the write) nothing is left at `file` and an existing file is unchanged.
// ONNX's checker and ONNX Runtime are the tests' (tests/runtime/test_onnx_export*.cpp).
OnnxExportResult export_onnx(const std::string& run, const std::string& file, const CompressionOptions& what_if = {});

// The layer types export_onnx maps (one table entry each; residual blocks included).
std::vector<std::string> onnx_layer_types();

}  // namespace hr
