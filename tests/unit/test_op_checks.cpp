// Every op of backend.h is checked once, above the backends (core/backend/op_dispatch.cpp): a call that
// breaks an op's contract is refused with an Error naming the op and what is wrong, on the CPU, and on
// a backend of another device with the same message, before that backend's own op runs. That other
// backend is this file's `Elsewhere`: the CPU's kernels behind a device that is not the CPU (cuda:0)
// with the GPU's tensor rules; the CUDA backend gets the same checks because the checked ops are
// Backend's, non-virtual, and no backend hides them (checked_ops.h, asserted here for the CPU and in
// cuda_backend.cpp for the GPU). tests/cuda/test_cuda_transformer.cpp compares the GPU's messages.
#include <QtTest/QtTest>

#include <cstdlib>
#include <memory>
#include <set>

#include "backend/checked_ops.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/op_checks.h"
#include "base/error.h"
#include "memory/ledger.h"
#include "op_contract.h"
#include "transformer_contract.h"

using namespace hr;

// The CPU backend's every checked op is Backend's (none hidden by a CpuBackend member of its own).
#define HR_CPU_CHECKED_ABOVE(op) HR_ASSERT_CHECKED_ABOVE_ONE(CpuBackend, op)
HR_BACKEND_CHECKED_OPS(HR_CPU_CHECKED_ABOVE)
#undef HR_CPU_CHECKED_ABOVE

