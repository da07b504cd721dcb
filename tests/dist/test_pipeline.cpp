// ranks: 2 3 4
// Pipeline stages (--pipeline K, strategy/pipeline.h) on CPU ranks against one process with the same
// micro-batches, run inside every rank: each stage computes what one process computes for its layers, on
// the same inputs, and accumulates its gradients in the same order (micro-batch 0, 1, ...), so the weights
// (gathered from the stages) are bit-identical after 4 steps — with batch norm (one set of running
// statistics shared by the stage's models in flight), dropout (masks keyed on the whole model's layer
// index), residual blocks, and a language model. A GPT whose head is tied to its embedding: to 1e-6 (the
// stages hold a copy each and sum its gradients). Also: the 1F1B schedule itself, a split given by hand
// (uneven cards), checkpoints that move between the layouts both ways, the planner's prediction per
// stage, stages x data-parallel replicas with dp and with ZeRO-1 inside them, stages x a head split over each
// stage's ranks (K x T), and the strategy's refusals.
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "backend/cpu/cpu_backend.h"
#include "base/error.h"
#include "dist_test.h"
#include "dist_training.h"
#include "nn/transformer_spec.h"
#include "plan/planner.h"
#include "train/checkpoint.h"

using namespace hr;
using hrtest::comm;
using hrtest::Trainee;

namespace {

constexpr std::int64_t kBatch = 12;
constexpr int kMicro = 4;  // micro-batches of 3
constexpr int kSteps = 4;

ModelSpec model_named(const std::string& name) {
    if (name == "gpt-tiny untied") {
        ModelSpec s = preset_model("gpt-tiny");
        apply_sequence_length(s, 16);
        s.layers.back().attrs["tied"] = false;
        return s;
    }
    if (name == "mlp+dropout") return hrtest::mlp_with_dropout();
    if (name == "llama-tiny") {  // grouped-query heads, rotary positions, an untied head
        ModelSpec s = preset_model("llama-tiny");
        apply_sequence_length(s, 16);
        return s;
    }
    return preset_model(name);
}

StrategyConfig pipeline_of(int K, std::vector<int> split = {}) {
    StrategyConfig sc;
    sc.pipeline = K;
    sc.pipeline_split = std::move(split);
    sc.accumulate = kMicro;
    return sc;
}

StrategyConfig one_process() {
    StrategyConfig sc;
    sc.accumulate = kMicro;
    return sc;
}

// The step's rows: image batches as Trainee's (hrtest::global_batch), token windows drawn from the step.
struct Rows {
    std::vector<float> x;
    std::vector<std::int64_t> ids, y;
};
Rows rows_of(const ModelSpec& spec, std::uint64_t step) {
    Rows r;
    if (is_token_model(spec)) {
        const std::int64_t T = spec.input_shape[0], V = model_vocabulary(spec);
        std::mt19937_64 g(3000 + step);
        r.ids.resize(static_cast<std::size_t>(kBatch * T));
        r.y.resize(r.ids.size());
        for (auto& v : r.ids) v = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(V));
        for (auto& v : r.y) v = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(V));
    } else {
        hrtest::global_batch(spec, kBatch, step, r.x, r.y);
    }
    return r;
}

// Micro-batch [r0, + n) into the batch buffers: the model's input and the labels.
std::pair<Tensor, Tensor> upload(Trainee& t, const Rows& rows, std::int64_t r0, std::int64_t n) {
    const bool tokens = is_token_model(t.spec);
    const std::int64_t per = tokens ? t.spec.input_shape[0] : shape_numel(t.spec.input_shape);
    Tensor xs = t.st->x_staging.slice0(0, n), ys = t.st->labels.slice0(0, n);
    if (tokens) t.be->copy_from_host(rows.ids.data() + r0 * per, xs);
    else t.be->copy_from_host(rows.x.data() + r0 * per, xs);
    t.be->copy_from_host(rows.y.data() + r0 * (tokens ? per : 1), ys);
    return {xs, ys};
}

// A micro-batch's loss and its gradient (the logits' own buffer for a language model, as the trainer does).
// A split head in the last stage (K x T): its columns' part of the loss (strategy/tp_head.h), as the workloads do.
LossResult loss_of(Trainee& t, const Tensor& logits, const Tensor& y, std::int64_t n, Tensor& grad) {
    const float k = t.st->loss_grad_scale(n);
    if (t.st->tp_head()) {
        const bool tokens = is_token_model(t.spec);
        grad = tokens ? logits : t.st->dlogits.slice0(0, n);
        return t.st->tp_loss(logits, tokens ? y.reshape({n * t.spec.input_shape[0]}) : y, grad, k);
    }
    if (is_token_model(t.spec)) {
        const std::int64_t T = t.spec.input_shape[0];
        grad = logits;
        Tensor lv = grad.reshape({n * T, model_vocabulary(t.spec)});
        return t.be->cross_entropy_inplace(lv, y.reshape({n * T}), true, k);
    }
    grad = t.st->dlogits.slice0(0, n);
    return t.be->softmax_cross_entropy(logits, y, 0.0f, grad, k);
}

// One optimizer step: one process's micro-batch loop, or the stages' 1F1B schedule. Returns the step's loss
// (the last stage's; 0 on the others).
double step(Trainee& t, std::uint64_t step_no) {
    const ResolvedStrategy& s = t.st->strategy();
    const Rows rows = rows_of(t.spec, step_no);
    const auto micro = s.micro_batches();
    t.st->begin_step();
    double loss = 0;
    if (t.st->pipelined()) {
        t.st->pipeline_step(
            static_cast<std::int64_t>(step_no), micro,
            [&](int j) {
                const auto [r0, n] = micro[static_cast<std::size_t>(j)];
                return upload(t, rows, s.sample_offset + r0, n).first;  // this replica's rows of the batch
            },
            [&](int j, const Tensor& logits, Tensor& grad) {
                const auto [r0, n] = micro[static_cast<std::size_t>(j)];
                const LossResult r = loss_of(t, logits, upload(t, rows, s.sample_offset + r0, n).second, n, grad);
                loss += r.loss * double(n) / double(s.batch);
                return r;
            });
    } else {
        for (auto [r0, n] : micro) {
            auto [x, y] = upload(t, rows, r0, n);
            Tensor logits = t.st->model().forward(x, true, t.st->first_sample(static_cast<std::int64_t>(step_no), r0));
            Tensor grad;
            loss += loss_of(t, logits, y, n, grad).loss * double(n) / double(s.batch);
            t.st->model().backward(grad);
        }
    }
    t.st->optimizer_step(t.lr);
    return loss;
}

