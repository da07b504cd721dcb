// One owner and one serialiser per record (docs/design.md decision 11): the trainer's events, its result
// and the ledger's snapshot each have one JSON form (train/record_json.h, memory/ledger_json.h), which
// run.json, a rank's lines to the window and the history share. The expected objects are written out here
// by hand, field by field, so a field the one list forgets, renames or reads back wrongly fails.
#include <QtTest>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "test_support.h"
#include "train/record_json.h"
#include "train/run_record.h"
#include "train/run_summary.h"

using namespace hr;
using json = nlohmann::json;

namespace {

LedgerSnapshot sample_ledger() {
    LedgerSnapshot s;
    at(s.live, MemCategory::parameters) = 400;
    at(s.peak, MemCategory::activations) = 900;
    at(s.at_peak, MemCategory::gradients) = 300;
    s.live_total = 400;
    s.peak_total = 1300;
    s.reserved_free = 64;
    s.peak_reserved = 1400;
    s.peak_phase = "backward";
    s.peak_step = 7;
    s.layers[-1] = {16, 32};  // not a layer's: the data, the workspace
    s.layers[2] = {100, 500};
    s.layer_peak_split[-1] = {};
    at(s.layer_peak_split[-1], MemCategory::data) = 32;
    at(s.layer_peak_split[2], MemCategory::activations) = 500;
    return s;
}

bool same_ledger(const LedgerSnapshot& a, const LedgerSnapshot& b) {
    if (a.layers.size() != b.layers.size()) return false;
    for (const auto& [k, v] : a.layers)
        if (!b.layers.count(k) || b.layers.at(k).live != v.live || b.layers.at(k).peak != v.peak) return false;
    return a.live == b.live && a.peak == b.peak && a.at_peak == b.at_peak && a.live_total == b.live_total &&
           a.peak_total == b.peak_total && a.reserved_free == b.reserved_free && a.peak_reserved == b.peak_reserved &&
           a.peak_phase == b.peak_phase && a.peak_step == b.peak_step && a.layer_peak_split == b.layer_peak_split;
}

// Every field of a TrainResult away from its default.
TrainResult full_result() {
    TrainResult r;
    r.status = "stopped";
    r.error = "e";
    r.error_messages = {Message(HR_MSG("x.y", "a %1"), {"b"})};
    r.bad_input = true;
    r.test_accuracy = 0.25;
    r.test_loss = NAN;
    r.train_loss = 1.5;
    r.train_accuracy = 0.75;
    r.steps = 12;
    r.epochs_completed = 3;
    r.seconds = 4.5;
    r.train_seconds = 2.25;
    r.images_per_second = 100.5;
    EpochEvent e;
    e.epoch = 1;
    e.step = 4;
    e.test_loss = NAN;
    e.tokens_per_second = 9;
    r.epochs = {e};
    r.ledger = sample_ledger();
    r.tokens_per_second = 321.5;
    EvalEvent ev;
    ev.step = 12;
    ev.loss = 2.5;
    ev.tokens = 640;
    r.evals = {ev};
    r.tokenizer = "bpe:300";
    r.vocab_size = 300;
    r.seq = 32;
    r.device_name = "cpu (x)";
    r.param_count = 1234;
    r.train_samples = 1000;
    r.test_samples = 200;
    r.data_source = "/d";
    r.strategy = "zero2";
    r.skipped_steps = 2;
    r.final_loss_scale = 1024;
    r.host_ledger.peak_total = 77;
    r.out_of_memory = true;
    r.oom_category = "activations";
    r.oom_limit = 4096;
    r.resumed_from_step = 6;
    r.checkpoint = "/d/step-12.safetensors";
    r.weights_notes = {"matched by name"};
    r.world_size = 4;
    r.rank = 1;
    r.shard = "zero2";
    r.tp_head = 2;
    r.stage_layers = {3, 4};
    r.rank_batches = {8, 8};
    r.rank_peak_bytes = {10, 11};
    r.rank_resident_peak_bytes = {12, -1};
    r.rank_communication_overhead_bytes = {5, 6};
    r.communication_bytes_per_step = 1e6;
    r.communication_seconds_per_step = 0.01;
    r.offload_bytes_per_step = 2e6;
    r.lora_before_loss = 3.5;
    r.lora_before_accuracy = 0.125;
    r.loss_before = 3.25;
    r.accuracy_before = 0.0625;
    r.lora_params = 64;
    r.frozen_params = 1000;
    r.lora_rank = 4;
    r.lora_alpha = 8;
    r.lora_dropout = 0.25;
    r.lora_base_bits = 4;
    r.quantized_params = 900;
    return r;
}

}  // namespace

