// The run configuration reader and validator (issue 13, "Bad input"): every field of run.json's
// "config" is type- and range-checked with the field named, integers are never narrowed (4294967297
// epochs became 1), reals must be finite (NaN passes `x < 0`), label smoothing lies in [0, 1), and
// steps/epochs/batch are bounded so the trainer's epoch arithmetic cannot overflow.
#include <QtTest/QtTest>

#include <cmath>

#include "base/error.h"
#include "base/json_limits.h"
#include "train/config.h"
#include "train/resume.h"

using namespace hr;
using json = nlohmann::json;

class ConfigValidationTest : public QObject {
    Q_OBJECT

    // train_config_from_json(j) must throw an InputError with `id` whose text contains each part.
    void expect_read_error(const json& j, const char* id, const std::vector<std::string>& parts) {
        try {
            train_config_from_json(j);
            QFAIL(("accepted " + j.dump()).c_str());
        } catch (const InputError& e) {
            QVERIFY2(e.message().id == id, (e.message().id + " != " + id + ": " + e.what()).c_str());
            for (const auto& p : parts)
                QVERIFY2(std::string(e.what()).find(p) != std::string::npos, e.what());
        }
    }

    void expect_invalid(const TrainConfig& c, const char* id, const std::vector<std::string>& parts) {
        try {
            validate_train_config(c);
            QFAIL("validate_train_config accepted it");
        } catch (const InputError& e) {
            QVERIFY2(e.message().id == id, (e.message().id + " != " + id + ": " + e.what()).c_str());
            for (const auto& p : parts)
                QVERIFY2(std::string(e.what()).find(p) != std::string::npos, e.what());
        }
    }

private slots:
    void integers_are_not_narrowed() {
        expect_read_error({{"epochs", 4294967297ll}}, "config.field_integer_range",
                          {"'epochs'", "from -2147483648 to 2147483647", "4294967297"});
        expect_read_error({{"threads", 1ll << 40}}, "config.field_integer_range", {"'threads'"});
        expect_read_error({{"seed", -1}}, "config.field_integer_range", {"'seed'", "from 0 to 18446744073709551615"});
        expect_read_error({{"memory_limit", -5}}, "config.field_integer_range", {"'memory_limit'"});
        expect_read_error({{"strategy", {{"micro_batch", 18446744073709551615ull}}}}, "config.field_integer_range",
                          {"'strategy.micro_batch'"});
        // what fits is read exactly
        TrainConfig c = train_config_from_json({{"seed", 18446744073709551615ull}, {"steps", 9223372036854775807ll}});
        QCOMPARE(c.seed, std::uint64_t{18446744073709551615ull});
        QCOMPARE(c.steps, std::int64_t{INT64_MAX});
    }

    void types_are_checked_with_the_field_named() {
        expect_read_error({{"batch", "64"}}, "config.field_not_integer", {"'batch'", "an integer", "\"64\""});
        expect_read_error({{"steps", 1.5}}, "config.field_not_integer", {"'steps'", "an integer", "1.5"});
        expect_read_error({{"optimizer", {{"lr", "fast"}}}}, "config.field_not_number", {"'optimizer.lr'", "a number"});
        expect_read_error({{"optimizer", 5}}, "config.field_not_object", {"'optimizer'", "an object"});
        expect_read_error({{"strategy", {{"offload_optimizer", 1}}}}, "config.field_not_bool",
                          {"'strategy.offload_optimizer'", "true or false"});
        expect_read_error({{"device", json::array({1, 2, 3})}}, "config.field_not_string",
                          {"'device'", "must be a string, got an array of 3 items"});
        expect_read_error({{"optimizer", {{"lr", std::nan("")}}}}, "config.field_not_finite",
                          {"'optimizer.lr'", "must be a finite number, got"});
        expect_read_error({{"strategy", {{"rank_batch", 5}}}}, "config.field_not_list",
                          {"'strategy.rank_batch'", "must be a list of integers, got 5"});
        expect_read_error({{"strategy", {{"rank_batch", {1, "2"}}}}}, "config.field_not_integer",
                          {"'strategy.rank_batch.element'"});
        // one whole sentence per type, worded as before the ids were split
        expect_read_error({{"batch", "64"}}, "config.field_not_integer",
                          {"run configuration: field 'batch' must be an integer, got \"64\""});
        expect_read_error(json::array(), "config.not_object", {"must be a JSON object"});
        // the model inside is the spec reader's: its own messages
        try {
            train_config_from_json({{"model", {{"layers", json::array()}, {"num_classes", 4294967297ll}}}});
            QFAIL("accepted");
        } catch (const InputError& e) {
            QCOMPARE(e.message().id, std::string("spec.num_classes"));
        }
    }