// Whether the planner's prediction for this rank is its ledger in every category a stage allocates (each
// mismatch is printed).
bool plan_is_ledger(const ModelSpec& spec, const StrategyConfig& sc, const OptimizerConfig& o, Trainee& t) {
    PlanRequest r;
    r.spec = spec;
    r.batch = kBatch;
    r.strategy = sc;
    r.optimizer = o;
    r.threads = 1;
    r.world_size = comm().world_size();
    r.rank = comm().rank();
    const MemoryPlan p = predict_memory(r);
    const CategoryBytes live = t.ledger->snapshot().live;
    bool same = true;
    for (MemCategory c : {MemCategory::parameters, MemCategory::gradients, MemCategory::optimizer_state,
                          MemCategory::activations, MemCategory::workspace, MemCategory::communication})
        if (at(p.device, c) != live[static_cast<std::size_t>(c)]) {
            same = false;
            qWarning("rank %d: %s planned %zu, ledger %zu", comm().rank(), category_name(c), at(p.device, c),
                     live[static_cast<std::size_t>(c)]);
        }
    return same;
}

OptimizerConfig sgd() {
    OptimizerConfig o;
    o.lr = 0.05;
    o.momentum = 0.9;
    return o;
}

// Rank 0's checkpoint on every rank, by name.
std::map<std::string, std::vector<std::uint8_t>> checkpoint_everywhere(TrainingState& st) {
    std::vector<TrainingState::HostTensor> got = st.gather_checkpoint();
    std::map<std::string, std::vector<std::uint8_t>> out;
    std::size_t i = 0;
    for (const TrainingState::CheckpointTensor& c : st.checkpoint_tensors()) {
        if (c.tied) continue;
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(shape_numel(c.shape)) * dtype_size(c.dtype));
        if (!got.empty()) {  // rank 0 of the stages; every rank of one process's
            while (i < got.size() && got[i].name != c.name) ++i;
            if (i == got.size() || got[i].data.size() != bytes.size())
                throw Error("checkpoint tensor " + c.name + " missing or of another size");
            bytes = got[i].data;
        }
        if (st.strategy().world_size > 1) st.broadcast_bytes(bytes.data(), bytes.size());
        out[c.name] = std::move(bytes);
    }
    return out;
}

void restore_from(TrainingState& st, const std::map<std::string, std::vector<std::uint8_t>>& ck,
                  const TrainingState::ResumeScalars& sc) {
    for (const TrainingState::CheckpointTensor& c : st.checkpoint_tensors()) {
        if (c.tied) continue;
        auto it = ck.find(c.name);
        if (it == ck.end() || it->second.size() != static_cast<std::size_t>(shape_numel(c.shape)) * dtype_size(c.dtype))
            throw Error("checkpoint tensor " + c.name + " missing or of another size on restore");
    }
    st.restore_checkpoint([&](const std::string& name) -> const std::uint8_t* {
        auto it = ck.find(name);
        return it == ck.end() ? nullptr : it->second.data();
    });
    st.restore_scalars(sc);
}

}  // namespace

class PipelineTest : public QObject {
    Q_OBJECT

private slots:
    // The 1F1B order: every micro-batch once forward, then once backward, backwards in order, at most
    // K - s in flight on stage s; the last stage alternates.
    void scheduleIs1F1B() {
        for (int K : {2, 3, 4})
            for (int m : {1, 2, 4, 7})
                for (int s = 0; s < K; ++s) {
                    const auto order = pipeline_schedule(K, s, m);
                    QCOMPARE(static_cast<int>(order.size()), 2 * m);
                    std::vector<int> state(static_cast<std::size_t>(m), 0);
                    int in_flight = 0, most = 0, next_back = 0;
                    for (auto [fwd, j] : order) {
                        if (fwd) {
                            QCOMPARE(state[static_cast<std::size_t>(j)], 0);
                            state[static_cast<std::size_t>(j)] = 1;
                            most = std::max(most, ++in_flight);
                        } else {
                            QCOMPARE(state[static_cast<std::size_t>(j)], 1);
                            QCOMPARE(j, next_back++);
                            state[static_cast<std::size_t>(j)] = 2;
                            --in_flight;
                        }
                    }
                    QCOMPARE(most, pipeline_in_flight(K, s, m));
                    if (s == K - 1)
                        for (std::size_t i = 0; i < order.size(); ++i) QCOMPARE(order[i].first, i % 2 == 0);
                }
        QCOMPARE(pipeline_bubble(4, 12), 3.0 / 15.0);
    }

