// The CUDA backend's claim of what it runs (Backend::supports, nn/backend_ops.h): every op family in f32,
// bf16 and f16, none in f64; and the claim is true of its ops (an f64 op is refused).
#include <QtTest>

#include "backend/backend.h"
#include "base/error.h"
#include "nn/backend_ops.h"
#include "train/device.h"

using namespace hr;

class CudaSupportsTest : public QObject {
    Q_OBJECT

private slots:
    void gpuSaysWhatItRuns() {
        if (cuda_device_count() < 1) QSKIP("no GPU here: the CUDA backend's claims are checked on a GPU machine");
        auto be = make_backend("cuda:0", 0, std::make_shared<MemoryLedger>(), false, nullptr);
        for (const std::string& op : backend_op_names()) {
            QVERIFY(be->supports(op, DType::f32) && be->supports(op, DType::bf16) && be->supports(op, DType::f16));
            QVERIFY(!be->supports(op, DType::f64));
        }
        // the claim is true of the ops: f64 on the GPU is refused, f32 runs
        Tensor a = Tensor::empty(be->allocator(), {4}, DType::f64, MemCategory::other);
        QVERIFY_THROWS_EXCEPTION(Error, be->fill(a, 1.0));
    }
};

QTEST_GUILESS_MAIN(CudaSupportsTest)
#include "test_cuda_supports.moc"
