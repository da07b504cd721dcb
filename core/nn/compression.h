#pragma once
// What-ifs on trained weights (issue 23 item 4): magnitude pruning and weight quantisation, applied to a
// model's weights in place so that its accuracy after can be measured (`headroom eval --prune S
// --quantize int8|int4`, train/eval_weights.h), with the bytes the weights would take stored that way.
//
// Which tensors: the trainable ones with two or more dimensions (convolution kernels, linear and
// embedding matrices: nanoGPT's weight-decay rule, nn/model.h ParamSegment); biases, normalisation
// weights and batch-norm statistics stay as they are (f32). A tied head is the embedding: once.
//
// Pruning (PyTorch's torch.nn.utils.prune.l1_unstructured, per tensor): the round(S x n) values of
// smallest magnitude are set to zero.
// Quantisation (symmetric, absmax, round half to even as torch.round): int8 with one f32 scale per
// output row (dim 0): q = round(w / s), s = max|w_row| / 127, q in [-127, 127]; int4 with one f32 scale
// per group of `group` consecutive values of a row (the row's tail is a shorter group), s = max|w| / 7,
// q in [-7, 7]. The weights become q x s (float), what a kernel would compute with.
// Storage counted: dense f32 4 bytes a value; quantised bits / 8 a value plus 4 bytes a scale; pruned,
// a bitmask (1 bit a value) plus the non-zeros at their width (f32, or the quantised width).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "nn/model.h"
#include "tensor/quantized_format.h"

namespace hr {

struct CompressionOptions {
    double prune = 0;          // fraction of each weight tensor set to zero, in [0, 1)
    int bits = 0;              // 0: no quantisation, 8 or 4
    std::int64_t group = 64;   // int4: values per scale
    bool active() const { return prune > 0 || bits != 0; }
};

struct CompressionReport {
    std::int64_t tensors = 0;        // weight tensors transformed
    std::int64_t values = 0;         // their values
    std::int64_t zeros = 0;          // of those, zero after the transform
    std::int64_t scales = 0;         // quantisation scales
    std::size_t dense_bytes = 0;     // those tensors as f32
    std::size_t stored_bytes = 0;    // those tensors stored as the options say
    std::size_t other_bytes = 0;     // every other trainable tensor and buffer, f32 (unchanged)
    double max_abs_change = 0;       // the largest |w' - w|
};

// Checks the options (InputError naming the flag: --prune in [0, 1), --quantize int8 or int4).
void validate_compression(const CompressionOptions& options);
// "int8" / "int4" / "" -> bits; InputError otherwise.
int quantize_bits(const std::string& name);
// bits -> "none" / "int8" / "int4" (config, run.json and plan JSON)
const char* quantize_name(int bits);

// Applies the options to the model's weights (the tensors above) in place, through host copies.
CompressionReport compress_model_weights(Model& model, const CompressionOptions& options);

// The same count from the model's shapes alone, before any training (`headroom plan --prune/--quantize`): the
// zeros are the pruned ones, round(S x n) per tensor (max_abs_change 0: there are no weights yet).
// Quantisation may round more values to zero, so a trained model's stored bytes are at most these.
CompressionReport compression_bytes(const ModelSpec& spec, const CompressionOptions& options);

// The transforms on one tensor's values, host side (rows x cols, row-major): exposed for the tests.
void prune_by_magnitude(float* w, std::int64_t n, double fraction);
// Returns the number of scales used. (quantize_pack then dequantize_packed: one quantiser.)
std::int64_t quantize_rows(float* w, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group);
// The packed storage of tensor/quantized_format.h: quantised into `out` (quantized_bytes of it), and back to
// the f32 values q x s (what a kernel computes with).
void quantize_pack(const float* w, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                   std::uint8_t* out);
void dequantize_packed(const std::uint8_t* packed, std::int64_t rows, std::int64_t cols, int bits, std::int64_t group,
                       float* w);

}  // namespace hr
