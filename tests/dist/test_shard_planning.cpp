// ranks: none
// Sharding arithmetic and the planner's per-rank prediction, for any world size without the devices
// (what-if), in one process: unit padding and shard offsets, the per-stage bytes against the ZeRO
// paper's formulas (computed here from the layout, not through the planner), the budget search over
// stages with "needs N GPUs", the strategy checks for ranks, and what a head tied to the token embedding
// adds (its own bucket and gather buffer, its place in the gather schedule).
#include <QtTest>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "plan/planner.h"
#include "strategy/sharding.h"
#include "strategy/training_state.h"

using namespace hr;

namespace {

PlanRequest request(const std::string& preset, std::int64_t batch, const std::string& stage, int ranks,
                    const std::string& precision = "fp32") {
    PlanRequest r;
    r.spec = preset_model(preset);
    r.batch = batch;
    r.strategy.shard = stage;
    r.strategy.precision = precision;
    r.optimizer.kind = "adam";
    r.threads = 1;
    r.world_size = ranks;
    r.train_samples = 1024;
    r.test_samples = 256;
    return r;
}

}  // namespace

class ShardPlanningTest : public QObject {
    Q_OBJECT

private slots:
    void unitsSplitEvenlyAtEveryWorldSize_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("precision");
        for (const char* p : {"seed-cnn", "mlp", "resnet-mini"})
            for (const char* d : {"fp32", "bf16"}) QTest::newRow((std::string(p) + " " + d).c_str()) << p << d;
    }
    void unitsSplitEvenlyAtEveryWorldSize() {
        QFETCH(QString, preset);
        QFETCH(QString, precision);
        const ModelSpec spec = preset_model(preset.toStdString());
        const SpecReport rep = validate_model_spec(spec);
        const std::size_t blocks = checkpoint_blocks(spec).size();
        if (preset == "seed-cnn") QCOMPARE(blocks, std::size_t(4));
        const std::int64_t align = precision == "fp32" ? 64 : 128;  // elements per 256 bytes
        for (int N = 1; N <= 8; ++N) {
            auto ledger = std::make_shared<MemoryLedger>();
            auto be = make_cpu_backend(1, ledger);
            StrategyConfig sc;
            sc.precision = precision.toStdString();
            sc.shard = "zero3";
            TrainingState st(spec, OptimizerConfig{}, resolve_strategy(sc, spec, 64, N, N - 1), 1, *be, be->allocator(),
                             *be, be->allocator(), true);
            const ShardLayout& l = st.shard_layout();
            QCOMPARE(l.units.size(), blocks);
            std::int64_t at = 0, shard_at = 0, values = 0;
            for (const UnitShard& u : l.units) {
                QCOMPARE(u.offset, at);                        // units tile the flat buffer
                QCOMPARE(u.numel % (N * align), std::int64_t(0));  // split into N aligned shards
                QCOMPARE(u.shard_numel * N, u.numel);
                QCOMPARE(u.shard_offset, shard_at);
                QCOMPARE(u.own_offset, u.offset + (N - 1) * u.shard_numel);
                QVERIFY(u.numel - u.values < static_cast<std::int64_t>(8 + 1) * N * align);  // gaps + one tail
                at += u.numel;
                shard_at += u.shard_numel;
                values += u.values;
            }
            QCOMPARE(l.flat_numel, at);
            QCOMPARE(l.shard_numel * N, l.flat_numel);
            QCOMPARE(values, rep.total_params);
            QCOMPARE(l.padding_elements(), l.flat_numel - rep.total_params);
        }
    }

    // What the planner says per rank against the ZeRO paper's per-stage memory, from the layout alone:
    // with Adam and fp32, parameters 4P, gradients 4P, optimizer state 8P (Psi = P, K = 8 bytes);
    // bf16 mixed precision: 2P + 2P + (4 master + 8 state)P, the paper's 2Psi + 2Psi + 12Psi. Sharded
    // terms are per rank: S = P_N / N.
    void stagesFollowTheZeroFormulas_data() {
        QTest::addColumn<QString>("precision");
        QTest::addColumn<int>("ranks");
        for (const char* p : {"fp32", "bf16"})
            for (int n : {2, 3, 8}) QTest::newRow((std::string(p) + " x" + std::to_string(n)).c_str()) << p << n;
    }
    void stagesFollowTheZeroFormulas() {
        QFETCH(QString, precision);
        QFETCH(int, ranks);
        const bool lowp = precision == "bf16";
        const std::size_t b = lowp ? 2 : 4;
        std::map<std::string, MemoryPlan> plan;
        for (const char* s : {"dp", "zero1", "zero2", "zero3"})
            plan[s] = predict_memory(request("resnet-mini", 64, s, ranks, precision.toStdString()));
        const std::size_t P1 = static_cast<std::size_t>(plan["dp"].flat_elements);   // no N-way padding
        const std::size_t S = static_cast<std::size_t>(plan["zero3"].shard_elements);
        const std::size_t PN = static_cast<std::size_t>(plan["zero3"].flat_elements);
        QCOMPARE(S * ranks, PN);
        QVERIFY(PN >= P1 && PN - P1 < 16 * static_cast<std::size_t>(ranks) * 128);
        auto dev = [&](const char* s, MemCategory c) { return at(plan[s].device, c); };
        const std::size_t master = lowp ? 4 : 0;
        // dp: everything replicated
        QCOMPARE(dev("dp", MemCategory::parameters), b * P1);
        QCOMPARE(dev("dp", MemCategory::gradients), b * P1);
        QCOMPARE(dev("dp", MemCategory::optimizer_state), 8 * P1);
        QCOMPARE(dev("dp", MemCategory::master_weights), master * P1);
        // zero1: optimizer state and master weights / N
        QCOMPARE(dev("zero1", MemCategory::parameters), b * PN);
        QCOMPARE(dev("zero1", MemCategory::gradients), b * PN);
        QCOMPARE(dev("zero1", MemCategory::optimizer_state), 8 * S);
        QCOMPARE(dev("zero1", MemCategory::master_weights), master * S);
        // zero2: gradients / N too, plus two unit-sized gradient buckets
        std::size_t U = 0;  // the largest unit, from the layout
        {
            const ModelSpec spec = preset_model("resnet-mini");
            auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
            StrategyConfig sc;
            sc.shard = "zero2";
            sc.precision = precision.toStdString();
            TrainingState st(spec, OptimizerConfig{}, resolve_strategy(sc, spec, 64, ranks, 0), 1, *be, be->allocator(),
                             *be, be->allocator(), true);
            U = static_cast<std::size_t>(st.shard_layout().max_unit_numel);
        }
        QCOMPARE(dev("zero2", MemCategory::gradients), b * S);
        QCOMPARE(dev("zero2", MemCategory::communication), 2 * b * U);
        // zero3: parameters / N too, plus two gather buffers
        QCOMPARE(dev("zero3", MemCategory::parameters), b * S);
        QCOMPARE(dev("zero3", MemCategory::communication), 2 * dev("zero2", MemCategory::communication));
        const std::size_t state3 = dev("zero3", MemCategory::parameters) + dev("zero3", MemCategory::gradients) +
                                   dev("zero3", MemCategory::optimizer_state) + dev("zero3", MemCategory::master_weights);
        QCOMPARE(state3, (2 * b + 8 + master) * S);
        // activations are the stage's business only through the batch
        QCOMPARE(dev("zero3", MemCategory::activations), dev("dp", MemCategory::activations));
        qInfo("resnet-mini %s on %d ranks: P %zu, S %zu; state per rank dp %zu B, zero3 %zu B", qPrintable(precision),
              ranks, P1, S, (2 * b + 8 + master) * P1, state3);
    }

    // A head tied to the token embedding (gpt-char: 6 blocks): unit 0 (the embeddings) has a bucket and, for zero3, a
    // gather buffer of its own, and the rotating pair is sized for the largest other unit; the planner's
    // communication bytes are b (2U' + U0) for zero2 and twice that for zero3, from the layout's unit
    // sizes. zero3's schedule gathers unit 0 once a step (before the forward; the head's unit and the
    // backward find it held) and every other unit as without a tie.
    void tiedHeadKeepsUnitZeroWhole_data() {
        QTest::addColumn<int>("ranks");
        for (int n : {2, 3, 8}) QTest::newRow(qPrintable(QString("x%1").arg(n))) << n;
    }
    void tiedHeadKeepsUnitZeroWhole() {
        QFETCH(int, ranks);
        const ModelSpec spec = preset_model("gpt-char");
        QVERIFY(spec.layers.back().attrs.at("tied").get<bool>());
        auto be = make_cpu_backend(1, std::make_shared<MemoryLedger>());
        StrategyConfig sc;
        sc.shard = "zero3";
        TrainingState st(spec, OptimizerConfig{}, resolve_strategy(sc, spec, 8 * ranks, ranks, 0), 1, *be, be->allocator(),
                         *be, be->allocator(), true);
        const ShardLayout& l = st.shard_layout();
        const int n = static_cast<int>(l.units.size());
        QCOMPARE(l.tied_unit, 0);
        QCOMPARE(l.tied_head_unit, n - 1);
        QCOMPARE(l.units.back().numel, std::int64_t(0));  // the tied head keeps no storage of its own
        std::int64_t other = 0;
        for (int u = 1; u < n; ++u) other = std::max(other, l.units[static_cast<std::size_t>(u)].numel);
        const std::int64_t U0 = l.units[0].numel;
        QCOMPARE(l.rotating_numel, other);
        for (const char* s : {"zero2", "zero3"}) {
            PlanRequest r = request("gpt-char", 8 * ranks, s, ranks);
            const MemoryPlan p = predict_memory(r);
            const std::size_t bytes = 4 * static_cast<std::size_t>(2 * other + U0) * (std::string(s) == "zero3" ? 2 : 1);
            QCOMPARE(at(p.device, MemCategory::communication), bytes);
        }
        // the schedule: forward gathers every unit with storage once, backward re-gathers units n-4 .. 1
        // (the two rotating units the forward ended with are kept, unit 0 is held in its own buffer)
        GatherSchedule g(l);
        for (int b = 0; b < 3; ++b) g.set_holds(b, -1);
        std::vector<int> fwd, bwd;
        for (int u = 0; u < n; ++u)
            for (int v : g.before_forward(u)) fwd.push_back(v);
        for (int u = n - 1; u >= 0; --u)
            for (int v : g.before_backward(u)) bwd.push_back(v);
        std::vector<int> want_fwd, want_bwd;
        for (int u = 0; u < n - 1; ++u) want_fwd.push_back(u);  // the head's unit has nothing to gather
        for (int u = n - 4; u >= 1; --u) want_bwd.push_back(u);
        QCOMPARE(fwd, want_fwd);
        QCOMPARE(bwd, want_bwd);
        QCOMPARE(g.holds(2), 0);
        QCOMPARE(g.after_update(), (std::vector<int>{0, 1}));
    }

    // Any world size, no devices: 8 ranks of zero3, every rank described, uneven batches per rank.
    void whatIfEightRanksWithUnevenBatches() {
        PlanRequest r = request("resnet-mini", 64, "zero3", 8);
        r.strategy.rank_batch = {15, 7, 7, 7, 7, 7, 7, 7};
        const MemoryPlan all = predict_memory(r);
        QCOMPARE(all.world_size, 8);
        QCOMPARE(all.ranks.size(), std::size_t(8));
        QCOMPARE(all.ranks[0].batch, std::int64_t(15));
        QVERIFY(all.ranks[0].device_total > all.ranks[1].device_total);  // the bigger share, more activations
        QCOMPARE(all.rank, 0);
        QCOMPARE(all.device_total, all.ranks[0].device_total);
        for (int q = 2; q < 8; ++q) QCOMPARE(all.ranks[q].device_total, all.ranks[1].device_total);
        r.rank = 5;
        const MemoryPlan five = predict_memory(r);
        QCOMPARE(five.rank, 5);
        QCOMPARE(five.device_total, all.ranks[5].device_total);
        const nlohmann::json j = plan_to_json(all);
        QCOMPARE(j["world_size"].get<int>(), 8);
        QCOMPARE(j["shard"].get<std::string>(), std::string("zero3"));
        QCOMPARE(j["ranks"].size(), std::size_t(8));
        QCOMPARE(j["ranks"][3]["device_total"].get<std::size_t>(), all.ranks[3].device_total);
        QVERIFY(j["communication_bytes_per_step"].get<double>() > 0);
    }

    // The budget search tries every stage with several ranks (a candidate fits when every rank fits);
    // when nothing fits, it says how many ranks would ("needs 4 GPUs").
    void budgetSearchOverStagesAndRanksNeeded() {
        PlanRequest r = request("resnet-mini", 64, "none", 1);
        PlanSearch one = search_plans(r, 1ull << 40);
        QVERIFY(one.best >= 0);
        std::size_t leanest = SIZE_MAX;
        for (const auto& c : one.candidates) leanest = std::min(leanest, c.plan.device_total);
        // a budget below anything one rank can do
        const std::size_t budget = leanest - 1;
        PlanSearch none = search_plans(r, budget);
        QCOMPARE(none.best, -1);
        QVERIFY(none.ranks_needed >= 2);
        QCOMPARE(none.ranks_reason.id, std::string("plan.needs_ranks"));  // CPU ranks; a GPU: plan.needs_gpus
        QCOMPARE(none.ranks_reason.args.size(), std::size_t(4));
        QCOMPARE(none.ranks_reason.args[0], std::to_string(none.ranks_needed));
        QVERIFY(none.ranks_reason.args[1].find("--shard zero3") != std::string::npos);
        // with that many ranks the search finds a fitting candidate, and it is sharded
        r.world_size = none.ranks_needed;
        PlanSearch many = search_plans(r, budget);
        QVERIFY(many.best >= 0);
        const PlanCandidate& best = many.candidates[static_cast<std::size_t>(many.best)];
        QCOMPARE(best.plan.world_size, none.ranks_needed);
        QVERIFY(best.plan.device_total <= budget);
        bool stages[5] = {};
        for (const auto& c : many.candidates) stages[static_cast<int>(parse_shard_stage(c.strategy.shard))] = true;
        QVERIFY(stages[1] && stages[2] && stages[3] && stages[4]);
    }

    void strategyChecksForRanks() {
        const ModelSpec spec = preset_model("seed-cnn");
        StrategyConfig s;
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64, 2, 0));  // ranks need a stage
        s.shard = "zero9";
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64, 1, 0));
        s.shard = "zero2";
        s.rank_batch = {40, 20};
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64, 2, 0));  // 60 != 64
        s.rank_batch = {64};
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64, 2, 0));  // one entry for two ranks
        s.rank_batch = {62, 2};
        s.accumulate = 4;
        QVERIFY_THROWS_EXCEPTION(InputError, resolve_strategy(s, spec, 64, 2, 1));  // 2 samples, 4 micro-batches
        s.accumulate = 2;
        const ResolvedStrategy r1 = resolve_strategy(s, spec, 64, 2, 1);
        QCOMPARE(r1.rank_batch, std::int64_t(2));
        QCOMPARE(r1.sample_offset, std::int64_t(62));
        QCOMPARE(r1.micro_batches().size(), std::size_t(2));
        const ResolvedStrategy r0 = resolve_strategy(s, spec, 64, 2, 0);
        QCOMPARE(r0.micro_batch, std::int64_t(31));
        // even split, remainder to the first ranks; micro-batches as even as can be, the same count
        StrategyConfig e;
        e.shard = "dp";
        e.accumulate = 3;
        const ResolvedStrategy a = resolve_strategy(e, spec, 64, 3, 0), c = resolve_strategy(e, spec, 64, 3, 2);
        QCOMPARE(a.rank_batches, (std::vector<std::int64_t>{22, 21, 21}));
        QCOMPARE(c.sample_offset, std::int64_t(43));
        std::vector<std::pair<std::int64_t, std::int64_t>> want{{0, 8}, {8, 7}, {15, 7}};
        QCOMPARE(a.micro_batches(), want);
        QCOMPARE(a.micro_batch, std::int64_t(8));
        QVERIFY(a.describe().find("dp x 3 ranks") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(ShardPlanningTest)
#include "test_shard_planning.moc"