    // The groups each stage exchanges (pipeline_exchanges) played against each other with NCCL's rule, the
    // strict one: a send or a receive finishes only while its partner is posted, a rank's groups run one
    // after the other (one stream), and a group finishes when all of its transfers have. Partners pair in
    // the order each rank issued them (the k-th send from a to b is b's k-th receive from a) and must be
    // the same message. Every rank must get through all of its groups. The same transfers one by one, in
    // the order the 1F1B schedule makes them, do not: that is the deadlock the groups are for.
    void exchangesCannotDeadlock() {
        struct Op {
            int stage, group, index;
        };
        // true when every stage gets through its groups
        auto play = [](int K, const std::vector<std::vector<std::vector<PipelineMessage>>>& groups) {
            // partners, by issue order per direction
            std::map<std::pair<int, int>, std::vector<Op>> sends, recvs;  // (from, to)
            for (int s = 0; s < K; ++s)
                for (int g = 0; g < static_cast<int>(groups[s].size()); ++g)
                    for (int k = 0; k < static_cast<int>(groups[s][g].size()); ++k) {
                        const PipelineMessage& msg = groups[s][g][k];
                        const int peer = msg.peer_stage(s);
                        if (peer < 0 || peer >= K) return false;
                        (msg.send ? sends[{s, peer}] : recvs[{peer, s}]).push_back({s, g, k});
                    }
            std::map<std::tuple<int, int, int>, Op> partner;
            for (auto& [dir, list] : sends) {
                const auto& other = recvs[dir];
                if (other.size() != list.size()) return false;
                for (std::size_t n = 0; n < list.size(); ++n) {
                    const PipelineMessage& a = groups[list[n].stage][list[n].group][list[n].index];
                    const PipelineMessage& b = groups[other[n].stage][other[n].group][other[n].index];
                    if (a.activation != b.activation || a.micro != b.micro) return false;
                    partner[{list[n].stage, list[n].group, list[n].index}] = other[n];
                    partner[{other[n].stage, other[n].group, other[n].index}] = list[n];
                }
            }
            for (auto& [dir, list] : recvs)
                if (sends[dir].size() != list.size()) return false;
            std::vector<int> at(static_cast<std::size_t>(K), 0);
            std::set<std::tuple<int, int, int>> done;
            for (bool moved = true; moved;) {
                moved = false;
                for (int s = 0; s < K; ++s) {
                    const int g = at[static_cast<std::size_t>(s)];
                    if (g >= static_cast<int>(groups[s].size())) continue;
                    bool all = true;
                    for (int k = 0; k < static_cast<int>(groups[s][g].size()); ++k) {
                        if (done.count({s, g, k})) continue;
                        const Op p = partner.at({s, g, k});
                        if (at[static_cast<std::size_t>(p.stage)] == p.group) {
                            done.insert({s, g, k});
                            done.insert({p.stage, p.group, p.index});
                        } else {
                            all = false;
                        }
                    }
                    if (all) {
                        ++at[static_cast<std::size_t>(s)];
                        moved = true;
                    }
                }
            }
            for (int s = 0; s < K; ++s)
                if (at[static_cast<std::size_t>(s)] != static_cast<int>(groups[s].size())) return false;
            return true;
        };
        for (int K = 2; K <= 8; ++K)
            for (int m = 1; m <= 12; ++m) {
                std::vector<std::vector<std::vector<PipelineMessage>>> grouped, one_by_one;
                for (int s = 0; s < K; ++s) {
                    const auto order = pipeline_schedule(K, s, m);
                    grouped.push_back(pipeline_exchanges(K, s, m));
                    QCOMPARE(grouped.back().size(), order.size() + 1);
                    // every action's receive is in the group before it, its send in the one after
                    for (std::size_t t = 0; t < order.size(); ++t) {
                        const auto [fwd, j] = order[t];
                        const bool receives = fwd ? s > 0 : s < K - 1, sends = fwd ? s < K - 1 : s > 0;
                        const auto& before = grouped.back()[t];
                        const auto& after = grouped.back()[t + 1];
                        QCOMPARE(std::count(before.begin(), before.end(), PipelineMessage{false, fwd, j}),
                                 static_cast<long>(receives));
                        QCOMPARE(std::count(after.begin(), after.end(), PipelineMessage{true, fwd, j}),
                                 static_cast<long>(sends));
                    }
                    std::vector<std::vector<PipelineMessage>> singles;
                    for (const auto& g : grouped.back())
                        for (const PipelineMessage& msg : g) singles.push_back({msg});
                    one_by_one.push_back(singles);
                }
                QVERIFY2(play(K, grouped), qPrintable(QString("K=%1 m=%2").arg(K).arg(m)));
                // one by one, stage 0 sends micro-batch 1 while stage 1 sends micro-batch 0's gradient
                if (m >= 2) QVERIFY2(!play(K, one_by_one), qPrintable(QString("K=%1 m=%2").arg(K).arg(m)));
            }
    }

    void stagesEqualOneProcess_data() {
        QTest::addColumn<QString>("model");
        for (const char* m : {"mlp", "mlp+dropout", "seed-cnn", "resnet-mini", "gpt-tiny untied", "llama-tiny"})
            QTest::newRow(m) << m;
        // LoRA (--lora 4): each stage trains its layers' adapters on its frozen layers; a stage may hold no
        // adapter at all (seed-cnn's convolutions)
        for (const char* m : {"seed-cnn lora", "mlp+dropout lora", "gpt-tiny untied lora"}) QTest::newRow(m) << m;
        // QLoRA (--quantize-base int4): each stage holds its projections' packed base
        QTest::newRow("gpt-tiny untied qlora") << "gpt-tiny untied qlora";
        QTest::newRow("llama-tiny lora") << "llama-tiny lora";
        QTest::newRow("llama-tiny qlora") << "llama-tiny qlora";
        // LoRA dropout (--lora-dropout 0.2): each adapter's masks follow the run-wide row on every stage
        QTest::newRow("gpt-tiny untied dlora") << "gpt-tiny untied dlora";
        QTest::newRow("llama-tiny dlora") << "llama-tiny dlora";
    }
    void stagesEqualOneProcess() {
        QFETCH(QString, model);
        const int N = comm().world_size();
        const bool qlora = model.endsWith(QLatin1String(" qlora")), dlora = model.endsWith(QLatin1String(" dlora"));
        const bool lora = qlora || dlora || model.endsWith(QLatin1String(" lora"));
        const ModelSpec spec = model_named(lora ? model.chopped(qlora || dlora ? 6 : 5).toStdString() : model.toStdString());
        StrategyConfig one = one_process(), stages = pipeline_of(N);
        if (lora) one.lora_rank = stages.lora_rank = 4;
        if (dlora) one.lora_dropout = stages.lora_dropout = 0.2;
        if (qlora) one.quantize_base = stages.quantize_base = "int4";
        DIST_GUARD({
            Trainee ref(spec, one, kBatch, sgd(), nullptr);
            Trainee pp(spec, stages, kBatch, sgd(), &comm());
            if (lora) {
                // the frozen base from a file (--init-from: TrainingState::load_weights), another model's weights:
                // every model a stage keeps in flight must compute with it (they share the stage's frozen base)
                auto hb = make_cpu_backend(1, std::make_shared<MemoryLedger>());
                ModelOptions bo;
                bo.batch = 1;
                bo.seed = 99;
                Model base(spec, *hb, bo);
                const SafeTensorsFile file = model_state_file(base);
                const auto load = [&](Model& m) { load_model_state(m, file, "base"); };
                ref.st->load_weights(load);
                pp.st->load_weights(load);
            }
            // each stage holds its layers' parameters only: together, the whole model's once
            const double held = comm().all_reduce_value(static_cast<double>(pp.st->model().param_count()), ReduceOp::sum);
            DIST_VERIFY(held == static_cast<double>(ref.st->model().param_count()) &&
                            pp.st->model().param_count() < ref.st->model().param_count(),
                        "the stages split the parameters");
            const double adapters = comm().all_reduce_value(static_cast<double>(pp.st->model().lora_param_count()), ReduceOp::sum);
            DIST_VERIFY(adapters == static_cast<double>(ref.st->model().lora_param_count()) && (adapters > 0) == lora,
                        "and the adapters");
            const double packed = comm().all_reduce_value(static_cast<double>(pp.st->model().quantized_param_count()), ReduceOp::sum);
            DIST_VERIFY(packed == static_cast<double>(ref.st->model().quantized_param_count()) && (packed > 0) == qlora,
                        "and the quantised base");
            double lr = 0, lp = 0;
            for (int s = 0; s < kSteps; ++s) {
                lr = step(ref, static_cast<std::uint64_t>(s));
                lp = comm().all_reduce_value(step(pp, static_cast<std::uint64_t>(s)), ReduceOp::sum);
            }
            auto wr = ref.weights(), wp = pp.weights();
            auto br = ref.weights(false), bp = pp.weights(false);
            const bool same = hrtest::bit_identical(wp, wr) && hrtest::bit_identical(bp, br);
            qInfo("%s in %d stages (%s layers): %s one process's (worst relative %.3g); loss %.7f vs %.7f",
                  qPrintable(model), N, pp.st->pipeline_split().text().c_str(),
                  same ? "bit-identical to" : "differs from", hrtest::worst_relative(wp, wr), lp, lr);
            // (only rank 0 holds the gathered weights; the verdict is rank 0's, shared)
            DIST_VERIFY(comm().all_reduce_value(comm().rank() == 0 && !same ? 1.0 : 0.0, ReduceOp::sum) == 0,
                        "the stages' weights and buffers are one process's, bit for bit");
            DIST_VERIFY(lp == lr, "the step's loss is one process's");
        });
    }

