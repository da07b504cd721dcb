// The CUDA backend's logic that needs no GPU, on the CPU: how cuDNN algorithms are ranked (the full
// batch's choice for a smaller batch, the workspace limit, FMA-only strict f32, the fallback order),
// the sizes fixed at setup (cuBLAS workspace per compute capability, the op scratch), and the module
// loader (what `headroom devices` says when the module, its libraries, a driver or a device are
// missing), including that the program itself links no CUDA library; whether a driver and a GPU can run
// the module (driver versions and compute capabilities as a machine would report them).
#include <QtTest>
#include "test_support.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "backend/cuda_compat.h"
#include "backend/cuda/conv_choice.h"
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/cuda_sizes.h"
#include "base/error.h"

using namespace hr;
using namespace hr::cuda;

namespace {

HeuristicResult h(int algo, std::size_t ws, ConvMath math, bool det = true, bool supported = true) {
    HeuristicResult r;
    r.algo = algo;
    r.workspace = ws;
    r.reported_math = math;
    r.math_code = math == ConvMath::fma ? 2 : math == ConvMath::tensor_op ? 1 : 0;
    r.deterministic = det;
    r.supported = supported;
    return r;
}

std::vector<int> algos(const std::vector<ConvCandidate>& v) {
    std::vector<int> a;
    for (const auto& c : v) a.push_back(c.algo);
    return a;
}

std::string run_output(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return out;
    char buf[512];
    while (fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
    return out;
}

}  // namespace

class CudaLogicTest : public QObject {
    Q_OBJECT

private slots:
    void rankingKeepsTheOrderAndTheLimit() {
        ChoiceRules rules;
        rules.limit = 1000;
        rules.deterministic = true;
        const std::vector<HeuristicResult> found = {
            h(6, 500, ConvMath::tensor_op, false),  // best, not deterministic
            h(1, 2000, ConvMath::tensor_op),        // over the limit
            h(2, 100, ConvMath::tensor_op, true, false),  // not supported
            h(0, 0, ConvMath::tensor_op),
            h(5, 800, ConvMath::tensor_op),
            h(0, 0, ConvMath::tensor_op),  // the same (algorithm, math) twice: kept once
        };
        QCOMPARE(algos(rank_candidates(found, rules)), (std::vector<int>{0, 5, 6}));
        rules.deterministic = false;
        QCOMPARE(algos(rank_candidates(found, rules)), (std::vector<int>{6, 0, 5}));
        rules.limit = 600;
        QCOMPARE(algos(rank_candidates(found, rules)), (std::vector<int>{6, 0}));
    }

    void strictF32AcceptsFmaMathOnly() {
        // CUDNN_DEFAULT_MATH allows TF32 on sm_80+: strict f32 must not take it (defect 5)
        ChoiceRules rules;
        rules.fma_only = true;
        const std::vector<HeuristicResult> found = {h(1, 0, ConvMath::default_math), h(2, 0, ConvMath::tensor_op),
                                                    h(3, 0, ConvMath::fma), h(4, 0, ConvMath::default_math)};
        QCOMPARE(algos(rank_candidates(found, rules)), (std::vector<int>{3}));
        rules.fma_only = false;
        QCOMPARE(algos(rank_candidates(found, rules)), (std::vector<int>{1, 2, 3, 4}));
        QVERIFY(rank_candidates({h(1, 0, ConvMath::tensor_op)}, ChoiceRules{1000, true, true}).empty());
    }

    void smallerBatchKeepsTheFullBatchChoice() {
        // the last batch of an epoch: the full batch ran algorithm 5; cuDNN's heuristics now rank 7
        // first (it needs more workspace than was planned): 5 stays first when allowed (defect 1)
        ChoiceRules rules;
        const std::vector<HeuristicResult> found = {h(7, 300 << 20, ConvMath::tensor_op), h(0, 0, ConvMath::tensor_op),
                                                    h(5, 1 << 20, ConvMath::tensor_op)};
        ConvCandidate full{5, 1, 4 << 20, true};
        QCOMPARE(algos(rank_candidates(found, rules, full)), (std::vector<int>{5, 0}));  // 7 is over 256 MiB anyway
        ConvCandidate gone{9, 1, 0, true};  // not offered for this batch: the ranking as usual
        QCOMPARE(algos(rank_candidates(found, rules, gone)).front(), 0);
        ConvCandidate other_math{5, 2, 0, true};  // the same algorithm with another math type is another choice
        QCOMPARE(algos(rank_candidates(found, rules, other_math)), (std::vector<int>{0, 5}));
    }

    void executionFailuresMoveOn() {
        QVERIFY(is_execution_failure(3000));  // CUDNN_STATUS_NOT_SUPPORTED
        QVERIFY(is_execution_failure(4000));  // CUDNN_STATUS_INTERNAL_ERROR
        QVERIFY(is_execution_failure(5000));  // CUDNN_STATUS_EXECUTION_FAILED
        QVERIFY(is_execution_failure(5003));
        QVERIFY(!is_execution_failure(0));     // success
        QVERIFY(!is_execution_failure(2000));  // CUDNN_STATUS_BAD_PARAM: ours, reported
    }

