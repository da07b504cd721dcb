// ranks: 2
// One step's memory timeline per rank (issue 47, docs/timeline.md): on each of N CPU ranks, the timeline
// measured while the rank trains a step (dp with uneven rank batches, zero3 with accumulation) equals the
// planner's walk for that rank (PlanRequest::rank), phase by phase and event by event; ranks with different
// batches have different activations.
#include "dist_test.h"
#include "dist_training.h"
#include "memory/step_timeline.h"
#include "plan/planner.h"

using namespace hr;
using hrtest::comm;
using hrtest::Trainee;

namespace {

// Trainee::step with the phases the host step runner marks (the micro-batch, the loss)
StepTimeline measured_step(Trainee& t) {
    CategoryBytes base = t.ledger->snapshot().live;
    at(base, MemCategory::activations) = 0;
    StepRecorder rec(base, 1, comm().rank());
    TrainingState& st = *t.st;
    st.set_step_recorder(&rec);
    const ResolvedStrategy& s = st.strategy();
    std::vector<float> x;
    std::vector<std::int64_t> y;
    hrtest::global_batch(t.spec, s.batch, 1, x, y);
    const std::int64_t per = shape_numel(t.spec.input_shape);
    st.begin_step();
    int j = 0;
    for (auto [r0, n] : s.micro_batches()) {
        rec.set_micro(j++);
        const std::int64_t row = s.sample_offset + r0;
        Tensor xs = st.x_staging.slice0(0, n), yb = st.labels.slice0(0, n);
        t.be->copy_from_host(x.data() + row * per, xs);
        t.be->copy_from_host(y.data() + row, yb);
        Tensor logits = st.model().forward(xs, true, st.first_sample(1, r0));
        rec.phase(StepPhaseKind::loss);
        Tensor g = st.dlogits.slice0(0, n);
        t.be->softmax_cross_entropy(logits, yb, 0.0f, g, st.loss_grad_scale(n));
        st.model().backward(g);
    }
    st.optimizer_step(t.lr);
    st.set_step_recorder(nullptr);
    return rec.finish();
}

bool same_steps(const StepTimeline& a, const StepTimeline& b, std::string* why) {
    if (a.phases.size() != b.phases.size()) return *why = "phase counts differ", false;
    for (std::size_t i = 0; i < a.phases.size(); ++i)
        if (a.phases[i].kind != b.phases[i].kind || a.phases[i].layer != b.phases[i].layer ||
            a.phases[i].block != b.phases[i].block || a.phases[i].micro != b.phases[i].micro)
            return *why = "phase " + std::to_string(i) + " differs", false;
    if (a.events.size() != b.events.size()) return *why = "event counts differ", false;
    for (std::size_t i = 0; i < a.events.size(); ++i)
        if (a.events[i].phase != b.events[i].phase || a.events[i].layer != b.events[i].layer ||
            a.events[i].delta != b.events[i].delta)
            return *why = "event " + std::to_string(i) + " differs", false;
    return true;
}

}  // namespace

class TimelineRanksTest : public QObject {
    Q_OBJECT
private slots:
    void eachRankMeasuredEqualsPredicted_data() {
        QTest::addColumn<QString>("stage");
        QTest::addColumn<int>("accumulate");
        QTest::addColumn<bool>("uneven");
        QTest::newRow("dp, uneven batches") << "dp" << 1 << true;
        QTest::newRow("zero3 + accumulation") << "zero3" << 2 << false;
    }

    void eachRankMeasuredEqualsPredicted() {
        QFETCH(QString, stage);
        QFETCH(int, accumulate);
        QFETCH(bool, uneven);
        const int N = comm().world_size(), r = comm().rank();
        const ModelSpec spec = preset_model("seed-cnn");
        OptimizerConfig o;
        o.lr = 0.05;
        o.momentum = 0.9;
        StrategyConfig sc;
        sc.shard = stage.toStdString();
        sc.accumulate = accumulate;
        const std::int64_t batch = 8 * N;
        if (uneven && N == 2) sc.rank_batch = {10, 6};
        StepTimeline m, p;
        DIST_GUARD({
            Trainee t(spec, sc, batch, o, &comm());
            m = measured_step(t);
            PlanRequest req;
            req.spec = spec;
            req.batch = batch;
            req.strategy = sc;
            req.optimizer = o;
            req.threads = 1;
            req.world_size = N;
            req.rank = r;
            p = predict_memory(req).timeline;
        });
        std::string why;
        const bool same = same_steps(m, p, &why);
        if (!same) std::fprintf(stderr, "rank %d: %s\n", r, why.c_str());
        DIST_VERIFY(same, "this rank's measured timeline equals its prediction");
        DIST_VERIFY(m.peak_total - total(m.base) == p.peak_total - total(p.base), "the step's own peak");
        int reduces = 0;
        for (const StepPhase& ph : m.phases) reduces += ph.kind == StepPhaseKind::reduce;
        DIST_VERIFY(reduces == (N > 1 ? 1 : 0), "one gradient reduction phase with ranks");
        // uneven batches: rank 0's 10 rows keep more activations than rank 1's 6
        if (uneven && N == 2) {
            const double mine = double(at(m.at_peak, MemCategory::activations));
            std::vector<double> all(2, 0.0);
            all[static_cast<std::size_t>(r)] = mine;
            const double a0 = comm().all_reduce_value(all[0], ReduceOp::sum), a1 = comm().all_reduce_value(all[1], ReduceOp::sum);
            DIST_VERIFY(std::abs(a0 / a1 - 10.0 / 6.0) < 0.01, "activations in proportion to the rank's rows");
        }
    }
};

HR_DIST_TEST_MAIN(TimelineRanksTest)
#include "test_timeline_ranks.moc"
