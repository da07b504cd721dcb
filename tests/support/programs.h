#pragma once
// Helpers of the tests that run programs (headroom, mpirun, python3) and compare what they write: the
// multi-rank, resume and interoperability tests each had a copy. Implemented in test_support.cpp.
#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <string>

namespace hrtest {

struct ProcessResult {
    int exit_code = -1;  // -1: crashed, or killed after the time-out
    QString output;      // stdout and stderr, merged
};
// Runs a program to its end in `cwd` (empty: this process's) with OMP_NUM_THREADS=1 (the ranks and the
// test share two cores).
ProcessResult run_program(const QString& program, const QStringList& args, const QString& cwd = QString(),
                          int timeout_ms = 180000);

// "" when two safetensors files hold the same tensors (names, dtypes, shapes) and every f32 tensor of `a`
// is within `tolerance` of `reference`'s, relative to the reference tensor's largest value (0: bit for
// bit, any dtype); else what differs first. *worst (may be null) receives the largest relative difference.
QString compare_weights(const std::string& a, const std::string& reference, double tolerance, double* worst = nullptr);

// The JSON document in a file (run.json, a checkpoint's); throws when it is not one.
nlohmann::json read_json(const std::string& path);

}  // namespace hrtest