namespace {

// Host memory that says it is on cuda:0 (nothing here reads it as device memory: the CPU's kernels do).
class ElsewhereAllocator : public Allocator {
public:
    explicit ElsewhereAllocator(std::shared_ptr<MemoryLedger> ledger) : Allocator(std::move(ledger)) {}
    Device device() const override { return Device::cuda(0); }
    std::shared_ptr<Storage> allocate(std::size_t bytes, MemCategory category, int layer) override {
        void* p = std::calloc(bytes ? bytes : 1, 1);
        if (!p) throw Error("out of host memory");
        return std::make_shared<Storage>(p, bytes, Device::cuda(0), this, ledger().on_alloc(bytes, category, layer),
                                         category, layer);
    }

protected:
    void release(void* data, std::size_t) override { std::free(data); }
};

// The GPU's rules (cuda_backend_detail.h's GpuRules): tensors on cuda:0; f32, bf16 and f16.
class ElsewhereRules final : public ops::TensorRules {
public:
    void here(const char* op, const char* name, const Tensor& t) const override {
        if (!t.defined()) ops::fail(op, std::string(name) + " is undefined");
        if (t.device() != Device::cuda(0))
            ops::fail(op, std::string(name) + " " + ops::desc(t) + " is on " + t.device().str() + ", expected cuda:0");
    }
    void floating(const char* op, const char* name, const Tensor& t) const override {
        if (t.dtype() == DType::f64)
            ops::fail(op, std::string(name) + " " + ops::desc(t) + ": f64 is not supported on the GPU; use f32 (or bf16/f16)");
        if (t.dtype() != DType::f32 && t.dtype() != DType::bf16 && t.dtype() != DType::f16)
            ops::fail(op, std::string(name) + " " + ops::desc(t) + " must be a float tensor (f32, bf16, f16)");
    }
};

// The CPU's kernels behind another device and its rules; records which of its own ops were reached.
class Elsewhere : public CpuBackend {
public:
    explicit Elsewhere(std::shared_ptr<MemoryLedger> ledger) : CpuBackend(1, ledger), alloc_(ledger) {}
    Device device() const override { return Device::cuda(0); }
    Allocator& allocator() override { return alloc_; }
    const ops::TensorRules& tensor_rules() const override { return rules_; }
    std::set<std::string> reached;

protected:
    void do_fill(Tensor& t, double v) override {
        reached.insert("fill");
        CpuBackend::do_fill(t, v);
    }
    void do_add(const Tensor& a, const Tensor& b, Tensor& out) override {
        reached.insert("add");
        CpuBackend::do_add(a, b, out);
    }
    void do_gemm(bool ta, bool tb, float alpha, const Tensor& a, const Tensor& b, float beta, Tensor& c) override {
        reached.insert("gemm");
        CpuBackend::do_gemm(ta, tb, alpha, a, b, beta, c);
    }
    void do_sgd_update(Tensor& p, const Tensor& g, Tensor& mom, const SgdArgs& a) override {
        reached.insert("sgd_update");
        CpuBackend::do_sgd_update(p, g, mom, a);
    }

private:
    ElsewhereAllocator alloc_;
    ElsewhereRules rules_;
};

std::vector<hrtest::ContractCase> all_cases() {
    std::vector<hrtest::ContractCase> c = hrtest::op_contract_cases();
    for (auto& t : hrtest::transformer_contract_cases()) c.push_back(t);
    return c;
}

std::string refusal(Backend& be, const hrtest::ContractCase& c) {
    try {
        c.call(be);
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

}  // namespace

class OpChecksTest : public QObject {
    Q_OBJECT
    std::shared_ptr<MemoryLedger> m_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> m_cpu = make_cpu_backend(1, m_ledger);

private slots:
    // Each op, called with one bad argument, is refused by name with what is wrong.
    void everyOpRefusesABadCallOnTheCpu_data() {
        QTest::addColumn<int>("index");
        const auto cases = hrtest::op_contract_cases();
        for (int i = 0; i < int(cases.size()); ++i) QTest::newRow(cases[i].name.c_str()) << i;
    }
    void everyOpRefusesABadCallOnTheCpu() {
        QFETCH(int, index);
        const hrtest::ContractCase c = hrtest::op_contract_cases()[index];
        const std::string what = refusal(*m_cpu, c);
        QVERIFY2(!what.empty(), "the call was not refused");
        QVERIFY2(what.find(c.phrase) != std::string::npos, what.c_str());
    }

    // The cases reach every checked op: the ops their refusals name (the text before ": ") are all of
    // checked_ops.h (maxpool2d_backward_windows refuses as maxpool2d_backward, the op it stands for).
    void everyCheckedOpHasACase() {
        std::set<std::string> named;
        for (const auto& c : all_cases()) {
            const std::string what = refusal(*m_cpu, c);
            named.insert(what.substr(0, what.find(": ")));
        }
        std::string missing;
#define HR_OP_NAMED(op) \
    if (!named.count(#op) && std::string(#op) != "maxpool2d_backward_windows") missing += #op " ";
        HR_BACKEND_CHECKED_OPS(HR_OP_NAMED)
#undef HR_OP_NAMED
        QVERIFY2(missing.empty(), ("no case for: " + missing).c_str());
    }

    // On a backend of another device, the same calls are refused with the CPU's very message (the
    // checks run above the backends), except where the device's own rules speak (its float types),
    // and the backend's own op is never reached.
    void theChecksRunAboveEveryBackend_data() {
        QTest::addColumn<int>("index");
        const auto cases = all_cases();
        for (int i = 0; i < int(cases.size()); ++i) QTest::newRow(cases[i].name.c_str()) << i;
    }
    void theChecksRunAboveEveryBackend() {
        QFETCH(int, index);
        const hrtest::ContractCase c = all_cases()[index];
        Elsewhere other(m_ledger);
        const std::string cpu = refusal(*m_cpu, c), there = refusal(other, c);
        QVERIFY2(!there.empty(), "the call was not refused");
        QVERIFY2(there.find(c.phrase) != std::string::npos, there.c_str());
        if (c.same_text) QCOMPARE(QString::fromStdString(there), QString::fromStdString(cpu));
        QVERIFY(other.reached.empty());
    }

    // Its own rules: a tensor on the CPU, an f64 tensor, refused above it; a good call reaches its op.
    void theBackendsRulesAreAskedAboveIt() {
        Elsewhere other(m_ledger);
        Tensor host = Tensor::empty(m_cpu->allocator(), {2, 2}, DType::f32, MemCategory::other);
        Tensor here = Tensor::empty(other.allocator(), {2, 2}, DType::f32, MemCategory::other);
        Tensor wide = Tensor::empty(other.allocator(), {2, 2}, DType::f64, MemCategory::other);
        try {
            other.add(here, host, here);
            QFAIL("a CPU tensor was taken");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("add: b (2, 2) f32 is on cpu, expected cuda:0") != std::string::npos,
                     e.what());
        }
        try {
            other.gemm(false, false, 1.0f, wide, wide, 0.0f, wide);
            QFAIL("an f64 tensor was taken");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("gemm: a (2, 2) f64: f64 is not supported on the GPU") !=
                         std::string::npos,
                     e.what());
        }
        // the same f64 call runs on the CPU, whose rules take f64
        Tensor cw = Tensor::empty(m_cpu->allocator(), {2, 2}, DType::f64, MemCategory::other);
        m_cpu->fill(cw, 1.0);
        m_cpu->gemm(false, false, 1.0f, cw, cw, 0.0f, cw);
        QVERIFY(other.reached.empty());
        other.fill(here, 2.0);
        other.add(here, here, here);
        QCOMPARE(here.data<float>()[3], 4.0f);
        QCOMPARE(other.reached, (std::set<std::string>{"fill", "add"}));
    }
};

QTEST_GUILESS_MAIN(OpChecksTest)
#include "test_op_checks.moc"