    // K stages x D data-parallel replicas (4 ranks: 2 stages x 2 replicas, --shard dp): each replica takes half
    // the batch through its stages, the replicas of a stage all-reduce its gradients; one process's weights
    // to 1e-6 (the replicas' halves are summed in another order), every replica of a stage alike, and each
    // rank's ledger is the planner's prediction for it.
    void stagesTimesReplicasEqualOneProcess_data() {
        QTest::addColumn<QString>("model");
        for (const char* m : {"mlp+dropout", "seed-cnn"}) QTest::newRow(m) << m;
    }
    void stagesTimesReplicasEqualOneProcess() {
        QFETCH(QString, model);
        if (comm().world_size() != 4) QSKIP("2 stages x 2 replicas need 4 ranks");
        const ModelSpec spec = model_named(model.toStdString());
        DIST_GUARD({
            StrategyConfig sc = pipeline_of(2);
            sc.shard = "dp";
            Trainee ref(spec, one_process(), kBatch, sgd(), nullptr);
            Trainee pp(spec, sc, kBatch, sgd(), &comm());
            const ResolvedStrategy& rs = pp.st->strategy();
            DIST_VERIFY(rs.stage() == comm().rank() / 2 && rs.data_rank() == comm().rank() % 2 && rs.rank_batch == 6,
                        "rank r is stage r / 2 of replica r % 2, on half the batch");
            for (int s = 0; s < kSteps; ++s) {
                step(ref, static_cast<std::uint64_t>(s));
                step(pp, static_cast<std::uint64_t>(s));
            }
            auto wr = ref.weights(), wp = pp.weights();
            const double rel = hrtest::worst_relative(wp, wr);
            qInfo("%s in 2 stages x 2 replicas: worst relative difference to one process %.3g", qPrintable(model), rel);
            DIST_VERIFY(rel <= 1e-6, "the weights are one process's");
            // the replicas of a stage hold the same parameters, bit for bit
            const Tensor& mine = pp.st->model().parameters();
            std::vector<float> v(static_cast<std::size_t>(mine.numel()));
            pp.be->copy_to_host(mine, v.data());
            double sum = 0;  // a checksum that sees every element and its place
            for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<double>(v[i]) * (1.0 + 1e-3 * static_cast<double>(i));
            double stage_sum[2] = {0, 0}, replica_sum[2] = {0, 0};
            for (int st = 0; st < 2; ++st)
                for (int rep = 0; rep < 2; ++rep) {
                    const double v_r = comm().all_reduce_value(comm().rank() == st * 2 + rep ? sum : 0.0, ReduceOp::sum);
                    (rep == 0 ? stage_sum : replica_sum)[st] = v_r;
                }
            DIST_VERIFY(stage_sum[0] == replica_sum[0] && stage_sum[1] == replica_sum[1],
                        "every replica of a stage holds the same parameters");
            DIST_VERIFY(plan_is_ledger(spec, sc, sgd(), pp), "the plan of this rank is its ledger");
        });
    }

