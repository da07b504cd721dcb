// ranks: 2 4
// One step's memory timeline per rank (issue 47, docs/timeline.md): on each of N CPU ranks, the timeline
// measured while the rank trains a step (dp with uneven rank batches, zero3 with accumulation, pipeline
// stages: 2 stages, and on 4 ranks 2 stages x 2 data replicas) equals the planner's walk for that rank
// (PlanRequest::rank), phase by phase and event by event; ranks with different batches have different
// activations. Independently of both, each pipeline stage's peak (its phase and bytes) matches an account
// written here from seed-cnn's layer shapes and the 1F1B schedule.
#include "dist_test.h"
#include "dist_training.h"
#include "memory/step_timeline.h"
#include "plan/planner.h"

using namespace hr;
using hrtest::comm;
using hrtest::Trainee;

namespace {

// Trainee::step with the phases the host step runner marks (the micro-batch, the loss); the state's
// second step, the first steady one (zero3's gather buffers hold what an update leaves), as the trainer's
// default. `moved`: the payload bytes the rank's communicator counted in it.
StepTimeline measured_step(Trainee& t, double* moved = nullptr) {
    t.step(0);
    const double before = comm().stats().bytes;
    const CategoryBytes base = t.st->timeline_base(t.ledger->snapshot().live);
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
        if (st.tp_head()) st.tp_loss(logits, yb, g, st.loss_grad_scale(n));  // a split head's columns
        else t.be->softmax_cross_entropy(logits, yb, 0.0f, g, st.loss_grad_scale(n));
        st.model().backward(g);
    }
    st.optimizer_step(t.lr);
    st.set_step_recorder(nullptr);
    if (moved) *moved = comm().stats().bytes - before;
    return rec.finish();
}

// A pipeline stage's step: the 1F1B schedule (TrainingState::pipeline_step), stage 0 fed this replica's rows,
// the last stage's loss over them (as the trainer's PipelineStepRunner)
StepTimeline measured_pipeline_step(Trainee& t) {
    const CategoryBytes base = t.st->timeline_base(t.ledger->snapshot().live);
    StepRecorder rec(base, 1, comm().rank());
    TrainingState& st = *t.st;
    st.set_step_recorder(&rec);
    const ResolvedStrategy& s = st.strategy();
    std::vector<float> x;
    std::vector<std::int64_t> y;
    hrtest::global_batch(t.spec, s.batch, 1, x, y);
    const std::int64_t per = shape_numel(t.spec.input_shape);
    const auto micro = s.micro_batches();
    st.begin_step();
    st.pipeline_step(
        1, micro,
        [&](int j) {
            const auto [r0, n] = micro[static_cast<std::size_t>(j)];
            Tensor xs = st.x_staging.slice0(0, n);
            t.be->copy_from_host(x.data() + (s.sample_offset + r0) * per, xs);
            return xs;
        },
        [&](int j, const Tensor& logits, Tensor& grad) {
            const auto [r0, n] = micro[static_cast<std::size_t>(j)];
            Tensor yb = st.labels.slice0(0, n);
            t.be->copy_from_host(y.data() + s.sample_offset + r0, yb);
            grad = st.dlogits.slice0(0, n);
            return t.be->softmax_cross_entropy(logits, yb, 0.0f, grad, st.loss_grad_scale(n));
        });
    st.optimizer_step(t.lr);
    st.set_step_recorder(nullptr);
    return rec.finish();
}

