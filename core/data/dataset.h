#pragma once
// Datasets held in host memory (u8 pixels, or a table's standardised f32 features), and the resolver
// that turns a spec given by the user ("fashion-mnist", "cifar10", "csv:FILE", ...) into a train/test pair.
//
// Specs:
//   fashion-mnist  $HEADROOM_DATA_DIR/fashion-mnist, then /usr/share/datasets/fashion-mnist
//                  (Debian's dataset-fashion-mnist package)
//   mnist          $HEADROOM_DATA_DIR/mnist, then /usr/share/datasets/mnist
//   idx:DIR        DIR holding train-images-idx3-ubyte, train-labels-idx1-ubyte,
//                  t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (each raw or .gz); 10 classes;
//                  mean/std computed from the training images
//   synthetic      generated, deterministic, 10 classes of 28x28 images (see make_synthetic)
//   cifar10        $HEADROOM_DATA_DIR/cifar-10-batches-bin, then /usr/share/datasets/cifar-10-batches-bin:
//                  CIFAR-10's binary batches (data/cifar.h), 50000/10000 colour 32x32 images, 10 classes;
//                  mean/std computed from the training pixels (all three channels together)
//   cifar10:DIR    the same from the folder DIR
//   csv:FILE       a CSV table with a header row, DataOptions::target naming the class column, every other
//   tsv:FILE       column numeric (data/table.h): a fifth of the rows is the test set, the features are
//                  standardised with the training rows' statistics
//
// Normalisation follows torchvision's ToTensor() + Normalize((mean,), (std,)) in float32:
// x = (float(u8) / 255.0f - mean) / std.
#include <cstdint>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/shape.h"

namespace hr {

struct Dataset {
    std::string name;                  // "fashion-mnist/train", "synthetic/test", ...
    std::int64_t count = 0;            // number of samples
    Shape sample_shape;                // (C, H, W), e.g. (1, 28, 28)
    int num_classes = 0;
    std::vector<std::uint8_t> images;  // (count, C, H, W); empty for a table
    std::vector<float> features;       // a table: (count, F), already standardised (images empty)
    std::vector<std::string> feature_names;  // a table: its F feature columns
    std::vector<std::int64_t> labels;  // (count), each in [0, num_classes)
    std::vector<std::string> class_names;  // num_classes entries
    float norm_mean = 0.0f;            // per-dataset normalisation, on the [0, 1] scale
    float norm_std = 1.0f;

    std::int64_t sample_numel() const { return shape_numel(sample_shape); }
    bool tabular() const { return !feature_names.empty(); }
    // Bytes the samples and labels take in RAM.
    std::size_t bytes() const {
        return images.size() + features.size() * sizeof(float) + labels.size() * sizeof(std::int64_t);
    }
};

struct DatasetPair {
    Dataset train;
    Dataset test;
    std::string source_dir;  // folder the files came from; "" for synthetic
};

struct DataOptions {
    std::int64_t train_limit = 0;  // keep only the first N training samples (0 = all)
    std::int64_t test_limit = 0;   // keep only the first N test samples (0 = all)
    // synthetic only
    std::int64_t synthetic_train = 2048;
    std::int64_t synthetic_test = 512;
    std::uint64_t synthetic_seed = 20240601;
    // tables (csv:, tsv:): the column to predict, by name or number from 1 (--target)
    std::string target;
};

struct DatasetInfo {
    std::string spec;         // "fashion-mnist", "mnist", "idx:DIR", "synthetic"
    std::string description;  // one line for UIs
    bool available = false;   // probe result: can it be loaded now?
    std::string location;     // folder found (or "" / "generated")
    std::string detail;       // why not available and what to do, or a short summary when it is
    Message description_message;  // description and detail as translatable messages
    Message detail_message;       // (their english() is the two strings above)
    // What a model trained on it takes, when known (also for a named set that is not installed):
    Shape sample_shape;           // (C, H, W) or a table's (F); empty when unknown
    int num_classes = 0;
    std::size_t bytes = 0;        // RAM of both splits once loaded (samples and labels); 0 when unknown
    std::int64_t train_count = 0, test_count = 0;  // samples of each split, when available
};

struct Normalization {
    float mean = 0.0f;
    float stddev = 1.0f;
};

// Loads a dataset; throws InputError with what was searched and what to do when it is missing,
// damaged or the spec is unknown.
DatasetPair load_dataset(const std::string& spec, const DataOptions& options = {});

// The choices for UIs, with a one-line description each (not probed: available = false).
std::vector<DatasetInfo> known_datasets();

// Cheap check (reads only file headers and sizes; a table is read whole, once per file version): whether
// the spec can be loaded and from where. Never throws for a missing dataset; an unknown spec gives
// available = false with the valid choices. `target`: a table's class column (DataOptions::target).
DatasetInfo probe_dataset(const std::string& spec, const std::string& target = "");

// The deterministic synthetic dataset: sample i has label i % 10 and shows a bright Gaussian
// blob (sigma 2.5 px) placed on a circle of radius 8 px around the image centre at angle
// 2*pi*label/10, jittered by up to +-2 px, with a fainter second blob at the centre whose size
// also depends on the label, over uniform noise in [0, 48). The generator is std::mt19937_64
// seeded with `seed` (train) or `seed + 1` (test), using only its raw 64-bit output (portable).
// mean/std are computed from the generated images.
Dataset make_synthetic(const std::string& name, std::int64_t count, std::uint64_t seed);

// Mean and std of all pixels on the [0, 1] scale (float64 accumulation, population std).
Normalization compute_normalization(const Dataset& d);

// The published normalisation constants: fashion-mnist 0.2860/0.3530, mnist 0.1307/0.3081.
Normalization standard_normalization(const std::string& spec);

// Keeps the first `limit` samples (no-op for 0 or limit >= count).
void truncate_dataset(Dataset& d, std::int64_t limit);

const std::vector<std::string>& fashion_mnist_class_names();

}  // namespace hr
