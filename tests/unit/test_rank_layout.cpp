// RankLayout (strategy/rank_layout.h): a run's layout over ranks as one value, its refusals one rule each,
// and the resume policy (what a continued run on another number of ranks becomes), checked against the
// layouts and messages written out here by hand.
#include <QtTest>

#include "base/error.h"
#include "nn/model_spec.h"
#include "plan/planner.h"
#include "strategy/rank_layout.h"

using namespace hr;

namespace {

StrategyConfig layout_of(const std::string& shard, int tp_head, int pipeline) {
    StrategyConfig s;
    s.shard = shard;
    s.tp_head = tp_head;
    s.pipeline = pipeline;
    return s;
}

// The id of the InputError rank_layout throws, "" when it accepts.
std::string refusal(const StrategyConfig& s, int world) {
    try {
        (void)rank_layout(s, world);
        return "";
    } catch (const InputError& e) {
        return e.message().id;
    }
}

}  // namespace

class TestRankLayout : public QObject {
    Q_OBJECT
private slots:
    void dimensionsMultiplyToTheWorld() {
        const RankLayout kd = rank_layout(layout_of("dp", 1, 2), 6);  // K x D
        QCOMPARE(kd.pipeline, 2);
        QCOMPARE(kd.data, 3);
        QCOMPARE(kd.split_head, 1);
        QCOMPARE(kd.world(), 6);
        const RankLayout td = rank_layout(layout_of("dp", 2, 1), 4);  // T x D
        QCOMPARE(td.split_head, 2);
        QCOMPARE(td.data, 2);
        const RankLayout kt = rank_layout(layout_of("none", 2, 2), 4);  // K x T
        QCOMPARE(kt.pipeline, 2);
        QCOMPARE(kt.split_head, 2);
        QCOMPARE(kt.data, 1);
        QCOMPARE(describe_rank_layout(kt), std::string("2 pipeline stages x 2 split-head ranks"));
        QCOMPARE(layout_choice_of(layout_of("none", 2, 2)), std::string());  // (the window offers no K x T)
        const RankLayout z = rank_layout(layout_of("zero3", 1, 1), 4);
        QCOMPARE(z.data, 4);
        QCOMPARE(z.zero, std::string("zero3"));
        QCOMPARE(rank_layout(StrategyConfig{}, 1).world(), 1);
    }

    void eachRefusalIsOneRule() {
        // K x T is built on exactly K x T ranks without --shard; replicas of it (or a shard) are one rule
        QCOMPARE(refusal(layout_of("none", 2, 2), 4), std::string());
        QCOMPARE(refusal(layout_of("dp", 2, 2), 8), std::string("strategy.pipeline_tp"));
        QCOMPARE(refusal(layout_of("zero1", 2, 2), 8), std::string("strategy.pipeline_tp"));
        QCOMPARE(refusal(layout_of("dp", 2, 2), 4), std::string("strategy.pipeline_tp"));
        QCOMPARE(refusal(layout_of("none", 2, 2), 6), std::string("strategy.pipeline_tp"));
        QCOMPARE(refusal(layout_of("none", 1, 2), 3), std::string("strategy.pipeline_world"));
        QCOMPARE(refusal(layout_of("none", 1, 2), 4), std::string("strategy.pipeline_replicas"));
        QCOMPARE(refusal(layout_of("zero2", 1, 2), 4), std::string("strategy.pipeline_zero"));
        QCOMPARE(refusal(layout_of("zero3", 1, 2), 4), std::string("strategy.pipeline_zero"));
        QCOMPARE(refusal(layout_of("dp", 1, 2), 2), std::string("strategy.pipeline_shard"));
        QCOMPARE(refusal(layout_of("none", 2, 1), 3), std::string("strategy.tp_head_world"));
        QCOMPARE(refusal(layout_of("none", 2, 1), 4), std::string("strategy.tp_head_replicas"));
        QCOMPARE(refusal(layout_of("zero2", 2, 1), 4), std::string("strategy.tp_head_zero"));
        QCOMPARE(refusal(layout_of("zero3", 2, 1), 4), std::string("strategy.tp_head_zero"));
        QCOMPARE(refusal(layout_of("zero1", 2, 1), 2), std::string("strategy.tp_head_shard"));  // no replicas to shard over
        QCOMPARE(refusal(layout_of("dp", 2, 1), 2), std::string("strategy.tp_head_shard"));
        QCOMPARE(refusal(layout_of("none", 0, 1), 1), std::string("strategy.tp_head_small"));
        QCOMPARE(refusal(layout_of("none", 1, 0), 1), std::string("strategy.pipeline_small"));
        QCOMPARE(refusal(layout_of("none", 1, 1), 2), std::string("strategy.ranks_without_shard"));
        StrategyConfig split;
        split.pipeline_split = {1, 2};
        QCOMPARE(refusal(split, 1), std::string("strategy.pipeline_split_alone"));
        StrategyConfig rb = layout_of("none", 2, 1);
        rb.rank_batch = {4, 4};
        QCOMPARE(refusal(rb, 2), std::string("strategy.tp_head_rank_batch"));
        QCOMPARE(refusal(layout_of("dp", 1, 2), 4), std::string());  // admitted
        QCOMPARE(refusal(layout_of("zero1", 1, 2), 4), std::string());  // ZeRO-1 inside pipeline stages
        QCOMPARE(refusal(layout_of("zero1", 2, 1), 6), std::string());  // ZeRO-1 with a split head
    }