    // ZeRO-1 inside pipeline stages (4 ranks: 2 stages x 2 replicas, --shard zero1): the replicas of a stage
    // all-reduce its gradients as with dp, each updates its half of the stage's flat buffer (the momentum is
    // that half only) and they all-gather the parameters. Against one process with SGD, weight decay and a clip
    // that binds (the global norm over the stages): the weights to 1e-6 after 4 steps, the replicas of a stage
    // alike, the optimizer state half the stage's, each rank's ledger the planner's prediction, and checkpoints
    // that move both ways between one process and the sharded stages. gpt-tiny's head is tied to its embedding
    // (the two ends sum their gradients before the replicas do); mlp+dropout's masks follow the sample index.
    void stagesTimesZeroReplicasEqualOneProcess_data() {
        QTest::addColumn<QString>("model");
        for (const char* m : {"gpt-tiny", "mlp+dropout"}) QTest::newRow(m) << m;
    }
    void stagesTimesZeroReplicasEqualOneProcess() {
        QFETCH(QString, model);
        if (comm().world_size() != 4) QSKIP("2 stages x 2 replicas need 4 ranks");
        ModelSpec spec = model_named(model.toStdString());
        if (is_token_model(spec)) apply_sequence_length(spec, 16);
        OptimizerConfig o = sgd();
        o.weight_decay = 0.01;
        o.grad_clip = 0.5;
        DIST_GUARD({
            StrategyConfig sc = pipeline_of(2);
            sc.shard = "zero1";
            Trainee ref(spec, one_process(), kBatch, o, nullptr);
            Trainee pp(spec, sc, kBatch, o, &comm());
            const ResolvedStrategy& rs = pp.st->strategy();
            DIST_VERIFY(rs.stage() == comm().rank() / 2 && rs.data_rank() == comm().rank() % 2 && rs.rank_batch == 6,
                        "rank r is stage r / 2 of replica r % 2, on half the batch");
            // the shard: this replica's half of its stage's flat buffer, and the momentum is that half (f32)
            const ShardLayout& L = pp.st->shard_layout();
            const std::size_t momentum = pp.ledger->snapshot().live[static_cast<std::size_t>(MemCategory::optimizer_state)];
            qInfo("rank %d: stage of %lld elements, shard %lld; optimizer state %zu bytes", comm().rank(),
                  (long long)L.flat_numel, (long long)L.shard_numel, momentum);
            DIST_VERIFY(L.world_size == 2 && L.rank == comm().rank() % 2 && L.flat_numel == pp.st->model().flat_numel() &&
                            2 * L.shard_numel == L.flat_numel && momentum == static_cast<std::size_t>(L.shard_numel) * 4,
                        "the optimizer state is this replica's half of the stage");
            for (int s = 0; s < kSteps; ++s) {
                step(ref, static_cast<std::uint64_t>(s));
                step(pp, static_cast<std::uint64_t>(s));
            }
            const auto wr = ref.weights(), wp = pp.weights();
            std::string worst;
            const double rel = comm().all_reduce_value(hrtest::worst_relative(wp, wr, &worst), ReduceOp::max);
            const auto w0 = Trainee(spec, one_process(), kBatch, o, nullptr).weights();
            const double moved = hrtest::worst_relative(w0, wr);  // (relative to the trained values: biases start at 0)
            qInfo("%s in 2 stages x 2 zero1 replicas: worst relative difference to one process %.3g (%s); the steps "
                  "moved the weights by %.3g; grad norm %.6g vs %.6g", qPrintable(model), rel, worst.c_str(), moved,
                  pp.st->last_grad_norm(), ref.st->last_grad_norm());
            DIST_VERIFY(rel <= 1e-6 && moved > 1e-3, "the weights are one process's");
            DIST_VERIFY(ref.st->last_grad_norm() > 2 * o.grad_clip, "the clip binds");
            DIST_VERIFY(all_ranks_agree(comm(), std::abs(pp.st->last_grad_norm() - ref.st->last_grad_norm()) <=
                                                    1e-6 * ref.st->last_grad_norm()),
                        "the global norm is one process's");
            // the replicas of a stage hold the same parameters, bit for bit (the all-gather of their halves)
            const Tensor& mine = pp.st->model().parameters();
            std::vector<float> v(static_cast<std::size_t>(mine.numel()));
            pp.be->copy_to_host(mine, v.data());
            double sum = 0;
            for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<double>(v[i]) * (1.0 + 1e-3 * static_cast<double>(i));
            bool alike = true;
            for (int st = 0; st < 2; ++st) {
                const double a = comm().all_reduce_value(comm().rank() == st * 2 ? sum : 0.0, ReduceOp::sum);
                const double b = comm().all_reduce_value(comm().rank() == st * 2 + 1 ? sum : 0.0, ReduceOp::sum);
                alike = alike && a == b;
            }
            DIST_VERIFY(alike, "every replica of a stage holds the same parameters");
            DIST_VERIFY(all_ranks_agree(comm(), plan_is_ledger(spec, sc, o, pp)), "the plan of each rank is its ledger");
            // checkpoints: the sharded stages' continue on one process, one process's in sharded stages
            Trainee half(spec, sc, kBatch, o, &comm());
            for (int s = 0; s < 2; ++s) step(half, static_cast<std::uint64_t>(s));
            const auto ck = checkpoint_everywhere(*half.st);
            Trainee cont(spec, one_process(), kBatch, o, nullptr);
            restore_from(*cont.st, ck, half.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(cont, static_cast<std::uint64_t>(s));
            const double rel1 = comm().all_reduce_value(hrtest::worst_relative(cont.weights(), wr), ReduceOp::max);
            Trainee one(spec, one_process(), kBatch, o, nullptr);
            for (int s = 0; s < 2; ++s) step(one, static_cast<std::uint64_t>(s));
            const auto ck1 = checkpoint_everywhere(*one.st);
            Trainee pp2(spec, sc, kBatch, o, &comm());
            restore_from(*pp2.st, ck1, one.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(pp2, static_cast<std::uint64_t>(s));
            const double rel2 = comm().all_reduce_value(hrtest::worst_relative(pp2.weights(), wr), ReduceOp::max);
            qInfo("zero1 stages -> one process: %.3g; one process -> zero1 stages: %.3g", rel1, rel2);
            DIST_VERIFY(rel1 <= 1e-6 && rel2 <= 1e-6, "checkpoints move between one process and the sharded stages");
        });
    }

    // K pipeline stages x T split-head ranks (4 ranks: --pipeline 2 --tp-head 2): rank r is stage r / 2, part
    // r % 2 of the last stage's head; the first stage's two ranks run the same rows as replicas without a
    // reduction. Against one process with SGD, weight decay and a clip that binds (the global norm counts each
    // stage once and every head part): the weights to 1e-6 after 4 steps (the head's input gradient is a sum
    // over its parts), the step's loss, the first stage's two ranks bit-identical, each rank's ledger the
    // planner's prediction, and checkpoints that move both ways between one process and K x T. With LoRA too.
    void stagesTimesSplitHeadEqualsOneProcess_data() {
        QTest::addColumn<QString>("model");
        for (const char* m : {"mlp", "gpt-tiny untied"}) QTest::newRow(m) << m;
        // LoRA (--lora 4): the split head's adapter A is whole on each of the last stage's ranks, its gradient
        // summed over them
        QTest::newRow("mlp+dropout lora") << "mlp+dropout lora";
    }
    void stagesTimesSplitHeadEqualsOneProcess() {
        QFETCH(QString, model);
        if (comm().world_size() != 4) QSKIP("2 stages x a head split over 2 ranks need 4 ranks");
        const bool lora = model.endsWith(QLatin1String(" lora"));
        const ModelSpec spec = model_named(lora ? model.chopped(5).toStdString() : model.toStdString());
        OptimizerConfig o = sgd();
        o.weight_decay = 0.01;
        o.grad_clip = lora ? 0.05 : 0.5;  // (the adapters' gradients are small)
        DIST_GUARD({
            StrategyConfig sc = pipeline_of(2), one = one_process();
            sc.tp_head = 2;
            if (lora) sc.lora_rank = one.lora_rank = 4;
            Trainee ref(spec, one, kBatch, o, nullptr);
            Trainee pt(spec, sc, kBatch, o, &comm());
            const ResolvedStrategy& rs = pt.st->strategy();
            DIST_VERIFY(rs.stage() == comm().rank() / 2 && rs.tp_rank() == comm().rank() % 2 && rs.data_world() == 1 &&
                            rs.rank_batch == kBatch,
                        "rank r is stage r / 2, head part r % 2, on the whole batch");
            // the last stage's ranks hold half the head's columns each (and its other layers whole): the first
            // stage and one of them hold less than the whole model, with the other more
            auto held_on = [&](int r) {
                return comm().all_reduce_value(comm().rank() == r ? static_cast<double>(pt.st->model().param_count()) : 0.0,
                                               ReduceOp::sum);
            };
            const double h0 = held_on(0), h1 = held_on(1), h2 = held_on(2), h3 = held_on(3);
            const double whole = static_cast<double>(ref.st->model().param_count());
            DIST_VERIFY(h0 == h1 && h2 == h3 && h0 + h2 < whole && h0 + h2 + h3 > whole,
                        "the last stage's ranks hold parts of the head");
            double lr = 0, lp = 0;
            for (int s = 0; s < kSteps; ++s) {
                lr = step(ref, static_cast<std::uint64_t>(s));
                const double mine = step(pt, static_cast<std::uint64_t>(s));  // (the last stage's; 0 before it)
                lp = comm().all_reduce_value(comm().rank() == 2 ? mine : 0.0, ReduceOp::sum);
            }
            const auto wr = ref.weights(), wp = pt.weights();
            std::string worst;
            const double rel = comm().all_reduce_value(hrtest::worst_relative(wp, wr, &worst), ReduceOp::max);
            const auto w0 = Trainee(spec, one, kBatch, o, nullptr).weights();
            const double moved = hrtest::worst_relative(w0, wr);
            qInfo("%s in 2 stages x a head split over 2 ranks: worst relative difference to one process %.3g (%s); "
                  "the steps moved the weights by %.3g; loss %.7f vs %.7f; grad norm %.6g vs %.6g",
                  qPrintable(model), rel, worst.c_str(), moved, lp, lr, pt.st->last_grad_norm(), ref.st->last_grad_norm());
            DIST_VERIFY(wp.size() == wr.size() && rel <= 1e-6 && moved > 1e-3, "the weights are one process's");
            DIST_VERIFY(std::abs(lp - lr) <= 1e-6 * std::abs(lr), "the step's loss is one process's");
            DIST_VERIFY(ref.st->last_grad_norm() > 2 * o.grad_clip, "the clip binds");
            DIST_VERIFY(all_ranks_agree(comm(), std::abs(pt.st->last_grad_norm() - ref.st->last_grad_norm()) <=
                                                    1e-6 * ref.st->last_grad_norm()),
                        "the global norm is one process's");
            // the first stage's two ranks hold the same parameters, bit for bit
            const Tensor& p = pt.st->model().parameters();
            std::vector<float> v(static_cast<std::size_t>(p.numel()));
            pt.be->copy_to_host(p, v.data());
            double sum = 0;
            for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<double>(v[i]) * (1.0 + 1e-3 * static_cast<double>(i));
            const double a = comm().all_reduce_value(comm().rank() == 0 ? sum : 0.0, ReduceOp::sum);
            const double b = comm().all_reduce_value(comm().rank() == 1 ? sum : 0.0, ReduceOp::sum);
            DIST_VERIFY(a == b, "the first stage's ranks hold the same parameters");
            DIST_VERIFY(all_ranks_agree(comm(), plan_is_ledger(spec, sc, o, pt)), "the plan of each rank is its ledger");
            // checkpoints: K x T's continues on one process, one process's in K x T
            Trainee half(spec, sc, kBatch, o, &comm());
            for (int s = 0; s < 2; ++s) step(half, static_cast<std::uint64_t>(s));
            const auto ck = checkpoint_everywhere(*half.st);
            Trainee cont(spec, one, kBatch, o, nullptr);
            restore_from(*cont.st, ck, half.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(cont, static_cast<std::uint64_t>(s));
            const double rel1 = comm().all_reduce_value(hrtest::worst_relative(cont.weights(), wr), ReduceOp::max);
            Trainee first(spec, one, kBatch, o, nullptr);
            for (int s = 0; s < 2; ++s) step(first, static_cast<std::uint64_t>(s));
            const auto ck1 = checkpoint_everywhere(*first.st);
            Trainee pt2(spec, sc, kBatch, o, &comm());
            restore_from(*pt2.st, ck1, first.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(pt2, static_cast<std::uint64_t>(s));
            const double rel2 = comm().all_reduce_value(hrtest::worst_relative(pt2.weights(), wr), ReduceOp::max);
            qInfo("K x T -> one process: %.3g; one process -> K x T: %.3g", rel1, rel2);
            DIST_VERIFY(rel1 <= 1e-6 && rel2 <= 1e-6, "checkpoints move between one process and K x T");
        });
    }

    // A head tied to the token embedding (every GPT preset; Megatron-LM's embedding group): the last stage
    // holds a copy of the weight, initialised as the embedding, and the two stages sum their gradients of it
    // each step. Against one process, with SGD and a gradient clip that binds (the copy must count once in
    // the global norm): the weights to 1e-6 after 4 steps (the two halves of the shared gradient are summed
    // in another order), the copy equal to the embedding bit for bit, the plan of each stage its ledger (the
    // copy's parameters, gradients and moments included), and checkpoints that move both ways between one
    // process and the stages.
    void tiedHeadEqualsOneProcess() {
        const int N = comm().world_size();
        ModelSpec spec = preset_model("gpt-tiny");
        apply_sequence_length(spec, 16);
        // (SGD: Adam would turn the rounding noise of gradients that are zero in exact arithmetic, such as the
        // attention keys' bias's, into whole steps)
        OptimizerConfig adamw = sgd();
        adamw.weight_decay = 0.01;
        adamw.grad_clip = 0.5;
        DIST_GUARD({
            Trainee ref(spec, one_process(), kBatch, adamw, nullptr);
            Trainee pp(spec, pipeline_of(N), kBatch, adamw, &comm());
            const std::vector<NamedTensor> mine = pp.st->model().state_dict();
            const bool first = comm().rank() == 0, last = comm().rank() == N - 1;
            // the copy's place: the last stage's own lm_head weight, untied
            bool copy_ok = true;
            for (const NamedTensor& t : mine)
                if (t.name == "lm_head.weight") copy_ok = last && !t.tied && t.trainable;
            DIST_VERIFY(all_ranks_agree(comm(), copy_ok), "the last stage holds the head's weight as its own");
            // a checksum of the embedding (stage 0) and of the copy (the last stage): equal, bit for bit
            auto checksum = [&](const char* name) {
                double sum = 0;
                for (const NamedTensor& t : pp.st->model().state_dict())
                    if (t.name == name) {
                        std::vector<float> v(static_cast<std::size_t>(t.tensor.numel()));
                        pp.be->copy_to_host(t.tensor, v.data());
                        for (std::size_t i = 0; i < v.size(); ++i) sum += static_cast<double>(v[i]) * (1.0 + 1e-3 * static_cast<double>(i));
                    }
                return sum;
            };
            auto copies_agree = [&] {
                const double e = comm().all_reduce_value(first ? checksum("transformer.wte.weight") : 0.0, ReduceOp::sum);
                const double h = comm().all_reduce_value(last ? checksum("lm_head.weight") : 0.0, ReduceOp::sum);
                return e == h && e != 0;
            };
            DIST_VERIFY(copies_agree(), "the copy starts as the embedding");
            for (int s = 0; s < kSteps; ++s) {
                step(ref, static_cast<std::uint64_t>(s));
                step(pp, static_cast<std::uint64_t>(s));
            }
            DIST_VERIFY(copies_agree(), "the copy is the embedding after 4 steps");
            DIST_VERIFY(ref.st->last_grad_norm() > 2 * adamw.grad_clip, "the clip binds");
            const double norm_rel = std::abs(pp.st->last_grad_norm() - ref.st->last_grad_norm()) / ref.st->last_grad_norm();
            DIST_VERIFY(all_ranks_agree(comm(), norm_rel <= 1e-6), "the global norm counts the shared weight once");
            std::string worst;
            const auto wr = ref.weights(), wp = pp.weights();
            const double rel = comm().all_reduce_value(first ? hrtest::worst_relative(wp, wr, &worst) : 0.0, ReduceOp::max);
            const auto w0 = Trainee(spec, one_process(), kBatch, adamw, nullptr).weights();
            const std::string e = "transformer.wte.weight";
            const double moved = hrtest::worst_relative({{e, wr.at(e)}}, {{e, w0.at(e)}});
            qInfo("gpt-tiny (tied) in %d stages (%s layers): worst relative difference to one process %.3g (%s); "
                  "the steps moved the weights by %.3g", N, pp.st->pipeline_split().text().c_str(), rel, worst.c_str(), moved);
            DIST_VERIFY(rel <= 1e-6 && moved > 1e-3, "the stages' weights are one process's");
            DIST_VERIFY(all_ranks_agree(comm(), plan_is_ledger(spec, pipeline_of(N), adamw, pp)),
                        "the plan of each stage is its ledger");
            // the two ends' all-reduce of the shared weight's gradient (V x C floats) in the planned traffic
            PlanRequest r;
            r.spec = spec;
            r.batch = kBatch;
            r.strategy = pipeline_of(N);
            r.optimizer = adamw;
            r.threads = 1;
            r.world_size = N;
            r.rank = comm().rank();
            PlanRequest untied = r;
            untied.spec.layers.back().attrs["tied"] = false;
            const double extra = predict_memory(r).communication_bytes - predict_memory(untied).communication_bytes;
            DIST_VERIFY(all_ranks_agree(comm(), extra == (first || last ? 256.0 * 128 * 4 : 0.0)),
                        "the planned traffic has the shared gradient's all-reduce on the two ends");
            // checkpoints: one process's continues in stages, the stages' on one process
            Trainee one(spec, one_process(), kBatch, adamw, nullptr);
            for (int s = 0; s < 2; ++s) step(one, static_cast<std::uint64_t>(s));
            const auto ck = checkpoint_everywhere(*one.st);
            Trainee pp2(spec, pipeline_of(N), kBatch, adamw, &comm());
            restore_from(*pp2.st, ck, one.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(pp2, static_cast<std::uint64_t>(s));
            const auto w2 = pp2.weights();
            const double rel2 = comm().all_reduce_value(first ? hrtest::worst_relative(w2, wr) : 0.0, ReduceOp::max);
            Trainee half(spec, pipeline_of(N), kBatch, adamw, &comm());
            for (int s = 0; s < 2; ++s) step(half, static_cast<std::uint64_t>(s));
            const auto ck2 = checkpoint_everywhere(*half.st);
            Trainee cont(spec, one_process(), kBatch, adamw, nullptr);
            restore_from(*cont.st, ck2, half.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(cont, static_cast<std::uint64_t>(s));
            const double rel3 = hrtest::worst_relative(cont.weights(), wr);
            qInfo("one process -> stages: %.3g; stages -> one process: %.3g", rel2, rel3);
            DIST_VERIFY(rel2 <= 1e-6 && comm().all_reduce_value(rel3, ReduceOp::max) <= 1e-6,
                        "checkpoints move between one process and the stages");
        });
    }

    // A split by hand (a bigger first card takes more layers): still one process's weights.
    void splitByHand() {
        const int N = comm().world_size();
        const ModelSpec spec = preset_model("mlp");  // 6 top-level layers
        std::vector<int> split(static_cast<std::size_t>(N), 1);
        split[0] = 6 - (N - 1);
        DIST_GUARD({
            Trainee ref(spec, one_process(), kBatch, sgd(), nullptr);
            Trainee pp(spec, pipeline_of(N, split), kBatch, sgd(), &comm());
            for (int s = 0; s < kSteps; ++s) {
                step(ref, static_cast<std::uint64_t>(s));
                step(pp, static_cast<std::uint64_t>(s));
            }
            const bool same = hrtest::bit_identical(pp.weights(), ref.weights());
            DIST_VERIFY(pp.st->pipeline_split().text() == [&] {
                std::string t;
                for (std::size_t i = 0; i < split.size(); ++i) t += (i ? "," : "") + std::to_string(split[i]);
                return t;
            }(), "the split given");
            DIST_VERIFY(comm().all_reduce_value(comm().rank() == 0 && !same ? 1.0 : 0.0, ReduceOp::sum) == 0,
                        "a split by hand gives one process's weights");
        });
    }

    // Checkpoints hold the whole model in one process's layout: the stages' continue on one process and
    // one process's continue in stages, each bit-identical to one process that never stopped.
    void checkpointsMoveBetweenLayouts() {
        const int N = comm().world_size();
        const ModelSpec spec = preset_model("resnet-mini");  // batch norm: the running statistics travel too
        DIST_GUARD({
            Trainee whole(spec, one_process(), kBatch, sgd(), nullptr);
            for (int s = 0; s < kSteps; ++s) step(whole, static_cast<std::uint64_t>(s));
            Trainee pp(spec, pipeline_of(N), kBatch, sgd(), &comm());
            for (int s = 0; s < 2; ++s) step(pp, static_cast<std::uint64_t>(s));
            const auto ck = checkpoint_everywhere(*pp.st);
            Trainee cont(spec, one_process(), kBatch, sgd(), nullptr);
            restore_from(*cont.st, ck, pp.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(cont, static_cast<std::uint64_t>(s));
            const bool a = hrtest::bit_identical(cont.weights(), whole.weights()) &&
                           hrtest::bit_identical(cont.weights(false), whole.weights(false));
            Trainee first(spec, one_process(), kBatch, sgd(), nullptr);
            for (int s = 0; s < 2; ++s) step(first, static_cast<std::uint64_t>(s));
            const auto ck1 = checkpoint_everywhere(*first.st);
            Trainee pp2(spec, pipeline_of(N), kBatch, sgd(), &comm());
            restore_from(*pp2.st, ck1, first.st->resume_scalars());
            for (int s = 2; s < kSteps; ++s) step(pp2, static_cast<std::uint64_t>(s));
            auto w2 = pp2.weights(), b2 = pp2.weights(false);  // collective: every rank
            const bool b = comm().rank() != 0 ||
                           (hrtest::bit_identical(w2, whole.weights()) && hrtest::bit_identical(b2, whole.weights(false)));
            qInfo("stages -> one process: %s; one process -> %d stages: %s", a ? "bit-identical" : "differs", N,
                  b ? "bit-identical" : "differs");
            DIST_VERIFY(a, "the stages' checkpoint continues on one process");
            DIST_VERIFY(b, "one process's checkpoint continues in stages");
        });
    }

    // The planner builds each stage as the run does: its prediction for every rank is that rank's ledger.
    void plannerPredictsEachStage() {
        const int N = comm().world_size();
        const ModelSpec spec = preset_model("resnet-mini");
        DIST_GUARD({
            Trainee pp(spec, pipeline_of(N), kBatch, OptimizerConfig{}, &comm());
            PlanRequest r;
            r.spec = spec;
            r.batch = kBatch;
            r.strategy = pipeline_of(N);
            r.threads = 1;
            r.world_size = N;
            r.rank = comm().rank();
            const MemoryPlan p = predict_memory(r);
            qInfo("stage %d: planned activations %zu; bubble %.3f; balanced by time %s, by memory %s", comm().rank(),
                  at(p.device, MemCategory::activations), p.pipeline_bubble, p.split_by_time.c_str(),
                  p.split_by_memory.c_str());
            DIST_VERIFY(plan_is_ledger(spec, pipeline_of(N), OptimizerConfig{}, pp), "the plan of this stage is its ledger");
            DIST_VERIFY(p.pipeline_bubble == pipeline_bubble(N, kMicro), "the bubble of the plan's micro-batches");
        });
    }

    // What the strategy refuses, with the flag named and what to do.
    void refusals() {
        const int N = comm().world_size();
        auto refused = [&](const ModelSpec& spec, StrategyConfig sc, int world, const char* says) {
            try {
                resolve_strategy(sc, spec, kBatch, world, 0);
            } catch (const InputError& e) {
                return QString::fromStdString(e.what()).contains(says);
            }
            return false;
        };
        const ModelSpec mlp = preset_model("mlp");
        QVERIFY(refused(mlp, pipeline_of(N), N + 1, "start it on"));
        StrategyConfig z = pipeline_of(N);
        z.shard = "zero1";
        QVERIFY(refused(mlp, z, N, "--shard"));  // stages alone: no replicas to shard over
        z.shard = "zero2";  // K x D: zero1 or dp only
        QVERIFY(refused(mlp, z, 2 * N, "with --shard zero2 is not built"));
        StrategyConfig ck = pipeline_of(N);
        ck.checkpoint = "all";
        QVERIFY(refused(mlp, ck, N, "--checkpoint"));
        QVERIFY(refused(mlp, pipeline_of(N, std::vector<int>(static_cast<std::size_t>(N) + 1, 1)), N, "one layer count per stage"));
        QVERIFY(refused(mlp, pipeline_of(N, std::vector<int>(static_cast<std::size_t>(N), 1)), N, "adds up to"));
        StrategyConfig lone;
        lone.pipeline_split = {3, 3};
        QVERIFY(refused(mlp, lone, 1, "--pipeline-split needs --pipeline"));
        QVERIFY(refused(mlp, pipeline_of(7), 7, "fewer than the stages"));
    }
};

HR_DIST_TEST_MAIN(PipelineTest)
#include "test_pipeline.moc"
