// Optimizers over flat buffers and LR schedules against closed-form values.
#include <QtTest>

#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"

using namespace hr;

class OptimTest : public QObject {
    Q_OBJECT
    std::unique_ptr<Backend> be_ = make_cpu_backend(2, std::make_shared<MemoryLedger>());

    Tensor vec(std::vector<float> v) {
        Tensor t = Tensor::empty(be_->allocator(), {std::int64_t(v.size())}, DType::f32, MemCategory::parameters);
        be_->copy_from_host(v.data(), t);
        return t;
    }

private slots:
    void sgdMomentumMatchesPyTorch() {
        // torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.01) on p=[1,-2], grads g1=[0.5,0.5], g2=[-1, 2]
        OptimizerConfig c;
        c.lr = 0.1;
        c.momentum = 0.9;
        c.weight_decay = 0.01;
        Optimizer opt(c, *be_, 2, DType::f32);
        Tensor p = vec({1.0f, -2.0f});
        double ep[2] = {1.0, -2.0}, buf[2] = {0, 0};
        std::vector<std::vector<float>> grads = {{0.5f, 0.5f}, {-1.0f, 2.0f}, {0.25f, -0.75f}};
        for (std::size_t s = 0; s < grads.size(); ++s) {
            Tensor g = vec(grads[s]);
            opt.step(p, g, 0.1);
            for (int i = 0; i < 2; ++i) {
                double d = grads[s][i] + 0.01 * ep[i];
                buf[i] = s == 0 ? d : 0.9 * buf[i] + d;
                ep[i] -= 0.1 * buf[i];
            }
        }
        for (int i = 0; i < 2; ++i) QVERIFY(std::abs(p.data<float>()[i] - ep[i]) < 1e-6);
    }

    void nesterov() {
        OptimizerConfig c;
        c.lr = 0.5;
        c.momentum = 0.5;
        c.nesterov = true;
        Optimizer opt(c, *be_, 1, DType::f32);
        Tensor p = vec({2.0f});
        double ep = 2.0, buf = 0;
        for (int s = 0; s < 3; ++s) {
            float gv = static_cast<float>(0.3 * (s + 1));
            Tensor g = vec({gv});
            opt.step(p, g, 0.5);
            buf = s == 0 ? gv : 0.5 * buf + gv;
            ep -= 0.5 * (gv + 0.5 * buf);
        }
        QVERIFY(std::abs(p.data<float>()[0] - ep) < 1e-6);
    }

    void adamAndAdamW_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("adam") << "adam";
        QTest::newRow("adamw") << "adamw";
    }
    void adamAndAdamW() {
        QFETCH(QString, kind);
        OptimizerConfig c;
        c.kind = kind.toStdString();
        c.lr = 0.01;
        c.weight_decay = 0.1;
        Optimizer opt(c, *be_, 1, DType::f32);
        QCOMPARE(opt.state().size(), std::size_t(2));
        Tensor p = vec({1.5f});
        double ep = 1.5, m = 0, v = 0;
        for (int t = 1; t <= 4; ++t) {
            float gv = static_cast<float>(std::sin(t));
            Tensor g = vec({gv});
            opt.step(p, g, 0.01);
            double gg = gv;
            if (c.kind == "adam") gg += 0.1 * ep;
            else ep *= 1 - 0.01 * 0.1;
            m = 0.9 * m + 0.1 * gg;
            v = 0.999 * v + 0.001 * gg * gg;
            double mh = m / (1 - std::pow(0.9, t)), vh = v / (1 - std::pow(0.999, t));
            ep -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
        }
        QVERIFY2(std::abs(p.data<float>()[0] - ep) < 1e-6, qPrintable(QString::number(p.data<float>()[0] - ep)));
    }

    void stateCountsPerOptimizer() {
        OptimizerConfig sgd;
        QCOMPARE(optimizer_states_per_param(sgd), 0);
        sgd.momentum = 0.5;
        QCOMPARE(optimizer_states_per_param(sgd), 1);
        OptimizerConfig adam;
        adam.kind = "adam";
        QCOMPARE(optimizer_states_per_param(adam), 2);
    }

    void badConfigRejected() {
        OptimizerConfig c;
        c.kind = "lion";
        QVERIFY_THROWS_EXCEPTION(InputError, validate_optimizer(c));
        c.kind = "sgd";
        c.lr = -1;
        QVERIFY_THROWS_EXCEPTION(InputError, validate_optimizer(c));
        c.lr = 0.1;
        c.nesterov = true;
        QVERIFY_THROWS_EXCEPTION(InputError, validate_optimizer(c));
    }

    void schedules() {
        LrSchedule s;
        QCOMPARE(learning_rate_at(s, 0.1, 57, 100), 0.1);
        s.kind = "step";
        s.step_size = 10;
        s.gamma = 0.5;
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 9, 100) - 0.1) < 1e-15);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 10, 100) - 0.05) < 1e-15);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 35, 100) - 0.0125) < 1e-15);
        s.kind = "cosine";
        s.min_lr = 0.001;
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 0, 100) - 0.1) < 1e-15);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 50, 100) - (0.001 + 0.099 * 0.5)) < 1e-12);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 100, 100) - 0.001) < 1e-12);
        s.warmup_steps = 10;
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 0, 100) - 0.01) < 1e-15);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 4, 100) - 0.05) < 1e-15);
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 10, 100) - 0.1) < 1e-15);  // cosine starts after warm-up
        QVERIFY(std::abs(learning_rate_at(s, 0.1, 55, 100) - (0.001 + 0.099 * 0.5)) < 1e-12);
        s.kind = "sawtooth";
        QVERIFY_THROWS_EXCEPTION(InputError, validate_schedule(s));
    }
};

QTEST_APPLESS_MAIN(OptimTest)
#include "test_optim.moc"
