// The budget search's Pareto front (core/plan/planner.cpp search_plans) checked by brute force, the
// combinations it leaves out checked against the planner itself, and the terminal table
// (app/report/plan_table.h) aligned in English and Chinese.
#include <QRegularExpression>
#include <QtTest>

#include "gui/AppSettings.h"
#include "nn/model_spec.h"
#include "plan/planner.h"
#include "report/plan_table.h"

namespace {

hr::PlanRequest resnetRequest() {
    hr::PlanRequest r;
    r.spec = hr::preset_model("resnet-mini");
    r.batch = 256;
    r.optimizer.kind = "sgd";
    r.optimizer.momentum = 0;  // stateless: offload has nothing to move
    r.device = "cpu";
    r.threads = 2;
    return r;
}

bool dominates(const hr::PlanCandidate& a, const hr::PlanCandidate& b) {
    return a.plan.device_total <= b.plan.device_total && a.plan.predicted_step_seconds <= b.plan.predicted_step_seconds;
}

// display column where the step-time cell ("1.01x") of a table line ends, -1 if none
int stepColumnEnd(const QString& line) {
    static const QRegularExpression re(QStringLiteral("\\d+\\.\\d\\dx"));
    const auto m = re.match(line);
    return m.hasMatch() ? hrapp::displayWidth(line.left(m.capturedEnd())) : -1;
}

}  // namespace

class TestPlanTable : public QObject {
    Q_OBJECT
    hr::PlanSearch m_search;
    std::size_t m_budget = 40u << 20;

private slots:
    void initTestCase() { m_search = hr::search_plans(resnetRequest(), m_budget); }

    void paretoFrontIsTheNonDominatedSet() {
        const auto& c = m_search.candidates;
        QVERIFY(m_search.best >= 0);
        int front = 0, fitting = 0;
        for (std::size_t i = 0; i < c.size(); ++i) {
            if (!c[i].fits) {
                QVERIFY(!c[i].pareto);
                continue;
            }
            ++fitting;
            // brute force: dominated by another fitting candidate (a tie goes to the earlier one)
            bool dominated = false;
            for (std::size_t k = 0; k < c.size(); ++k) {
                if (k == i || !c[k].fits || !dominates(c[k], c[i])) continue;
                const bool tie = c[k].plan.device_total == c[i].plan.device_total &&
                                 c[k].plan.predicted_step_seconds == c[i].plan.predicted_step_seconds;
                if (!tie || k < i) dominated = true;
            }
            QVERIFY2(c[i].pareto == !dominated, c[i].reason.c_str());
            if (c[i].pareto) {
                ++front;
                QCOMPARE(c[i].dominated_by, -1);
            } else {
                QVERIFY(c[i].dominated_by >= 0);
                QVERIFY(dominates(c[std::size_t(c[i].dominated_by)], c[i]));
            }
        }
        QVERIFY(c[std::size_t(m_search.best)].pareto);
        QVERIFY2(front >= 2 && front < fitting, qPrintable(QStringLiteral("%1 of %2").arg(front).arg(fitting)));
        // the front runs from the fastest to the smallest: step time up, memory strictly down
        const hr::PlanCandidate* prev = nullptr;
        for (const auto& x : c)
            if (x.pareto) {
                if (prev) {
                    QVERIFY(x.plan.predicted_step_seconds >= prev->plan.predicted_step_seconds);
                    QVERIFY(x.plan.device_total < prev->plan.device_total);
                }
                prev = &x;
            }
    }