    void sizesFixedAtSetup() {
        QCOMPARE(cuda_sizes::cublas_workspace_bytes_for(9, 0), std::size_t(32) << 20);   // Hopper
        QCOMPARE(cuda_sizes::cublas_workspace_bytes_for(10, 0), std::size_t(32) << 20);  // and later
        QCOMPARE(cuda_sizes::cublas_workspace_bytes_for(8, 0), std::size_t(4) << 20);    // Ampere
        QCOMPARE(cuda_sizes::cublas_workspace_bytes_for(8, 9), std::size_t(4) << 20);    // Ada
        // the scratch's regions do not overlap and hold what the kernels put there
        using namespace cuda_sizes;
        QVERIFY(kOffReduce >= kOffResult + kResultBytes);
        QVERIFY(kOffChannelPartials >= kOffReduce + 3 * kReduceBlocks * sizeof(double));
        QVERIFY(kOffChannelCoef >= kOffChannelPartials + std::size_t(kChannelPartials) * 2 * sizeof(double));
        QVERIFY(kOffBounce >= kOffChannelCoef + std::size_t(kChannelPartials) * 4 * sizeof(float));
        QCOMPARE(kOpScratchBytes, kOffBounce + kBounceBytes);
        QCOMPARE(backend_fixed_bytes(9, 0), (std::size_t(32) << 20) + kOpScratchBytes);
        QCOMPARE(backend_fixed_bytes(8, 0, 1 << 20), (std::size_t(1) << 20) + kOpScratchBytes);
    }

    void loaderSaysWhatIsMissing() {
        const std::string dir = QDir::tempPath().toStdString() + "/hr-cuda-loader-" + std::to_string(getpid());
        std::filesystem::create_directories(dir);
        // no file
        CudaStatus s = cuda_probe_module(dir + "/libheadroom_cuda.so");
        QCOMPARE(int(s.state), int(CudaStatus::State::module_missing));
        QVERIFY2(s.reason.find(dir + "/libheadroom_cuda.so") != std::string::npos, s.reason.c_str());
        QVERIFY2(s.reason.find("headroom-cuda") != std::string::npos, s.reason.c_str());
        // a file that is not a library: dlopen's own words
        const std::string junk = dir + "/junk.so";
        std::ofstream(junk) << "not a shared object";
        s = cuda_probe_module(junk);
        QCOMPARE(int(s.state), int(CudaStatus::State::libraries_missing));
        QVERIFY2(s.reason.find("does not load: ") != std::string::npos, s.reason.c_str());
        QVERIFY2(s.reason.find(junk) != std::string::npos, s.reason.c_str());
        // a real library that is not a Headroom module
        std::string libz;
        for (const char* p : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib64/libz.so.1"})
            if (std::filesystem::exists(p)) libz = p;
        if (!libz.empty()) {
            s = cuda_probe_module(libz);
            QCOMPARE(int(s.state), int(CudaStatus::State::module_mismatch));
            QVERIFY2(s.reason.find("not a Headroom CUDA module") != std::string::npos, s.reason.c_str());
        }
        std::filesystem::remove_all(dir);
    }

    void thisProcessSaysWhyCudaIsOrIsNotThere() {
        // ctest points HEADROOM_CUDA_MODULE at the build tree's module (cmake/Cuda.cmake)
        const char* env = std::getenv("HEADROOM_CUDA_MODULE");
        const CudaStatus s = cuda_status();
        qInfo("cuda_status: %s: %s (module %s)", cuda_state_name(s.state), s.reason.c_str(), s.module_path.c_str());
        if (env && !std::filesystem::exists(env)) {  // a build without the module (-DHEADROOM_WITH_CUDA=OFF)
            QCOMPARE(int(s.state), int(CudaStatus::State::module_missing));
            QCOMPARE(cuda_device_count(), 0);
        }
        if (env && std::filesystem::exists(env)) {
            QCOMPARE(s.module_path, std::string(env));
            QVERIFY2(s.state == CudaStatus::State::available || s.state == CudaStatus::State::no_driver ||
                         s.state == CudaStatus::State::driver_too_old ||
                         s.state == CudaStatus::State::no_device || s.state == CudaStatus::State::libraries_missing,
                     s.reason.c_str());
        }
        if (s.state == CudaStatus::State::available) {
            QVERIFY(cuda_device_count() > 0);
            QVERIFY(s.reason.empty());
            return;
        }
        QCOMPARE(cuda_device_count(), 0);
        QVERIFY(cuda_devices().empty());
        QVERIFY(!s.reason.empty());
        QCOMPARE(cuda_unavailable_reason(), s.reason);
        QVERIFY2(cuda_versions().rfind("not available: " + s.reason, 0) == 0, cuda_versions().c_str());
        try {
            make_cuda_backend(0, nullptr);
            QFAIL("expected InputError without CUDA");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find(s.reason) != std::string::npos, e.what());
            QVERIFY2(std::string(e.what()).find("use --device cpu") != std::string::npos, e.what());
        }
    }