    void label_smoothing_in_zero_one() {
        TrainConfig c;
        for (double bad : {5.0, 1.0, -0.1, std::nan(""), double(INFINITY)}) {
            c.model.loss.label_smoothing = bad;
            expect_invalid(c, "config.real_range", {"label smoothing must be a number in [0, 1)", "--label-smoothing"});
        }
        c.model.loss.label_smoothing = 0.99;
        validate_train_config(c);
    }

    // --lora-dropout in [0, 1), as read back from a config.json (a resume) too
    void lora_dropout_in_zero_one() {
        TrainConfig c;
        for (double bad : {1.0, 1.5, -0.1, std::nan(""), double(INFINITY)}) {
            c.strategy.lora_dropout = bad;
            expect_invalid(c, "config.real_range", {"LoRA dropout must be a number in [0, 1)", "--lora-dropout"});
        }
        json j = train_config_to_json(TrainConfig{});
        j["strategy"]["lora_dropout"] = 1.5;
        expect_invalid(train_config_from_json(j), "config.real_range", {"LoRA dropout", "1.5"});
        j["strategy"]["lora_dropout"] = "high";
        expect_read_error(j, "config.field_not_number", {"'strategy.lora_dropout'"});
        j["strategy"]["lora_dropout"] = 0.05;
        QCOMPARE(train_config_from_json(j).strategy.lora_dropout, 0.05);
        c.strategy.lora_dropout = 0.99;
        validate_train_config(c);
    }

    void steps_epochs_batch_bounded() {
        TrainConfig c;
        c.steps = INT64_MAX;  // overflowed (total_steps + steps_per_epoch - 1) in the trainer
        expect_invalid(c, "config.range", {"steps must be between 0 and 1000000000", "9223372036854775807", "--steps"});
        c.steps = kMaxSteps + 1;
        expect_invalid(c, "config.range", {"steps"});
        c.steps = kMaxSteps;
        validate_train_config(c);
        // At the bounds the trainer's figures fit easily: epochs as an int, samples in 64 bits.
        QVERIFY(static_cast<double>(kMaxSteps) <= 2147483647.0);
        QVERIFY(static_cast<double>(kMaxSteps) * static_cast<double>(kMaxBatch) < 9.2e18);
        c.steps = 0;
        c.epochs = 0;
        expect_invalid(c, "config.range", {"epochs must be between 1 and 100000"});
        c.epochs = 100001;
        expect_invalid(c, "config.range", {"epochs"});
        c.epochs = 1;
        c.batch = 0;
        expect_invalid(c, "config.range", {"batch size must be between 1 and 16777216", "--batch"});
        c.batch = kMaxBatch + 1;
        expect_invalid(c, "config.range", {"batch size"});
        c.batch = 64;
        c.strategy.accumulate = 65;
        expect_invalid(c, "config.range", {"accumulation steps must be between 1 and 64"});
        c.strategy.accumulate = 1;
        c.strategy.micro_batch = 65;
        expect_invalid(c, "config.range", {"micro-batch must be between 0 and 64"});
    }

    void reals_must_be_finite() {
        TrainConfig c;
        c.optimizer.momentum = std::nan("");  // passed `momentum < 0 || momentum >= 1`
        expect_invalid(c, "config.real_range", {"momentum", "nan"});
        c = TrainConfig{};
        c.optimizer.lr = INFINITY;
        expect_invalid(c, "config.lr", {"learning rate must be a positive number", "inf"});
        c = TrainConfig{};
        c.optimizer.weight_decay = std::nan("");
        expect_invalid(c, "config.real_range", {"weight decay"});
        c = TrainConfig{};
        c.optimizer.eps = 0;
        expect_invalid(c, "config.eps", {"eps"});
        c = TrainConfig{};
        c.schedule.gamma = std::nan("");
        expect_invalid(c, "config.real_range", {"gamma"});
        c = TrainConfig{};
        c.strategy.loss_scale_init = 0;
        expect_invalid(c, "config.real_range", {"initial loss scale"});
    }