    void combinationsThatAddNothingAreLeftOut() {
        // 2 precisions x 3 checkpoint sets x 4 micro-batches x offload: none, the optimizer's, the parameters
        // too (zero3 on the one rank)
        QCOMPARE(int(m_search.candidates.size()) + m_search.duplicates, 2 * 3 * 4 * 3);
        QVERIFY(m_search.duplicates >= 12);  // at least every fp32 offload twin (SGD without momentum)
        int offloaded = 0;
        for (const auto& x : m_search.candidates) {
            if (x.strategy.offload_parameters) {  // nothing of the model on the device, less than without
                ++offloaded;
                QCOMPARE(x.strategy.shard, std::string("zero3"));
                QCOMPARE(hr::at(x.plan.device, hr::MemCategory::parameters), std::size_t(0));
                QCOMPARE(hr::at(x.plan.device, hr::MemCategory::gradients), std::size_t(0));
                QVERIFY(x.plan.offload_bytes > 0 && x.plan.offload_seconds > 0);
                hr::PlanRequest twin = resnetRequest();
                twin.strategy = x.strategy;
                twin.strategy.offload_parameters = false;
                QVERIFY(hr::predict_memory(twin).device_total > x.plan.device_total);
                continue;
            }
            if (!x.strategy.offload_optimizer) continue;
            QCOMPARE(x.plan.strategy.precision, std::string("bf16"));  // fp32 + SGD: nothing to offload
            hr::PlanRequest twin = resnetRequest();
            twin.strategy = x.strategy;
            twin.strategy.offload_optimizer = false;
            QVERIFY(hr::predict_memory(twin).device_total > x.plan.device_total);  // it does save memory
        }
        // what was left out really is the same on the device: fp32 without checkpointing
        QCOMPARE(offloaded, 2 * 3 * 4);
        hr::PlanRequest on = resnetRequest(), off = resnetRequest();
        on.strategy.offload_optimizer = true;
        QCOMPARE(hr::predict_memory(on).device, hr::predict_memory(off).device);
    }

    void tableShowsTheFrontAligned_data() {
        QTest::addColumn<QString>("language");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }

    void tableShowsTheFrontAligned() {
        QFETCH(QString, language);
        QCOMPARE(hrapp::installTranslators(language), language);
        const QString text = hrapp::planSearchTable(m_search, false);
        qInfo().noquote() << "\n" << text;
        QStringList lines = text.split(QLatin1Char('\n'));
        int front = 0;
        for (const auto& x : m_search.candidates) front += x.pareto;
        QStringList table;
        for (const QString& l : lines)
            if (stepColumnEnd(l) > 0) table << l;
        QCOMPARE(int(table.size()), front);
        const int end = stepColumnEnd(table.first());
        for (const QString& l : table) QCOMPARE(stepColumnEnd(l), end);
        // the header's step column ends there too, and the best row is marked
        QCOMPARE(hrapp::displayWidth(lines.first().left(lines.first().indexOf(hrapp::PlanTable::tr("step (est.)")) +
                                                        hrapp::PlanTable::tr("step (est.)").size())),
                 end);
        QVERIFY(table.first().trimmed().startsWith(QLatin1Char('*')));
        QVERIFY(text.contains(QStringLiteral("--all")));
        // --all: every candidate, the dominated ones naming a row that beats them
        const QString full = hrapp::planSearchTable(m_search, true);
        QStringList rows;
        for (const QString& l : full.split(QLatin1Char('\n')))
            if (stepColumnEnd(l) > 0) rows << l;
        QCOMPARE(int(rows.size()), int(m_search.candidates.size()));
        for (const QString& l : rows) QCOMPARE(stepColumnEnd(l), stepColumnEnd(rows.first()));
        hrapp::installTranslators(QStringLiteral("en"));
    }

    void dominatedRowsNameTheirBetter() {
        const QString full = hrapp::planSearchTable(m_search, true);
        QStringList rows;
        for (const QString& l : full.split(QLatin1Char('\n')))
            if (stepColumnEnd(l) > 0) rows << l;
        static const QRegularExpression ref(QStringLiteral("row (\\d+) is no larger"));
        int checked = 0;
        for (int r = 0; r < rows.size(); ++r) {
            const auto m = ref.match(rows[r]);
            const hr::PlanCandidate& c = m_search.candidates[std::size_t(r)];
            QCOMPARE(m.hasMatch(), c.fits && !c.pareto);
            if (!m.hasMatch()) continue;
            const int other = m.captured(1).toInt() - 1;
            QVERIFY(other >= 0 && other < r);
            QVERIFY(dominates(m_search.candidates[std::size_t(other)], c));
            ++checked;
        }
        QVERIFY(checked > 0);
    }
};

QTEST_MAIN(TestPlanTable)
#include "test_plan_table.moc"
