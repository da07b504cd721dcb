#pragma once
// The harness of the dist tests: one Qt Test class per file, run by CTest as `mpirun -np N test_<name>`
// (tests/dist/CMakeLists.txt; the world sizes come from the file's "// ranks:" line). Every rank runs
// the whole class. Ranks fail together instead of one failing and the others hanging (DeepSpeed's
// allclose_on_all_ranks idea):
// - DIST_VERIFY(cond, what) reduces cond over the ranks first, so every rank takes the same branch and
//   fails the same check, naming the ranks where it was false;
// - DIST_GUARD(body) turns an exception on any rank into Communicator::abort_all (MPI_Abort ends every
//   rank at once and mpirun exits non-zero), since the others would wait in their next collective;
// - the communicator's timeout (60 s here) and mpirun --timeout bound whatever is left.
// Rank 0 prints the Qt Test log; the others run with -silent (failures only). Every rank exits with
// the largest failure count of all ranks.
#include <QtTest>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "dist/communicator.h"

namespace hrtest {

inline std::unique_ptr<hr::Communicator>& dist_comm_slot() {
    static std::unique_ptr<hr::Communicator> c;
    return c;
}
inline std::unique_ptr<hr::Backend>& dist_backend_slot() {
    static std::unique_ptr<hr::Backend> b;
    return b;
}
// The test's communicator: MPI when mpirun started the process, else a world of one.
inline hr::Communicator& comm() { return *dist_comm_slot(); }
// A one-thread CPU backend for the communicator's own use (tests make their own for training).
inline hr::Backend& comm_backend() { return *dist_backend_slot(); }

// Bit r set when rank r's `ok` is false (0: every rank agrees it holds).
inline std::uint64_t failing_ranks(bool ok) {
    hr::Communicator& c = comm();
    const double mask = c.all_reduce_value(ok ? 0.0 : static_cast<double>(1ull << std::min(c.rank(), 52)),
                                           hr::ReduceOp::sum);
    return static_cast<std::uint64_t>(mask);
}
inline QString ranks_text(std::uint64_t mask) {
    QStringList r;
    for (int i = 0; i < 53; ++i)
        if (mask & (1ull << i)) r << QString::number(i);
    return r.join(",");
}

}  // namespace hrtest

#define DIST_VERIFY(cond, what)                                                                             \
    do {                                                                                                    \
        const std::uint64_t hr_bad_ = ::hrtest::failing_ranks(static_cast<bool>(cond));                    \
        QVERIFY2(hr_bad_ == 0,                                                                              \
                 qPrintable(QString("%1 (%2) failed on rank(s) %3")                                         \
                                .arg(QString::fromStdString(std::string(what)), #cond, ::hrtest::ranks_text(hr_bad_)))); \
    } while (0)

#define DIST_GUARD(...)                                                                             \
    do {                                                                                            \
        try {                                                                                       \
            __VA_ARGS__                                                                             \
        } catch (const std::exception& hr_e_) {                                                     \
            std::fprintf(stderr, "rank %d: %s\n", ::hrtest::comm().rank(), hr_e_.what());           \
            std::fflush(stderr);                                                                    \
            ::hrtest::comm().abort_all(hr_e_.what());                                               \
            QFAIL(hr_e_.what()); /* world of one: abort_all returns */                              \
        }                                                                                           \
    } while (0)

#define HR_DIST_TEST_MAIN(TestClass)                                                                    \
    int main(int argc, char** argv) {                                                                   \
        ::hrtest::dist_backend_slot() = ::hr::make_cpu_backend(1, std::make_shared<::hr::MemoryLedger>()); \
        try {                                                                                           \
            if (::hr::rank_environment().launched)                                                      \
                ::hrtest::dist_comm_slot() = ::hr::make_mpi_communicator(60.0);                         \
            else                                                                                        \
                ::hrtest::dist_comm_slot() = ::hr::make_single_rank_communicator(::hrtest::comm_backend()); \
        } catch (const std::exception& e) {                                                             \
            std::fprintf(stderr, "cannot start the ranks: %s\n", e.what());                             \
            return 1;                                                                                   \
        }                                                                                               \
        std::vector<char*> args(argv, argv + argc);                                                     \
        static char silent[] = "-silent";                                                               \
        if (::hrtest::comm().rank() > 0) args.push_back(silent);                                        \
        int failed = 0;                                                                                 \
        {                                                                                               \
            TestClass t;                                                                                \
            failed = QTest::qExec(&t, static_cast<int>(args.size()), args.data());                     \
        }                                                                                               \
        failed = static_cast<int>(::hrtest::comm().all_reduce_value(failed, ::hr::ReduceOp::max));     \
        ::hrtest::dist_comm_slot().reset();                                                             \
        return failed;                                                                                  \
    }
