// The CPU backend's GEMM against OpenBLAS called directly (core/backend/cpu/blas.cpp, issue 46 item 7):
// cpu::sgemm cuts a call over many rows into pieces so that OpenBLAS's packing buffer does not become
// resident in proportion to the rows (the batch). Two checks, each against something outside that code:
// - the numbers: every element of C equals, to the bit, one cblas_sgemm call over all the rows (OpenBLAS
//   loaded here with dlopen, the same library and kernels), for both transposes, alpha and beta, shapes
//   the layers use (mlp's backward data, a transformer's projections) and odd ones;
// - the memory: the operating system's view (VmRSS in /proc/self/status) grows by less than 4 MB over the
//   operands during a cpu::sgemm of 16384 rows at k = 256, while one direct OpenBLAS call of those shapes
//   (afterwards, the packing buffer is reused) grows by more than 12 MB (about 1 KB a row): the test can
//   see what it guards against.
#include <QtTest>

#include <dlfcn.h>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/blas.h"

namespace {

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);

SgemmFn direct_sgemm() {
    hr::cpu::blas_description();  // the backend loads OpenBLAS first (and sets its kernels' core type)
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libopenblas.so", RTLD_NOW | RTLD_LOCAL);
    return h ? reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm")) : nullptr;
}

void direct(SgemmFn f, bool ta, bool tb, int m, int n, int k, float alpha, const float* a, const float* b, float beta,
            float* c) {
    f(101, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, a, ta ? m : k, b, tb ? k : n, beta, c, n);
}

double resident_bytes() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
    return -1;
}

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(g);
    return v;
}

}  // namespace

class BlasRowsTest : public QObject {
    Q_OBJECT

private slots:
    // first: before any other call makes OpenBLAS's buffer resident
    void residentMemoryBoundedInRows() {
        const SgemmFn f = direct_sgemm();
        QVERIFY(f);
        const int m = 16384, n = 784, k = 256;  // k = 256: OpenBLAS packs 1 KB a row of C
        const auto a = random_floats(std::size_t(m) * k, 4), b = random_floats(std::size_t(n) * k, 5);
        std::vector<float> c(std::size_t(m) * n, 1.f);  // every operand resident before the calls
        const double r0 = resident_bytes();
        hr::cpu::sgemm(false, false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n);
        const double r1 = resident_bytes();
        direct(f, false, false, m, n, k, 1.f, a.data(), b.data(), 0.f, c.data());
        const double r2 = resident_bytes();
        qInfo("resident memory: cpu::sgemm %+.0f bytes, then one OpenBLAS call %+.0f bytes", r1 - r0, r2 - r1);
        QVERIFY(r0 > 0);
        QVERIFY2(r1 - r0 < 4e6, qPrintable(QString::number(r1 - r0)));
        QVERIFY2(r2 - r1 > 12e6, qPrintable(QString::number(r2 - r1)));
    }

    void sameBitsAsOneCall_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("k");
        QTest::newRow("mlp backward data") << 8192 << 256 << 128;
        QTest::newRow("mlp first layer") << 8192 << 256 << 784;
        QTest::newRow("784 from 256") << 8192 << 784 << 256;
        QTest::newRow("projection") << 4100 << 768 << 768;
        QTest::newRow("odd") << 20011 << 37 << 333;
        QTest::newRow("narrow") << 70001 << 10 << 128;
    }

    void sameBitsAsOneCall() {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(int, k);
        const SgemmFn f = direct_sgemm();
        QVERIFY(f);
        const auto a = random_floats(std::size_t(m) * k, 1), b = random_floats(std::size_t(n) * k, 2),
                   c0 = random_floats(std::size_t(m) * n, 3);
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (float alpha : {1.f, 0.5f})
                    for (float beta : {0.f, 1.f}) {
                        std::vector<float> mine = c0, ref = c0;
                        hr::cpu::sgemm(ta, tb, m, n, k, alpha, a.data(), ta ? m : k, b.data(), tb ? k : n, beta,
                                       mine.data(), n);
                        direct(f, ta, tb, m, n, k, alpha, a.data(), b.data(), beta, ref.data());
                        const QString which =
                            QStringLiteral("ta %1 tb %2 alpha %3 beta %4").arg(ta).arg(tb).arg(alpha).arg(beta);
                        QVERIFY2(std::memcmp(mine.data(), ref.data(), mine.size() * sizeof(float)) == 0,
                                 qPrintable(which));
                    }
    }
};

QTEST_GUILESS_MAIN(BlasRowsTest)
#include "test_blas_rows.moc"