bool same_steps(const StepTimeline& a, const StepTimeline& b, std::string* why) {
    if (a.phases.size() != b.phases.size()) return *why = "phase counts differ", false;
    for (std::size_t i = 0; i < a.phases.size(); ++i)
        if (a.phases[i].kind != b.phases[i].kind || a.phases[i].layer != b.phases[i].layer ||
            a.phases[i].block != b.phases[i].block || a.phases[i].micro != b.phases[i].micro ||
            a.phases[i].label != b.phases[i].label || a.phases[i].peer != b.phases[i].peer)
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
        QTest::newRow("split head + accumulation") << "tp" << 2 << false;
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
        if (stage == "tp") {  // --tp-head 2 (x 2 data replicas on 4 ranks)
            sc.tp_head = 2;
            sc.shard = N > 2 ? "dp" : "none";
        }
        sc.accumulate = accumulate;
        const std::int64_t batch = 8 * N;
        if (uneven && N == 2) sc.rank_batch = {10, 6};
        StepTimeline m, p;
        double moved = 0;
        std::int64_t flat = 0;
        DIST_GUARD({
            Trainee t(spec, sc, batch, o, &comm());
            m = measured_step(t, &moved);
            flat = t.st->shard_layout().flat_numel;
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
        int reduces = 0, head_reduces = 0;
        for (const StepPhase& ph : m.phases) {
            reduces += ph.kind == StepPhaseKind::reduce && ph.label.empty();
            head_reduces += ph.kind == StepPhaseKind::reduce && ph.label == "head input gradient";
        }
        const bool gradient_reduce = stage != "tp" || N > 2;  // a split head alone reduces no gradients
        DIST_VERIFY(reduces == (gradient_reduce ? 1 : 0), "one gradient reduction phase with data replicas");
        // a split head: per micro-batch its input gradient's all-reduce (a phase), and its loss's reduction
        // buffer in use in the loss, 3 floats (4 bytes) a row: by hand, the micro-batch's rows x 12 bytes
        if (stage == "tp") {
            DIST_VERIFY(head_reduces == accumulate, "one all-reduce of the head's input gradient per micro-batch");
            const std::int64_t rows = batch / (N / 2) / accumulate;
            bool loss_bytes = true;
            int loss_events = 0;
            for (const TimelineEvent& e : m.events)
                if (m.phases[static_cast<std::size_t>(e.phase)].kind == StepPhaseKind::loss) {
                    ++loss_events;
                    loss_bytes = loss_bytes && e.category == MemCategory::communication &&
                                 std::abs(e.delta) == rows * 12;
                }
            DIST_VERIFY(loss_bytes && loss_events == 2 * accumulate, "the loss buffer's bytes, by hand");
        } else {
            DIST_VERIFY(head_reduces == 0, "no head all-reduce without a split head");
        }
        // zero3: the gathers are events (ShardEngine::record_gathers), checked against the communicator's own
        // count of the step's payload: a reduce-scatter of every unit per micro-batch (P elements, f32) and
        // the all-gathers, whose bytes are what the gather phases make live
        if (stage == "zero3") {
            double gathered = 0;
            int gathers = 0;
            bool only_communication = true;
            for (const TimelineEvent& e : m.events)
                if (m.phases[static_cast<std::size_t>(e.phase)].kind == StepPhaseKind::gather) {
                    only_communication = only_communication && e.category == MemCategory::communication;
                    if (e.delta > 0) gathered += double(e.delta), ++gathers;
                }
            DIST_VERIFY(gathers > 0 && only_communication, "zero3's gathers are phases with communication bytes");
            const double expect = double(accumulate) * double(flat) * 4.0 + gathered;
            if (std::abs(moved - expect) > 0.5)
                std::fprintf(stderr, "rank %d: the communicator moved %.0f bytes, the timeline says %.0f\n", r, moved, expect);
            DIST_VERIFY(std::abs(moved - expect) <= 0.5, "the gathered bytes are the all-gathers' payload");
            // the step ends as it began: units 0 and 1 gathered for the next one
            DIST_VERIFY(m.events.back().live == m.base, "the step's end equals its start");
        }
        // uneven batches: rank 0's 10 rows keep more activations than rank 1's 6
        if (uneven && N == 2) {
            const double mine = double(at(m.at_peak, MemCategory::activations));
            std::vector<double> all(2, 0.0);
            all[static_cast<std::size_t>(r)] = mine;
            const double a0 = comm().all_reduce_value(all[0], ReduceOp::sum), a1 = comm().all_reduce_value(all[1], ReduceOp::sum);
            DIST_VERIFY(std::abs(a0 / a1 - 10.0 / 6.0) < 0.01, "activations in proportion to the rank's rows");
        }
    }

    // seed-cnn in 2 stages split 7,3 (--pipeline-split): stage 0 holds conv1, maxpool, relu, conv2, maxpool,
    // relu, flatten; stage 1 linear(320, 50), relu, linear(50, 10). Each replica's 8 rows in 4 micro-batches
    // of 2. Measured equals predicted on every rank; and the peak, by hand (f32, 4 bytes a value; max-pool
    // indices int32, 4 bytes; ReLUs in place and flatten a view: nothing), per sample of a micro-batch:
    //   stage 0: its input 1x28x28 = 784 (kept for conv1's backward) + conv1 10x24x24 = 5760 + maxpool
    //            10x12x12 = 1440 and indices 1440 + conv2 20x8x8 = 1280 + maxpool 20x4x4 = 320 and indices 320
    //            = 11344 values. Under 1F1B stage 0 of 2 runs forward 0, then forward 1 before backward 0: two
    //            micro-batches in flight, so the peak is at the second micro-batch's last allocating layer, the
    //            forward of layer 4 (maxpool2d), micro-batch 1: 2 x 11344 x 4 B x 2 rows = 181504 bytes.
    //   stage 1: its input 320 (received from stage 0) + linear 50 + linear 10 = 380 values; one micro-batch
    //            in flight (forward j, then backward j), peak at the forward of layer 9 (linear), micro-batch 0:
    //            380 x 4 B x 2 rows = 3040 bytes.
    void pipelineStagesMeasuredEqualsPredicted() {
        const int N = comm().world_size(), r = comm().rank();
        if (N != 2 && N != 4) QSKIP("pipeline stages: 2 ranks (2 stages) or 4 (2 stages x 2 replicas)");
        const ModelSpec spec = preset_model("seed-cnn");
        OptimizerConfig o;
        o.lr = 0.05;
        o.momentum = 0.9;
        StrategyConfig sc;
        sc.pipeline = 2;
        sc.pipeline_split = {7, 3};
        sc.accumulate = 4;
        const int D = N / 2;
        if (D > 1) sc.shard = "dp";  // the replicas of a stage all-reduce its gradients
        const std::int64_t batch = 8 * D;
        StepTimeline m, p;
        int stage = 0;
        DIST_GUARD({
            Trainee t(spec, sc, batch, o, &comm());
            stage = t.st->stage();
            m = measured_pipeline_step(t);
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
        if (!same) std::fprintf(stderr, "rank %d (stage %d): %s\n", r, stage, why.c_str());
        DIST_VERIFY(same, "this stage's measured timeline equals its prediction");
        DIST_VERIFY(m.peak_phase == p.peak_phase && m.peak_total - total(m.base) == p.peak_total - total(p.base),
                    "the stage's own peak, measured and predicted");
        // the schedule's messages: stage 0 receives its 4 inputs by copy and the 4 output gradients, sends 4
        // activations; stage 1 receives 4 activations and sends 4 input gradients
        int sends = 0, receives = 0, inputs = 0, reduces = 0;
        bool peers = true;
        for (const StepPhase& ph : m.phases) {
            sends += ph.kind == StepPhaseKind::send;
            receives += ph.kind == StepPhaseKind::receive && ph.label != "input";
            inputs += ph.kind == StepPhaseKind::receive && ph.label == "input";
            reduces += ph.kind == StepPhaseKind::reduce;
            if (ph.kind == StepPhaseKind::send || (ph.kind == StepPhaseKind::receive && ph.label != "input"))
                peers = peers && ph.peer == 1 - stage;
        }
        DIST_VERIFY(peers, "a message's peer is the other stage");
        DIST_VERIFY(sends == 4 && receives == 4 && inputs == (stage == 0 ? 4 : 0), "4 messages each way, 4 inputs at stage 0");
        DIST_VERIFY(reduces == (D > 1 ? 1 : 0), "a gradient reduction only over data replicas");
        DIST_VERIFY(at(m.events.back().live, MemCategory::activations) == 0, "the step gives back what it saved");
        // the hand account (above)
        const std::size_t hand = stage == 0 ? std::size_t(2) * 11344 * 4 * 2 : std::size_t(380) * 4 * 2;
        const bool bytes_ok = at(p.at_peak, MemCategory::activations) == hand && p.peak_total == total(p.base) + hand;
        if (!bytes_ok)
            std::fprintf(stderr, "rank %d (stage %d): peak activations %zu, by hand %zu\n", r, stage,
                         at(p.at_peak, MemCategory::activations), hand);
        DIST_VERIFY(bytes_ok, "the stage's peak bytes equal the hand account");
        bool phase_ok = p.peak_phase >= 0;
        if (phase_ok) {
            const StepPhase& ph = p.phases[static_cast<std::size_t>(p.peak_phase)];
            phase_ok = ph.kind == StepPhaseKind::forward &&
                       (stage == 0 ? ph.layer == 4 && ph.label == "maxpool2d" && ph.micro == 1
                                   : ph.layer == 9 && ph.label == "linear" && ph.micro == 0);
            if (!phase_ok)
                std::fprintf(stderr, "rank %d (stage %d): peak in %s layer %d (%s) micro %d\n", r, stage,
                             step_phase_kind_name(ph.kind), ph.layer, ph.label.c_str(), ph.micro);
        }
        DIST_VERIFY(phase_ok, "the stage's peak phase is the hand account's");
        DIST_VERIFY(p.peak_first_layer == (stage == 0 ? 0 : 7) && p.peak_last_layer == (stage == 0 ? 4 : 9),
                    "the layers live at the peak: the stage's, from its input on");
    }
};

HR_DIST_TEST_MAIN(TimelineRanksTest)
#include "test_timeline_ranks.moc"
