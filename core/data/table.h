#pragma once
// Tables: CSV (RFC 4180) and TSV files whose first row names the columns, one column the class to
// predict (--target COLUMN) and every other column a number. `csv:FILE` reads commas, `tsv:FILE` tabs.
//
// Reading: fields may be quoted ("a, b" and "say ""hi""" as RFC 4180), records end with LF or CRLF, a
// UTF-8 byte-order mark and blank lines are skipped, spaces around a number are allowed. Every problem
// is an InputError naming the file, the row (1 = the header) and the column: a row with another number
// of fields than the header, a missing or non-numeric or non-finite value, an unterminated quote, a
// target that is not a column, a target with fewer than 2 or more than kMaxTableClasses values (a
// regression target: Headroom trains classifiers).
//
// Classes: the target's distinct values, in numeric order when all are numbers, else in byte order;
// class k is the k-th of them. Split: a fifth of the rows (at least one) is the test set, chosen by a
// Fisher-Yates shuffle of the row numbers driven by std::mt19937_64(kTableSplitSeed) with an unbiased
// rejection draw (the same rows on every platform); both splits keep the file's order. Features: each
// column standardised with the training rows' mean and population standard deviation (a constant
// column by 1), as scikit-learn's StandardScaler, stored as f32 in Dataset::features (sample shape (F)).
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace hr {

constexpr int kMaxTableClasses = 1000;
constexpr std::uint64_t kMaxTableBytes = std::uint64_t{1} << 30;  // 1 GiB of text
constexpr std::int64_t kMaxTableColumns = 100'000;
constexpr std::uint64_t kTableSplitSeed = 20240601;

bool is_table_data(const std::string& spec);  // "csv:..." or "tsv:..."

struct TableSummary {
    std::vector<std::string> columns;  // from the header
    std::int64_t rows = 0;             // data rows
    int target_column = -1;            // index into columns
    std::vector<std::string> classes;  // the target's values, in class order
    std::vector<std::int64_t> test_rows;  // the data rows (from 0) of the test set, in file order
    // each feature column's training-row mean and population standard deviation (1 for a constant column):
    // the features are (value - mean) / std (the ONNX export bakes them into its graph)
    std::vector<double> feature_mean, feature_std;
};

// Reads and checks the table of `spec` ("csv:FILE", "tsv:FILE") with `target` as the class column
// (a column name, or its number from 1 when no column has that name). name: the pair's name.
DatasetPair load_table(const std::string& spec, const std::string& target, TableSummary* summary = nullptr);

// The column names of the table of `spec` (its first record; reads at most the first MiB): for a choice of
// the target. Throws InputError as load_table for a file that cannot be read.
std::vector<std::string> read_table_columns(const std::string& spec);

// The same reading of a table held in memory (`what` names it in messages): for tests and the fuzzer.
DatasetPair parse_table(const std::string& text, char delimiter, const std::string& target, const std::string& what,
                        TableSummary* summary = nullptr);

}  // namespace hr
