// The argument contract of the transformer ops (core/backend/cpu/transformer_checks.h), which the CPU
// and CUDA backends share: every call in tests/support/transformer_contract.h is refused with an Error
// naming the op and what is wrong; a call that keeps the contract is not
// refused. tests/cuda/test_cuda_transformer.cpp checks the GPU gives the same messages.
#include <QtTest/QtTest>

#include <memory>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "memory/ledger.h"
#include "transformer_contract.h"

using namespace hr;

class TransformerContractTest : public QObject {
    Q_OBJECT
    std::shared_ptr<MemoryLedger> m_ledger = std::make_shared<MemoryLedger>();
    std::unique_ptr<Backend> m_cpu = make_cpu_backend(1, m_ledger);

private slots:
    void everyBrokenCallIsRefusedByName_data() {
        QTest::addColumn<int>("index");
        const auto cases = hrtest::transformer_contract_cases();
        for (int i = 0; i < int(cases.size()); ++i) QTest::newRow(cases[i].name.c_str()) << i;
    }
    void everyBrokenCallIsRefusedByName() {
        QFETCH(int, index);
        const hrtest::ContractCase c = hrtest::transformer_contract_cases()[index];
        try {
            c.call(*m_cpu);
            QFAIL("the call was not refused");
        } catch (const Error& e) {
            const std::string what = e.what();
            QVERIFY2(what.find(c.phrase) != std::string::npos, what.c_str());
        }
    }

    // The same ops with their contract kept are not refused (so the cases above fail for their own reason).
    void callsThatKeepTheContractRun() {
        Backend& be = *m_cpu;
        auto t = [&](const Shape& s, DType dt = DType::f32) {
            Tensor x = Tensor::empty(be.allocator(), s, dt, MemCategory::other);
            if (dt == DType::i64) for (std::int64_t i = 0; i < x.numel(); ++i) x.data<std::int64_t>()[i] = i % 5;
            else be.fill(x, 0.25);
            return x;
        };
        Tensor ids = t({2, 3}, DType::i64), table = t({5, 4}), y = t({2, 3, 4});
        be.embedding_forward(ids, table, y);
        Tensor x = t({3, 8}), g = t({8}), b = t({8}), ln = t({3, 8}), m = t({3}), r = t({3});
        be.layernorm_forward(x, g, b, 1e-5f, ln, m, r);
        Tensor l = t({4, 10}), tg = t({4}, DType::i64);
        const LossResult loss = be.cross_entropy_inplace(l, tg, true, 1.0f);
        QVERIFY(std::abs(loss.loss - std::log(10.0)) < 1e-6);  // equal logits: log V
        Tensor s = t({2, 4, 3}), d = t({2, 6, 3});
        be.copy_rows(s, 1, d, 3, 3);
        Tensor qkv = t({1, 4, 24}), out = t({1, 4, 8}), lse = t({1, 2, 4});
        AttentionParams p;
        p.heads = 2;
        Tensor ws = Tensor::empty(be.allocator(), {std::int64_t(be.attention_workspace_bytes(1, 4, 8, 2, DType::f32) / 4 + 1)},
                                  DType::f32, MemCategory::other);
        be.attention_forward(qkv, out, lse, p, ws);
        QCOMPARE(out.data<float>()[0], 0.25f);  // the mean of equal values
    }
};

QTEST_APPLESS_MAIN(TransformerContractTest)
#include "test_transformer_contract.moc"