class TestRecords : public QObject {
    Q_OBJECT
private slots:
    void stepEventIsWrittenByName() {
        StepEvent e;
        e.step = 5;
        e.total_steps = 10;
        e.epoch = 2;
        e.step_in_epoch = 1;
        e.steps_per_epoch = 4;
        e.loss = 0.5;
        e.accuracy = NAN;
        e.lr = 0.1;
        e.skipped = true;
        e.grad_norm = 3;
        const json j = e;
        const json expected = {{"step", 5}, {"total_steps", 10}, {"epoch", 2}, {"step_in_epoch", 1},
                               {"steps_per_epoch", 4}, {"loss", 0.5}, {"accuracy", nullptr}, {"lr", 0.1},
                               {"step_seconds", 0.0}, {"images_per_second", 0.0}, {"elapsed_seconds", 0.0},
                               {"eta_seconds", 0.0}, {"loss_scale", 0.0}, {"skipped", true},
                               {"tokens_per_second", 0.0}, {"grad_norm", 3.0}};
        QCOMPARE(j.dump(), expected.dump());
        const StepEvent back = j.get<StepEvent>();
        QCOMPARE(back.step, std::int64_t(5));
        QVERIFY(std::isnan(back.accuracy));  // null reads back as "not measured"
        QCOMPARE(back.skipped, true);
        QCOMPARE(back.grad_norm, 3.0);
    }

    void evalEventUsesRunJsonNames() {
        EvalEvent e;
        e.loss = 1.25;
        e.accuracy = 0.5;
        const json j = e;
        QCOMPARE(j.at("test_loss").get<double>(), 1.25);
        QCOMPARE(j.at("test_accuracy").get<double>(), 0.5);
        QVERIFY(!j.contains("loss"));
    }

    void ledgerKeepsLayersApartFromUnattributed() {
        const LedgerSnapshot s = sample_ledger();
        const json j = s;
        QCOMPARE(j.at("layers").size(), std::size_t(1));  // model layers only (model.layers[].index)
        QCOMPARE(j.at("layers")[0].dump(), json({{"layer", 2}, {"live", 100}, {"peak", 500}}).dump());
        QCOMPARE(j.at("unattributed").at("peak").get<int>(), 32);
        QCOMPARE(j.at("unattributed").at("at_peak").at("data").get<int>(), 32);
        QCOMPARE(j.at("peak").size(), std::size_t(kMemCategoryCount));  // every category, always
        QCOMPARE(j.at("peak").at("activations").get<int>(), 900);
        QVERIFY(same_ledger(j.get<LedgerSnapshot>(), s));
        QVERIFY(same_ledger(json(LedgerSnapshot{}).get<LedgerSnapshot>(), LedgerSnapshot{}));
    }

