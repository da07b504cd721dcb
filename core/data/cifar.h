#pragma once
// CIFAR-10 in its binary format (https://www.cs.toronto.edu/~kriz/cifar.html, cifar-10-binary.tar.gz,
// which unpacks into cifar-10-batches-bin/): data_batch_1.bin … data_batch_5.bin (training) and
// test_batch.bin, each a run of 3,073-byte records: one label byte (0…9), then the 32x32 image as
// 1,024 red, 1,024 green and 1,024 blue bytes, each plane row-major. batches.meta.txt names the ten
// classes one a line (read when present, else the published names).
//
// A dataset here keeps the stored layout, (N, 3, 32, 32) u8, which is the (C, H, W) the models take.
// Checks: a batch file must be a whole number of records (at least one) and every label below 10; a
// folder must hold all six batch files. Each problem is an InputError naming the file, the record and
// what to do.
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace hr {

constexpr std::int64_t kCifarImageBytes = 3 * 32 * 32;
constexpr std::int64_t kCifarRecordBytes = 1 + kCifarImageBytes;
// Largest batch file read: ten times the published 10,000 records (a typo cannot pull in a disk image).
constexpr std::uint64_t kCifarMaxBatchBytes = std::uint64_t{100'000} * kCifarRecordBytes;

struct CifarFiles {
    std::vector<std::string> train;  // data_batch_1.bin … data_batch_5.bin, the ones found
    std::string test;                // test_batch.bin, or ""
    std::string meta;                // batches.meta.txt, or ""
    std::vector<std::string> missing;
};

// The files of a cifar-10-batches-bin folder.
CifarFiles find_cifar_files(const std::string& dir);

// Appends the records of one batch file to d (images and labels; d.count follows).
void read_cifar_batch(const std::string& path, Dataset& d);

// The class names of batches.meta.txt (ten non-empty lines; blank lines after them are ignored), or
// the published names when `path` is "".
std::vector<std::string> read_cifar_class_names(const std::string& path);

// The six batch files of `dir` as a train/test pair named `name` ("cifar10", "cifar10:DIR"); the
// normalisation is that of all training pixels (compute_normalization).
DatasetPair load_cifar_dir(const std::string& dir, const std::string& name);

// Records a batch file holds, from its size (throws as read_cifar_batch would for a bad size).
std::int64_t cifar_batch_records(const std::string& path);

const std::vector<std::string>& cifar10_class_names();

}  // namespace hr