    // The window's choices (app/gui/TrainingSetupPanel) on 4 ranks, against the layouts written out by hand.
    void choicesLayOutRuns() {
        struct Want {
            const char* choice;
            int data, split_head, pipeline;
            const char* zero;
        };
        const Want four[] = {{"dp", 4, 1, 1, "dp"},          {"zero1", 4, 1, 1, "zero1"},
                             {"zero2", 4, 1, 1, "zero2"},    {"zero3", 4, 1, 1, "zero3"},
                             {"tp-head", 1, 4, 1, "none"},   {"tp-head-dp", 2, 2, 1, "dp"},
                             {"tp-head-zero1", 2, 2, 1, "zero1"}, {"pipeline", 1, 1, 4, "none"},
                             {"pipeline-dp", 2, 1, 2, "dp"}, {"pipeline-zero1", 2, 1, 2, "zero1"}};
        QCOMPARE(layout_choices().size(), std::size(four) + 1);  // and "none"
        for (const Want& w : four) {
            StrategyConfig s;
            s.pipeline_split = {1, 2};
            apply_layout_choice(s, w.choice, 4);
            const RankLayout l = rank_layout(s, 4);  // (a stale split cleared without stages)
            QCOMPARE(l.data, w.data);
            QCOMPARE(l.split_head, w.split_head);
            QCOMPARE(l.pipeline, w.pipeline);
            QCOMPARE(l.zero, std::string(w.zero));
            QCOMPARE(layout_choice_of(s), std::string(w.choice));
            QVERIFY(s.pipeline > 1 || s.pipeline_split.empty());
        }
        // on 2 or 3 ranks the replicated choices are refused by their rule, "none" by its own
        StrategyConfig s;
        apply_layout_choice(s, "pipeline-zero1", 2);
        QCOMPARE(refusal(s, 2), std::string("strategy.pipeline_shard"));
        apply_layout_choice(s, "tp-head-dp", 3);
        QCOMPARE(refusal(s, 3), std::string("strategy.tp_head_world"));
        apply_layout_choice(s, "none", 3);
        QCOMPARE(refusal(s, 3), std::string("strategy.ranks_without_shard"));
        QVERIFY_THROWS_EXCEPTION(InputError, apply_layout_choice(s, "zero4", 2));
    }