    void resultRoundTripsEveryField() {
        const TrainResult r = full_result();
        const json j = r;
        const TrainResult b = j.get<TrainResult>();
        QCOMPARE(b.status, r.status);
        QCOMPARE(b.error, r.error);
        QCOMPARE(b.error_messages.size(), std::size_t(1));
        QCOMPARE(b.error_messages[0].english(), std::string("a b"));
        QCOMPARE(b.error_messages[0].id, std::string("x.y"));
        QCOMPARE(b.bad_input, true);
        QCOMPARE(b.test_accuracy, 0.25);
        QVERIFY(std::isnan(b.test_loss));
        QCOMPARE(b.train_loss, 1.5);
        QCOMPARE(b.train_accuracy, 0.75);
        QCOMPARE(b.steps, std::int64_t(12));
        QCOMPARE(b.epochs_completed, 3);
        QCOMPARE(b.seconds, 4.5);
        QCOMPARE(b.train_seconds, 2.25);
        QCOMPARE(b.images_per_second, 100.5);
        QCOMPARE(b.epochs.size(), std::size_t(1));
        QCOMPARE(b.epochs[0].step, std::int64_t(4));
        QVERIFY(std::isnan(b.epochs[0].test_loss));
        QCOMPARE(b.epochs[0].tokens_per_second, 9.0);
        QVERIFY(same_ledger(b.ledger, r.ledger));
        QCOMPARE(b.tokens_per_second, 321.5);
        QCOMPARE(b.evals.size(), std::size_t(1));
        QCOMPARE(b.evals[0].loss, 2.5);
        QCOMPARE(b.evals[0].tokens, std::int64_t(640));
        QCOMPARE(b.tokenizer, std::string("bpe:300"));
        QCOMPARE(b.vocab_size, std::int64_t(300));
        QCOMPARE(b.seq, std::int64_t(32));
        QCOMPARE(b.device_name, std::string("cpu (x)"));
        QCOMPARE(b.param_count, std::int64_t(1234));
        QCOMPARE(b.train_samples, std::int64_t(1000));
        QCOMPARE(b.test_samples, std::int64_t(200));
        QCOMPARE(b.data_source, std::string("/d"));
        QCOMPARE(b.strategy, std::string("zero2"));
        QCOMPARE(b.skipped_steps, std::int64_t(2));
        QCOMPARE(b.final_loss_scale, 1024.0);
        QCOMPARE(b.host_ledger.peak_total, std::size_t(77));
        QCOMPARE(b.out_of_memory, true);
        QCOMPARE(b.oom_category, std::string("activations"));
        QCOMPARE(b.oom_limit, std::size_t(4096));
        QCOMPARE(b.resumed_from_step, std::int64_t(6));
        QCOMPARE(b.checkpoint, r.checkpoint);
        QCOMPARE(b.weights_notes, r.weights_notes);
        QCOMPARE(b.world_size, 4);
        QCOMPARE(b.rank, 1);
        QCOMPARE(b.shard, std::string("zero2"));
        QCOMPARE(b.tp_head, 2);
        QCOMPARE(b.stage_layers, r.stage_layers);
        QCOMPARE(b.rank_batches, r.rank_batches);
        QCOMPARE(b.rank_peak_bytes, r.rank_peak_bytes);
        QCOMPARE(b.rank_resident_peak_bytes, r.rank_resident_peak_bytes);
        QCOMPARE(b.rank_communication_overhead_bytes, r.rank_communication_overhead_bytes);
        QCOMPARE(b.communication_bytes_per_step, 1e6);
        QCOMPARE(b.communication_seconds_per_step, 0.01);
        QCOMPARE(b.offload_bytes_per_step, 2e6);
        QCOMPARE(b.lora_before_loss, 3.5);
        QCOMPARE(b.lora_before_accuracy, 0.125);
        QCOMPARE(b.loss_before, 3.25);
        QCOMPARE(b.accuracy_before, 0.0625);
        QCOMPARE(b.lora_params, std::int64_t(64));
        QCOMPARE(b.frozen_params, std::int64_t(1000));
        QCOMPARE(b.lora_rank, 4);
        QCOMPARE(b.lora_alpha, 8.0);
        QCOMPARE(b.lora_dropout, 0.25);
        QCOMPARE(b.lora_base_bits, 4);
        QCOMPARE(b.quantized_params, std::int64_t(900));
        // and nothing else is written: the fields above are all the record has (what_if travels as
        // run.json's final.compression)
        QCOMPARE(j.size(), std::size_t(63));
    }

    // A rank's step timeline reaches its parent whole: the parent's run.json summary is the rank's own.
    void stepTimelineTravelsWhole() {
        CategoryBytes base{};
        base[static_cast<int>(MemCategory::parameters)] = 4096;
        StepRecorder rec(base, 2, 1);
        rec.phase(StepPhaseKind::forward, 0, -1, "linear");
        rec.use(MemCategory::activations, 0, 1000);
        rec.phase(StepPhaseKind::forward, 1, -1, "relu");
        rec.use(MemCategory::activations, 1, 500);
        rec.phase(StepPhaseKind::backward, 1, -1, "relu");
        rec.use(MemCategory::activations, 1, -500);
        rec.phase(StepPhaseKind::update);
        TrainResult r;
        r.step_timeline = rec.finish();
        QCOMPARE(r.step_timeline.peak_total, std::size_t(4096 + 1500));  // written out: base + both layers
        const nlohmann::json j = r;
        const TrainResult b = j.get<TrainResult>();
        QCOMPARE(b.step_timeline.events.size(), r.step_timeline.events.size());
        QCOMPARE(b.step_timeline.events.back().live_total, r.step_timeline.events.back().live_total);
        QCOMPARE(QString::fromStdString(step_timeline_summary_json(b.step_timeline).dump()),
                 QString::fromStdString(step_timeline_summary_json(r.step_timeline).dump()));
        nlohmann::json bad = j;
        bad["step_timeline"]["events"][0][1] = 99;  // no such category
        QVERIFY_THROWS_EXCEPTION(InputError, (void)bad.get<TrainResult>());
        nlohmann::json none = j;
        none.erase("step_timeline");  // an older rank: no timeline
        QVERIFY(none.get<TrainResult>().step_timeline.empty());
    }