    void programsLinkNoCudaLibrary() {
        // headroom_core loads CUDA only through the module: this test (which links headroom_core) and
        // the program must start on a machine without the CUDA libraries
        std::vector<std::string> files = {"/proc/self/exe"};
        const std::string program = hrtest::binary_path("headroom");
        if (std::filesystem::exists(program)) files.push_back(program);
        for (const auto& f : files) {
            const std::string deps = run_output("ldd " + f + " 2>&1");
            QVERIFY2(!deps.empty(), ("ldd gave nothing for " + f).c_str());
            for (const char* lib : {"libcudart", "libcublas", "libcudnn", "libcuda.so"})
                QVERIFY2(deps.find(lib) == std::string::npos, (f + " links " + lib + ":\n" + deps).c_str());
        }
    }

    void driverOlderThanTheRuntimeIsSaidExactly() {
        // r550 supports CUDA 12.4; a CUDA 13.0 module needs r580
        const auto m = cuda_driver_mismatch(12040, 13000);
        QVERIFY(m.has_value());
        const std::string text = m->english();
        QVERIFY2(text.find("supports CUDA 12.4") != std::string::npos, text.c_str());
        QVERIFY2(text.find("built with CUDA 13.0") != std::string::npos, text.c_str());
        QVERIFY2(text.find("r580") != std::string::npos, text.c_str());
        QVERIFY2(text.find("--device cpu") != std::string::npos, text.c_str());
        QCOMPARE(m->id, std::string("cuda.driver_too_old"));
        // CUDA's minor-version compatibility: a 12.2 driver runs a 12.8 runtime; a newer driver runs anything
        QVERIFY(!cuda_driver_mismatch(12020, 12080));
        QVERIFY(!cuda_driver_mismatch(13000, 13000));
        QVERIFY(!cuda_driver_mismatch(13020, 13000));
        QVERIFY(!cuda_driver_mismatch(0, 13000));  // no driver at all is "no driver", said elsewhere
        QCOMPARE(cuda_version_text(12080), std::string("12.8"));
        QCOMPARE(cuda_min_driver_branch(12), 525);
        QCOMPARE(cuda_min_driver_branch(11), 450);
    }

    void builtArchitecturesCoverTheGpuOrSaySo() {
        const std::string release = "80-real;86-real;89-real;90";
        for (auto [maj, min] : {std::pair{8, 0}, {8, 6}, {8, 7}, {8, 9}, {9, 0}, {10, 0}, {12, 0}})
            QVERIFY2(cuda_archs_cover(release, maj, min), (std::to_string(maj) + "." + std::to_string(min)).c_str());
        QVERIFY(!cuda_archs_cover(release, 7, 5));  // Turing: no machine code and PTX only for 9.0+
        QVERIFY(!cuda_archs_cover("80-real", 9, 0));   // machine code runs within its major version only
        QVERIFY(cuda_archs_cover("80", 9, 0));         // its PTX is compiled by the driver for later GPUs
        QVERIFY(!cuda_archs_cover("86-real", 8, 0));   // ... and not on an earlier minor version
        QVERIFY(!cuda_archs_cover("90-virtual", 8, 9));
        QVERIFY(cuda_archs_cover("90-virtual", 9, 0));
        QVERIFY(cuda_archs_cover("90a-real", 9, 0));
        QVERIFY(!cuda_archs_cover("90a", 10, 0));      // architecture-specific code has no portable PTX
        QVERIFY(!cuda_archs_cover("", 9, 0));
        QVERIFY(cuda_archs_cover("native", 9, 0));     // unresolved keywords: the kernel-image probe decides
        QVERIFY(cuda_archs_cover("unknown", 12, 0));
        QVERIFY(!cuda_archs_cover("junk;;x-real", 9, 0));
        const std::string text = cuda_arch_missing("Tesla T4", 7, 5, release).english();
        QVERIFY2(text.find("Tesla T4 has compute capability 7.5") != std::string::npos, text.c_str());
        QVERIFY2(text.find(release) != std::string::npos, text.c_str());
        QVERIFY2(text.find("-DHEADROOM_CUDA_ARCHS=75") != std::string::npos, text.c_str());
    }

    void moduleNeedsNoCudaRuntimeLibrary() {
        // the runtime is linked into the module: a machine needs the driver, cuBLAS and cuDNN only
        const char* env = std::getenv("HEADROOM_CUDA_MODULE");
        if (!env || !std::filesystem::exists(env)) QSKIP("this build has no CUDA module (-DHEADROOM_WITH_CUDA=OFF)");
        const std::string deps = run_output(std::string("readelf -d ") + env + " 2>&1");
        QVERIFY2(deps.find("NEEDED") != std::string::npos, deps.c_str());
        QVERIFY2(deps.find("libcudart") == std::string::npos, ("the module links libcudart:\n" + deps).c_str());
        QVERIFY2(deps.find("libcublas") != std::string::npos, deps.c_str());
    }
};

QTEST_APPLESS_MAIN(CudaLogicTest)
#include "test_cuda_logic.moc"