    void devices_and_strings() {
        TrainConfig c;
        for (const char* bad : {"cuda:", "cuda:x", "cuda:123456", "gpu", ""}) {
            c.device = bad;
            expect_invalid(c, "config.device", {"unknown device"});
        }
        for (const char* ok : {"auto", "cpu", "cuda", "cuda:0", "cuda:7"}) {
            c.device = ok;
            validate_train_config(c);
        }
    }

    // --prune/--quantize after training (TrainConfig::what_if): read back as written and checked; a language model
    // takes it too (its validation loss before and after)
    void what_if_is_read_and_checked() {
        TrainConfig c;
        c.what_if.prune = 0.25;
        c.what_if.bits = 4;
        const TrainConfig back = train_config_from_json(train_config_to_json(c));
        QCOMPARE(back.what_if.prune, 0.25);
        QCOMPARE(back.what_if.bits, 4);
        QCOMPARE(back.what_if.group, std::int64_t(64));
        QCOMPARE(train_config_from_json(json::object()).what_if.active(), false);  // an older record has none
        expect_read_error({{"what_if", {{"quantize", "int3"}}}}, "compress.quantize", {"int3", "int8", "int4", "nf4"});
        c.what_if.bits = kQuantNf4;  // NF4 round-trips by its name
        QCOMPARE(train_config_from_json(train_config_to_json(c)).what_if.bits, kQuantNf4);
        QCOMPARE(train_config_to_json(c)["what_if"]["quantize"], "nf4");
        expect_read_error({{"what_if", {{"prune", "half"}}}}, "config.field_not_number", {"'what_if.prune'"});
        TrainConfig bad;
        bad.what_if.prune = 1.0;
        expect_invalid(bad, "compress.prune", {"--prune", "1"});
        bad.what_if.prune = -0.1;
        expect_invalid(bad, "compress.prune", {"--prune"});
        TrainConfig lm;
        lm.model = preset_model("gpt-tiny");
        lm.data = "text:fortunes";
        lm.what_if.bits = 8;
        validate_train_config(lm);
        lm.what_if.bits = 0;
        validate_train_config(lm);
    }

    // --timeline-step is kept in the run folder's config.json (write_run_config / read_run_config, what
    // --resume and the window's Continue read), so a resumed run records the same chosen step; a record
    // from before it has none (0: the first steady step); the range is checked
    void timeline_step_is_kept() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        TrainConfig c;
        c.timeline_step = 7;
        write_run_config(dir.path().toStdString(), c);
        QCOMPARE(read_run_config(dir.path().toStdString()).timeline_step, std::int64_t(7));
        c.timeline_step = -1;  // none
        write_run_config(dir.path().toStdString(), c);
        QCOMPARE(read_run_config(dir.path().toStdString()).timeline_step, std::int64_t(-1));
        QCOMPARE(train_config_from_json(json::object()).timeline_step, std::int64_t(0));
        expect_read_error({{"timeline_step", "second"}}, "config.field_not_integer", {"'timeline_step'"});
        TrainConfig bad;
        bad.timeline_step = -2;
        expect_invalid(bad, "config.range", {"timeline step", "--timeline-step"});
    }

    void run_json_round_trip() {
        TrainConfig c;
        c.data = "synthetic";
        c.steps = 123;
        c.batch = 32;
        c.seed = 18446744073709551615ull;
        c.optimizer.kind = "adamw";
        c.optimizer.lr = 3e-4;
        c.schedule.kind = "cosine";
        c.strategy.precision = "bf16";
        c.strategy.accumulate = 4;
        c.memory_limit = std::size_t{1} << 40;
        c.model.loss.label_smoothing = 0.1;
        // through text, as run.json is read: {"config": {...}} next to the other fields
        const std::string text = json{{"status", "completed"}, {"config", train_config_to_json(c)}}.dump(2);
        const json run = parse_json_limited(text, "run.json");
        TrainConfig back = train_config_from_json(run.at("config"));
        QCOMPARE(train_config_to_json(back), train_config_to_json(c));
        validate_train_config(back);
        // unknown keys (a newer version's fields) are ignored
        json j = train_config_to_json(c);
        j["save_every"] = "10m";
        QCOMPARE(train_config_to_json(train_config_from_json(j)), train_config_to_json(c));
    }
};

QTEST_APPLESS_MAIN(ConfigValidationTest)
#include "test_config_validation.moc"