    void olderResultKeepsDefaults() {
        // a record from a writer that knew fewer fields: the missing ones keep TrainResult's defaults
        const TrainResult b = json({{"status", "finished"}, {"steps", 3}}).get<TrainResult>();
        QCOMPARE(b.steps, std::int64_t(3));
        QCOMPARE(b.world_size, 1);
        QCOMPARE(b.tp_head, 1);
        QCOMPARE(b.shard, std::string("none"));
        QCOMPARE(b.resumed_from_step, std::int64_t(-1));
        QVERIFY(std::isnan(b.lora_before_loss));
        QVERIFY(std::isnan(b.loss_before));
    }

    void wrongKindIsRefusedByName() {
        try {
            (void)json({{"steps", "ten"}}).get<TrainResult>();
            QFAIL("a string for steps was accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.message().id, std::string("event.field_type"));
            QVERIFY(e.message().english().find("\"steps\"") != std::string::npos);
        }
        QVERIFY_THROWS_EXCEPTION(InputError, (void)json({{"device", 3}}).get<DeviceEvent>());
    }

    void runJsonUsesTheSameForms() {
        TrainConfig c;
        c.data = "synthetic:8";
        TrainResult r = full_result();
        r.world_size = 1;
        const json rec = make_run_record(c, r);
        QCOMPARE(rec.at("epochs").dump(), json(r.epochs).dump());
        QVERIFY(rec.at("epochs")[0].contains("tokens_per_second"));
        QCOMPARE(rec.at("evals")[0].at("test_loss").get<double>(), 2.5);
        QCOMPARE(rec.at("memory").at("measured").dump(), json(r.ledger).dump());
        QCOMPARE(rec.at("memory").at("measured").at("peak_total").get<int>(), 1300);  // as before
        QCOMPARE(rec.at("memory").at("measured").at("layers")[0].at("peak").get<int>(), 500);
        const json& f = rec.at("final");
        QCOMPARE(f.at("steps").get<int>(), 12);
        QCOMPARE(f.at("epochs").get<int>(), 3);
        QCOMPARE(f.at("epochs_completed").get<int>(), 3);
        QVERIFY(f.at("test_loss").is_null());
        QCOMPARE(f.at("samples_per_second").get<double>(), 100.5);
        QCOMPARE(f.at("images_per_second").get<double>(), 100.5);
        QCOMPARE(f.at("tokens_per_second").get<double>(), 321.5);
        QCOMPARE(f.at("skipped_steps").get<int>(), 2);
        QCOMPARE(f.at("train_seconds").get<double>(), 2.25);
        QCOMPARE(f.at("final_loss_scale").get<double>(), 1024.0);
        QCOMPARE(f.at("peak_bytes").get<int>(), 1300);
        QCOMPARE(f.at("param_count").get<int>(), 1234);
        QVERIFY(!f.contains("status"));  // only the fields marked in_final
        QCOMPARE(rec.at("version").get<int>(), 4);
    }

    void writeRunRecordWritesTheFolder() {
        const std::string dir = hrtest::temp_dir("records-run");
        TrainConfig c;
        c.data = "synthetic:8";
        TrainResult r;
        r.steps = 2;
        const std::string path = write_run_record(dir, c, r, nullptr, {111, 222});
        QCOMPARE(path, (std::filesystem::path(dir) / "run.json").string());
        std::ifstream in(path);
        const json j = json::parse(in);
        QVERIFY(j.at("memory").at("predicted").is_null());
        QCOMPARE(j.at("distributed").at("predicted_peak_bytes").dump(), std::string("[111,222]"));
        QCOMPARE(j.at("final").at("steps").get<int>(), 2);
    }
};

QTEST_GUILESS_MAIN(TestRecords)
#include "test_records.moc"