    void describedForPeople() {
        QCOMPARE(describe_rank_layout(rank_layout(layout_of("dp", 1, 2), 4)),
                 std::string("2 pipeline stages x 2 data-parallel replicas (dp)"));
        QCOMPARE(describe_rank_layout(rank_layout(layout_of("none", 2, 1), 2)), std::string("2 split-head ranks"));
        QCOMPARE(describe_rank_layout(RankLayout{}), std::string("one process"));
        QCOMPARE(describe_rank_layout(rank_layout(layout_of("zero1", 2, 1), 6)),
                 std::string("2 split-head ranks x 3 data-parallel replicas (zero1)"));
        QCOMPARE(describe_rank_layout(rank_layout(layout_of("zero3", 1, 1), 4)), std::string("4 data-parallel replicas (zero3)"));
        QCOMPARE(describe_rank_layout(rank_layout(layout_of("zero2", 1, 1), 1)), std::string("one process (zero2)"));
        // the message behind it: an id app/ translates, the numbers as arguments
        const Message m = describe_rank_layout_message(rank_layout(layout_of("zero1", 1, 2), 4));
        QCOMPARE(m.id, std::string("layout.kd"));
        QCOMPARE(m.args, (std::vector<std::string>{"2", "2", "zero1"}));
    }

    void resumeRelaysOut() {
        const StrategyConfig none_given;
        const RelayoutAsked nothing;
        StrategyConfig c = layout_of("none", 2, 1);  // a split head resumed on one process: whole
        relayout_for_resume(c, none_given, nothing, 1);
        QCOMPARE(c.tp_head, 1);
        c = layout_of("none", 2, 1);  // ... on 3 ranks: over all three
        relayout_for_resume(c, none_given, nothing, 3);
        QCOMPARE(c.tp_head, 3);
        c = layout_of("none", 1, 2);  // stages on 3 ranks: 3 stages, no replicas
        c.pipeline_split = {2, 3};
        relayout_for_resume(c, none_given, nothing, 3);
        QCOMPARE(c.pipeline, 3);
        QCOMPARE(c.shard, std::string("none"));
        QVERIFY(c.pipeline_split.empty());  // the old split no longer fits
        c = layout_of("none", 1, 2);  // 2 stages on 4 ranks: 2 replicas of them, dp
        relayout_for_resume(c, none_given, nothing, 4);
        QCOMPARE(c.pipeline, 2);
        QCOMPARE(c.shard, std::string("dp"));
        c = layout_of("zero1", 1, 2);  // ... ZeRO-1 inside them stays
        relayout_for_resume(c, none_given, nothing, 4);
        QCOMPARE(c.shard, std::string("zero1"));
        c = layout_of("zero1", 1, 2);  // 2 sharded stages resumed on 2 ranks: no replicas, no ZeRO
        relayout_for_resume(c, none_given, nothing, 2);
        QCOMPARE(c.shard, std::string("none"));
        c = layout_of("dp", 2, 1);  // a split head x 2 replicas on 4 ranks: over all four, no replicas left
        relayout_for_resume(c, none_given, nothing, 4);
        QCOMPARE(c.tp_head, 4);
        QCOMPARE(c.shard, std::string("none"));
        QCOMPARE(refusal(c, 4), std::string());
        c = layout_of("none", 2, 2);  // 2 stages x a split head of 2 resumed on 4 ranks: as it was
        relayout_for_resume(c, none_given, nothing, 4);
        QCOMPARE(c.tp_head, 2);
        QCOMPARE(c.pipeline, 2);
        QCOMPARE(c.shard, std::string("none"));
        QCOMPARE(refusal(c, 4), std::string());
        c = layout_of("none", 2, 2);  // ... on 2 ranks: the head whole, 2 stages
        relayout_for_resume(c, none_given, nothing, 2);
        QCOMPARE(c.tp_head, 1);
        QCOMPARE(c.pipeline, 2);
        QCOMPARE(refusal(c, 2), std::string());
        c = layout_of("none", 2, 2);  // ... on 8 ranks: the head whole, 2 stages x 4 dp replicas
        relayout_for_resume(c, none_given, nothing, 8);
        QCOMPARE(c.tp_head, 1);
        QCOMPARE(c.shard, std::string("dp"));
        QCOMPARE(refusal(c, 8), std::string());
        c = layout_of("none", 2, 2);  // ... on one process: whole
        relayout_for_resume(c, none_given, nothing, 1);
        QCOMPARE(c.tp_head, 1);
        QCOMPARE(c.pipeline, 1);
        QCOMPARE(refusal(c, 1), std::string());
        c = layout_of("zero3", 1, 1);  // --shard zero2 asked: parameter offload (zero3's) goes
        c.offload_parameters = true;
        RelayoutAsked shard;
        shard.shard = true;
        relayout_for_resume(c, layout_of("zero2", 1, 1), shard, 4);
        QCOMPARE(c.shard, std::string("zero2"));
        QCOMPARE(c.offload_parameters, false);
        c = layout_of("none", 2, 1);  // asked dimensions are taken as given
        RelayoutAsked head;
        head.tp_head = true;
        relayout_for_resume(c, layout_of("none", 4, 1), head, 2);
        QCOMPARE(c.tp_head, 4);
    }

