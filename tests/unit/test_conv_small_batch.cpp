// A convolution layer's workspace is sized once for the planned batch, and the run also feeds it smaller
// batches: the last batch of an epoch (500 rows at 128: 116; Fashion-MNIST's 60000: 96) and evaluation's.
// On the CPU, oneDNN runs a smaller batch in other chunk sizes, with other scratchpads and weight copies
// (cpu_conv_dnnl.cpp, dnnl_conv_workspace_bytes): the figure for batch B must hold every n <= B, and be
// exactly the most of them, so the planner and the ledger stay equal.
#include <QtTest/QtTest>

#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_conv_dnnl.h"
#include "nn/model_spec.h"
#include "plan/plan_request.h"
#include "plan/planner.h"
#include "train/trainer.h"

using namespace hr;

namespace {

Tensor filled(Backend& be, const Shape& s, std::uint64_t seed) {
    Tensor t = Tensor::empty(be.allocator(), s, DType::f32, MemCategory::other);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(g);
    return t;
}

// resnet-mini's convolutions on 28x28 inputs that oneDNN runs (16-channel multiples)
struct Case {
    const char* name;
    std::int64_t C, K, H, k, stride, pad;
};
const Case kCases[] = {
    {"16-16 28x28", 16, 16, 28, 3, 1, 1},   {"16-32 28x28 /2", 16, 32, 28, 3, 2, 1},
    {"32-32 14x14", 32, 32, 14, 3, 1, 1},   {"32-64 14x14 /2", 32, 64, 14, 3, 2, 1},
    {"64-64 7x7", 64, 64, 7, 3, 1, 1},      {"16-32 1x1 /2", 16, 32, 28, 1, 2, 0},
};

}  // namespace

class ConvSmallBatchTest : public QObject {
    Q_OBJECT

private slots:
    void workspaceForTheBatchServesSmallerBatches_data() {
        QTest::addColumn<int>("index");
        for (int i = 0; i < int(std::size(kCases)); ++i) QTest::newRow(kCases[i].name) << i;
    }
    // The workspace asked for at batch 128 is the most any n <= 128 asks for, and the convolutions at the
    // batch sizes a run feeds (the last batches 116 and 96, small ones, the chunk boundaries) run in it.
    void workspaceForTheBatchServesSmallerBatches() {
        QFETCH(int, index);
        const Case c = kCases[index];
        CpuBackend be(2, nullptr);
        Conv2dParams p;
        p.stride_h = p.stride_w = c.stride;
        p.pad_h = p.pad_w = c.pad;
        const std::int64_t Ho = (c.H + 2 * c.pad - c.k) / c.stride + 1;
        const std::int64_t B = 128;
        auto shapes = [&](std::int64_t n) {
            return std::array<Shape, 3>{Shape{n, c.C, c.H, c.H}, Shape{c.K, c.C, c.k, c.k}, Shape{n, c.K, Ho, Ho}};
        };
        auto bytes = [&](std::int64_t n) {
            const auto s = shapes(n);
            return be.conv2d_workspace_bytes(s[0], s[1], s[2], p, DType::f32);
        };
        const std::size_t planned = bytes(B);
        std::size_t most = 0;
        for (std::int64_t n = 1; n <= B; ++n) {
            const std::size_t b = bytes(n);
            QVERIFY2(b <= planned, qPrintable(QString("batch %1 asks %2 bytes, batch %3 only %4").arg(n).arg(b).arg(B).arg(planned)));
            most = std::max(most, b);
        }
        QCOMPARE(planned, most);
        Tensor work = Tensor::empty(be.allocator(), {std::int64_t(planned)}, DType::u8, MemCategory::workspace);
        std::memset(work.data<std::uint8_t>(), 0xff, planned);
        for (std::int64_t n : {std::int64_t(116), std::int64_t(96), std::int64_t(100), std::int64_t(127), std::int64_t(33),
                               std::int64_t(17), std::int64_t(16), std::int64_t(15), std::int64_t(7), std::int64_t(5),
                               std::int64_t(3), std::int64_t(1), B}) {
            const auto s = shapes(n);
            Tensor x = filled(be, s[0], 1), w = filled(be, s[1], 2), b = filled(be, {c.K}, 3), dy = filled(be, s[2], 4);
            Tensor y = filled(be, s[2], 5), dx = filled(be, s[0], 6), dw = filled(be, s[1], 7), db = filled(be, {c.K}, 8);
            try {
                be.conv2d_forward(x, w, b, y, p, work);
                be.conv2d_backward_data(dy, w, dx, p, work);
                be.conv2d_backward_filter(x, dy, dw, db, p, work);
                be.conv2d_backward(x, dy, w, dx, dw, db, p, work);
            } catch (const std::exception& e) {
                QFAIL(qPrintable(QString("batch %1 in the workspace of batch %2: %3").arg(n).arg(B).arg(e.what())));
            }
        }
    }

    // resnet-mini through the trainer, 500 rows at batch 128 (the last batch 116, for training and for
    // evaluation): it finishes, and the ledger's workspace is the planner's.
    void resnetMiniLastBatchSmaller() {
        TrainConfig c;
        c.model = preset_model("resnet-mini");
        c.data = "synthetic";
        c.train_limit = 500;
        c.test_limit = 500;
        c.batch = 128;
        c.epochs = 1;
        c.threads = 2;
        c.device = "cpu";
        const TrainResult r = Trainer(c).run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QCOMPARE(r.steps, std::int64_t(4));
        const MemoryPlan plan = predict_memory(plan_request(c, 500, 500));
        QVERIFY(at(r.ledger.peak, MemCategory::workspace) > 0);
        QCOMPARE(at(r.ledger.peak, MemCategory::workspace), at(plan.device, MemCategory::workspace));
    }
};

QTEST_APPLESS_MAIN(ConvSmallBatchTest)
#include "test_conv_small_batch.moc"
