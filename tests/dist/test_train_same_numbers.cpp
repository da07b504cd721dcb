// ranks: none
// No number changes on ranks (issue 44; the one-process cases: tests/unit/test_same_numbers.cpp):
// `headroom train --ranks 2` with zero3, 2 pipeline stages and a head split over 2 ranks, and (issue 55)
// `--ranks 4` with 2 stages x 2 data-parallel replicas (K x D) and 2 stages x a head split over 2 (K x T), on one thread
// per rank with the CPU's reference kernels and no oneDNN (HEADROOM_CPU_KERNELS=reference and
// HEADROOM_CPU_CONV=tap in this process's environment, which the launcher's mpirun hands to every rank:
// with =avx2 instead the zero3 weights differ, so the pin does reach the ranks),
// end with exactly the weights (model.safetensors: FNV-1a of every tensor's name and bytes, in name order)
// and final figures (run.json's train and test loss and accuracy) recorded on the code before the
// trainer's step was split into runners (545018e).
#include <QtTest>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "dist/communicator.h"
#include "io/safetensors.h"
#include "programs.h"
#include "same_numbers.h"
#include "test_support.h"

using namespace hr;

namespace {

const QString kHeadroom = hrtest::qbinary_path("headroom");

using hr_test::Fnv;
using hr_test::weights_hash;

std::uint64_t figures_hash(const std::string& run_json) {
    const nlohmann::json j = hrtest::read_json(run_json);
    Fnv h;
    for (const char* k : {"train_loss", "train_accuracy", "test_loss", "test_accuracy"})
        h.number(j["final"][k].get<double>());
    return h.h;
}

}  // namespace

class TrainSameNumbersTest : public QObject {
    Q_OBJECT
    std::string m_dir;

private slots:
    void initTestCase() {
        if (QString(HR_MPIEXEC).isEmpty() || !mpi_built()) QSKIP("no mpirun or no MPI support in this build");
        if (!QFileInfo::exists(kHeadroom)) QSKIP("the headroom binary is not built");
        qputenv("HEADROOM_CPU_KERNELS", "reference");
        qputenv("HEADROOM_CPU_CONV", "tap");
        // OpenBLAS picks its kernels by CPU, and they differ in the last bits (Prescott's SSE3 ones change
        // every hash below): pinned to its AVX2 kernels, which any x86-64 machine CI runs on has and which
        // give the bits recorded here (checked equal to this machine's own Cooperlake kernels at 545018e).
        qputenv("OPENBLAS_CORETYPE", "Haswell");
        m_dir = hrtest::temp_dir("hr-same-numbers-ranks");
    }

    void sameWeightsOnRanks_data() {
        QTest::addColumn<QStringList>("layout");
        QTest::addColumn<quint64>("weights");
        QTest::addColumn<quint64>("figures");
        // recorded at 545018e (before the step runners)
        QTest::newRow("zero3") << QStringList{"--ranks", "2", "--shard", "zero3"} << quint64(0x64de5232bd6e22c5ull)
                               << quint64(0x20b52a6b868084b6ull);
        QTest::newRow("pipeline 2") << QStringList{"--ranks", "2", "--pipeline", "2", "--accumulate", "2"} << quint64(0x28c69cbfd9e005c7ull)
                                    << quint64(0xfd7400e9fa74f730ull);
        QTest::newRow("split head 2") << QStringList{"--ranks", "2", "--tp-head", "2"} << quint64(0x10cf75ccddbc8c92ull)
                                      << quint64(0x2261c7e2bb543ba6ull);
        // recorded at 530b3a7 (issue 55): 2 pipeline stages x 2 data-parallel replicas (K x D) and 2 stages
        // x a head split over 2 ranks (K x T), 4 ranks each
        QTest::newRow("pipeline 2 x dp 2") << QStringList{"--ranks", "4", "--pipeline", "2", "--shard", "dp", "--accumulate", "2"}
                                           << quint64(0x564e20c46c2bd0eaull) << quint64(0x610eb4410a6f0f28ull);
        QTest::newRow("pipeline 2 x split head 2") << QStringList{"--ranks", "4", "--pipeline", "2", "--tp-head", "2", "--accumulate", "2"}
                                                   << quint64(0xa97c53a9c317b309ull) << quint64(0x6734886a2b4502beull);
    }

    void sameWeightsOnRanks() {
        QFETCH(QStringList, layout);
        QFETCH(quint64, weights);
        QFETCH(quint64, figures);
        const QString work = QString::fromStdString(m_dir) + "/" + QTest::currentDataTag();
        std::filesystem::create_directories(work.toStdString());
        QStringList args{"train", "--preset", "seed-cnn", "--data", "synthetic", "--train-limit", "64",
                         "--test-limit", "32", "--batch", "16", "--steps", "3", "--threads", "1", "--seed", "5",
                         "--device", "cpu", "--lr", "0.05", "--out", work + "/out", "--db", work + "/history.db",
                         "--quiet"};
        args << layout;
        const hrtest::ProcessResult r = hrtest::run_program(kHeadroom, args, work, 180000);
        QVERIFY2(r.exit_code == 0, qPrintable(r.output));
        const std::uint64_t w = weights_hash((work + "/out/model.safetensors").toStdString());
        const std::uint64_t f = figures_hash((work + "/out/run.json").toStdString());
        qInfo("%s: weights 0x%016llx figures 0x%016llx", QTest::currentDataTag(), static_cast<unsigned long long>(w),
              static_cast<unsigned long long>(f));
        QCOMPARE(quint64(w), weights);
        QCOMPARE(quint64(f), figures);
    }
};

QTEST_GUILESS_MAIN(TrainSameNumbersTest)
#include "test_train_same_numbers.moc"
