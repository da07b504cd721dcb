// What a model needs of a backend is asked at setup (nn/backend_ops.h, Backend::supports): a backend that
// lacks an op a model runs is refused when the training state is built, with one message naming the op,
// the dtype and the layer, and nothing of the model is allocated. The table covers every layer of the
// catalog; the CPU backend runs every op family in every float dtype (the GPU's claim: tests/cuda/
// test_cuda_supports.cpp).
#include <QtTest>

#include <set>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "nn/backend_ops.h"
#include "nn/model_spec.h"
#include "optim/optimizer.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

// The CPU backend, except for one op family it says it lacks (as a backend without, say, a fused
// attention kernel would): every op it is asked for is recorded.
class Without : public CpuBackend {
public:
    Without(std::string op, std::shared_ptr<MemoryLedger> ledger) : CpuBackend(1, std::move(ledger)), op_(std::move(op)) {}
    bool supports(const std::string& op, DType dtype) const override {
        asked.insert(op);
        return op != op_ && CpuBackend::supports(op, dtype);
    }
    std::string name() const override { return "test backend without " + op_; }
    mutable std::set<std::string> asked;

private:
    std::string op_;
};

OptimizerConfig adamw() {
    OptimizerConfig o;
    o.kind = "adamw";
    return o;
}

}  // namespace

class BackendOpsTest : public QObject {
    Q_OBJECT

private slots:
    void everyCatalogLayerHasItsOps() {
        const std::set<std::string> known(backend_op_names().begin(), backend_op_names().end());
        for (const LayerTypeInfo& t : layer_catalog()) {
            if (t.group == "loss") continue;  // the loss is a need of its own (training_backend_needs)
            const std::vector<std::string> ops = layer_backend_ops(t.type);
            for (const std::string& op : ops) QVERIFY2(known.count(op), (t.type + ": " + op).c_str());
            if (t.type != "flatten") QVERIFY2(!ops.empty(), t.type.c_str());
        }
        QVERIFY_THROWS_EXCEPTION(InputError, layer_backend_ops("warp_drive"));
    }

    void cpuRunsEveryOpInEveryFloatDtype() {
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        for (const std::string& op : backend_op_names())
            for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64}) QVERIFY2(be->supports(op, dt), op.c_str());
    }

    void missingOpFailsAtSetupNamingIt_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("where");
        QTest::newRow("seed-cnn without conv2d") << "seed-cnn" << "conv2d" << "layer 0 (conv2d)";
        QTest::newRow("resnet-mini without batchnorm") << "resnet-mini" << "batchnorm" << "(batchnorm2d)";
        QTest::newRow("gpt-tiny without attention") << "gpt-tiny" << "attention" << "(transformer_block)";
        QTest::newRow("mlp without adam_update") << "mlp" << "adam_update" << "the optimizer (adamw)";
        QTest::newRow("gpt-tiny without cross_entropy") << "gpt-tiny" << "cross_entropy" << "the loss";
    }
    void missingOpFailsAtSetupNamingIt() {
        QFETCH(QString, preset);
        QFETCH(QString, op);
        QFETCH(QString, where);
        const ModelSpec spec = preset.startsWith(QLatin1String("gpt")) ? preset_model(preset.toStdString(), {64}, 256)
                                                                       : preset_model(preset.toStdString());
        auto ledger = std::make_shared<MemoryLedger>();
        Without be(op.toStdString(), ledger);
        auto host = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        StrategyConfig sc;
        try {
            TrainingState st(spec, adamw(), resolve_strategy(sc, spec, 4), 1, be, be.allocator(), *host, host->allocator());
            QFAIL("the training state was built on a backend without the op");
        } catch (const InputError& e) {
            const std::string m = e.what();
            QVERIFY2(e.message().id.rfind("backend.", 0) == 0, e.message().id.c_str());
            QVERIFY2(m.find(op.toStdString()) != std::string::npos, m.c_str());
            QVERIFY2(m.find(where.toStdString()) != std::string::npos, m.c_str());
            QVERIFY2(m.find("test backend without") != std::string::npos, m.c_str());
            QVERIFY2(m.find("f32") != std::string::npos, m.c_str());
        }
        QCOMPARE(ledger->live_total(), std::size_t(0));  // nothing of the model was allocated
        QVERIFY(be.asked.count(op.toStdString()));
    }

    void offloadedOptimizerIsAskedOfTheHost() {
        const ModelSpec spec = preset_model("mlp");
        StrategyConfig sc;
        sc.offload_optimizer = true;
        const std::vector<BackendNeed> needs = training_backend_needs(spec, adamw(), DType::bf16, true, true);
        QCOMPARE(needs.back().op, std::string("adam_update"));
        QVERIFY(needs.back().host);
        QCOMPARE(needs.back().dtype, DType::f32);  // the master weights it updates
        QCOMPARE(needs.front().dtype, DType::bf16);
        auto ledger = std::make_shared<MemoryLedger>();
        Without host("adam_update", ledger);
        auto device = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        QVERIFY_THROWS_EXCEPTION(InputError, check_backend_needs(needs, *device, host));
        check_backend_needs(needs, host, *device);  // the device lacking it is fine: the host updates
    }
};

QTEST_GUILESS_MAIN(BackendOpsTest)
#include "test_backend_ops.moc"