    // plan --all on 4 ranks: besides the ZeRO stages, a split head and pipeline stages over 2 ranks with 2
    // data-parallel replicas (T x D, K x D; dp and zero1) and over all 4, and never a layout rank_layout refuses
    void planOffersTheLayoutsItAdmits() {
        PlanRequest r;
        r.spec = preset_model("mlp");
        r.batch = 64;
        r.device = "cpu";
        r.world_size = 4;
        r.train_samples = 6000;
        r.test_samples = 1000;
        r.optimizer.momentum = 0.9;  // (an optimizer state to shard: the momentum)
        const PlanSearch s = search_plans(r, std::size_t(1) << 40);
        bool td = false, kd = false, t4 = false, k4 = false;
        // ZeRO-1 inside them: the same layouts with the optimizer state halved over the 2 replicas (the smallest
        // of each kind, written out: the largest rank's state, every candidate without offload)
        std::size_t state[2][2] = {{SIZE_MAX, SIZE_MAX}, {SIZE_MAX, SIZE_MAX}};  // [head?][zero1?]
        for (const PlanCandidate& c : s.candidates) {
            const StrategyConfig& g = c.strategy;
            td = td || (g.tp_head == 2 && g.shard == "dp");
            kd = kd || (g.pipeline == 2 && g.shard == "dp");
            if ((g.tp_head == 2 || g.pipeline == 2) && !g.offload_optimizer && (g.shard == "dp" || g.shard == "zero1")) {
                std::size_t& m = state[g.tp_head == 2 ? 1 : 0][g.shard == "zero1" ? 1 : 0];
                m = std::min(m, at(c.plan.device, MemCategory::optimizer_state));
            }
            t4 = t4 || (g.tp_head == 4 && g.shard == "none");
            k4 = k4 || (g.pipeline == 4 && g.shard == "none");
            QVERIFY(!(g.tp_head > 1 && g.pipeline > 1));
            QVERIFY(g.tp_head * g.pipeline <= 4);
        }
        QVERIFY(td);
        QVERIFY(kd);
        for (int head = 0; head < 2; ++head) {
            QVERIFY(state[head][1] != SIZE_MAX);  // offered
            qInfo("%s: optimizer state %zu bytes with dp, %zu with zero1", head ? "T x D" : "K x D", state[head][0],
                  state[head][1]);
            QVERIFY(state[head][1] < state[head][0] && 2 * state[head][1] >= state[head][0]);  // about half (padding)
        }
        QVERIFY(t4);
        QVERIFY(k4);
    }
};

QTEST_GUILESS_MAIN(TestRankLayout)
#include "test_rank_layout.moc"
