// Data sets beyond the IDX files (issue 23, item 5): CIFAR-10's binary batches and CSV/TSV tables.
// CIFAR-10: batch files written here byte by byte in the published layout (a label byte, then the red,
// green and blue 32x32 planes) read back as (N, 3, 32, 32) with the same bytes, the named spec found
// through HEADROOM_DATA_DIR, and every damaged file refused with its name and what to do. Tables: the
// parsing of RFC 4180 (quotes, doubled quotes, CRLF, a byte-order mark, blank lines), the class order, the
// seeded split, the standardisation checked against Python's own csv and statistics modules (an
// independent reader), every malformed table refused with its line and column, the plan's data RAM, and a
// tabular-mlp run that learns a separable table.
#include <QtTest/QtTest>

#include <QProcess>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "base/error.h"
#include "data/cifar.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "data/table.h"
#include "plan/plan_request.h"
#include "train/config.h"
#include "train/preset_training.h"
#include "train/trainer.h"

using namespace hr;
namespace fs = std::filesystem;

namespace {

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Record r of batch b: label (r + b) % 10, byte k of the image (r * 31 + k * 7 + b) % 256.
std::uint8_t pixel(int b, int r, int k) { return static_cast<std::uint8_t>((r * 31 + k * 7 + b) % 256); }
std::string cifar_batch(int b, int records) {
    std::string s;
    for (int r = 0; r < records; ++r) {
        s += static_cast<char>((r + b) % 10);
        for (int k = 0; k < 3072; ++k) s += static_cast<char>(pixel(b, r, k));
    }
    return s;
}

// A folder of CIFAR-10 files: data_batch_b.bin holds 2 + b records, test_batch.bin (b = 0) 4.
void write_cifar_dir(const std::string& dir, bool meta = true) {
    fs::create_directories(dir);
    for (int b = 1; b <= 5; ++b) write_file(dir + "/data_batch_" + std::to_string(b) + ".bin", cifar_batch(b, 2 + b));
    write_file(dir + "/test_batch.bin", cifar_batch(0, 4));
    if (meta) write_file(dir + "/batches.meta.txt", "plane\ncar\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n\n");
}

template <class F>
void expect_input_error(F&& f, const std::vector<std::string>& parts) {
    try {
        f();
    } catch (const InputError& e) {
        const std::string m = e.what();
        for (const auto& p : parts)
            QVERIFY2(m.find(p) != std::string::npos, qPrintable(QString::fromStdString("'" + p + "' not in: " + m)));
        return;
    } catch (const std::exception& e) {
        QFAIL(qPrintable(QStringLiteral("not an InputError: %1").arg(e.what())));
    }
    QFAIL("no error");
}

}  // namespace

class TablesAndCifarTest : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;
    std::string dir_;

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        dir_ = tmp_.path().toStdString();
    }

    void cifarBatchesReadAsPublished() {
        const std::string d = dir_ + "/cifar-a";
        write_cifar_dir(d);
        const DatasetPair p = load_dataset("cifar10:" + d);
        QCOMPARE(p.train.count, std::int64_t(3 + 4 + 5 + 6 + 7));
        QCOMPARE(p.test.count, std::int64_t(4));
        QCOMPARE(p.train.sample_shape, (Shape{3, 32, 32}));
        QCOMPARE(p.train.num_classes, 10);
        QCOMPARE(p.train.class_names.front(), std::string("plane"));  // from batches.meta.txt
        QCOMPARE(p.test.class_names.back(), std::string("truck"));
        // every byte where the format puts it: sample i of the training split is batch b's record r
        double sum = 0, sum2 = 0;
        std::int64_t i = 0;
        for (int b = 1; b <= 5; ++b)
            for (int r = 0; r < 2 + b; ++r, ++i) {
                QCOMPARE(p.train.labels[std::size_t(i)], std::int64_t((r + b) % 10));
                for (int k = 0; k < 3072; ++k) {
                    QCOMPARE(p.train.images[std::size_t(i * 3072 + k)], pixel(b, r, k));
                    const double x = pixel(b, r, k) / 255.0;
                    sum += x;
                    sum2 += x * x;
                }
            }
        for (int r = 0; r < 4; ++r) QCOMPARE(p.test.images[std::size_t(r * 3072 + 1024 + 5)], pixel(0, r, 1024 + 5));
        // normalised with all training pixels (the three channels together)
        const double n = double(p.train.count) * 3072, mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
        QVERIFY(std::fabs(p.train.norm_mean - mean) < 1e-6);
        QVERIFY(std::fabs(p.train.norm_std - sd) < 1e-6);
        QCOMPARE(p.test.norm_mean, p.train.norm_mean);
        // the loader hands the model (B, 3, 32, 32) as torchvision's ToTensor + Normalize would
        DataLoader loader(p.test, 4, false, 1, false, p.train.norm_mean, p.train.norm_std);
        Batch batch;
        QVERIFY(loader.next(batch));
        const float want = (float(pixel(0, 2, 2048 + 33)) / 255.0f - p.train.norm_mean) / p.train.norm_std;
        QCOMPARE(batch.images[std::size_t(2 * 3072 + 2048 + 33)], want);
        // without batches.meta.txt: the published names
        const std::string d2 = dir_ + "/cifar-b";
        write_cifar_dir(d2, false);
        QCOMPARE(load_dataset("cifar10:" + d2).train.class_names[1], std::string("automobile"));
    }

    void cifarFoundByNameAndProbed() {
        const std::string home = dir_ + "/datahome";
        write_cifar_dir(home + "/cifar-10-batches-bin");
        const char* old = std::getenv("HEADROOM_DATA_DIR");
        const std::string saved = old ? old : "";
        setenv("HEADROOM_DATA_DIR", home.c_str(), 1);
        const DatasetPair p = load_dataset("cifar10");
        QCOMPARE(p.train.count, std::int64_t(25));
        const DatasetInfo info = probe_dataset("cifar10");
        QVERIFY(info.available);
        QCOMPARE(info.location, home + "/cifar-10-batches-bin");
        QCOMPARE(info.train_count, std::int64_t(25));
        QCOMPARE(info.test_count, std::int64_t(4));
        QCOMPARE(info.bytes, p.train.bytes() + p.test.bytes());  // what the plan states is what loading takes
        QVERIFY2(info.detail.find("25 train / 4 test") != std::string::npos, info.detail.c_str());
        // a preset is drawn for the colour images
        TrainConfig c;
        c.data = "cifar10";
        QCOMPARE(preset_model_for_data("seed-cnn", c).input_shape, (Shape{3, 32, 32}));
        QCOMPARE(preset_model("resnet20").input_shape, (Shape{3, 32, 32}));
        setenv("HEADROOM_DATA_DIR", (dir_ + "/nowhere").c_str(), 1);
        expect_input_error([] { load_dataset("cifar10"); }, {"cifar10", "cifar-10-binary.tar.gz", "cifar10:DIR"});
        const DatasetInfo missing = probe_dataset("cifar10");
        QVERIFY(!missing.available);
        QCOMPARE(missing.sample_shape, (Shape{3, 32, 32}));  // known even when not installed
        if (saved.empty()) unsetenv("HEADROOM_DATA_DIR");
        else setenv("HEADROOM_DATA_DIR", saved.c_str(), 1);
    }

    void damagedCifarFilesAreRefused() {
        const std::string d = dir_ + "/cifar-bad";
        write_cifar_dir(d);
        fs::remove(d + "/test_batch.bin");
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {d, "missing test_batch.bin", "data_batch_1.bin"});
        write_file(d + "/test_batch.bin", cifar_batch(0, 2).substr(0, 3073 + 100));
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {"test_batch.bin", "3173 bytes", "3073-byte records"});
        std::string bad = cifar_batch(0, 3);
        bad[3073] = 10;  // record 2's label
        write_file(d + "/test_batch.bin", bad);
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {"test_batch.bin", "record 2 has label 10"});
        write_file(d + "/test_batch.bin", "");
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {"test_batch.bin", "empty"});
        write_file(d + "/test_batch.bin", cifar_batch(0, 2));
        write_file(d + "/batches.meta.txt", "a\nb\nc\n");
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {"batches.meta.txt", "names 3 classes"});
        fs::remove(d + "/batches.meta.txt");
        fs::remove(d + "/data_batch_3.bin");
        fs::create_directory(d + "/data_batch_3.bin");  // a folder where a file belongs
        expect_input_error([&] { load_dataset("cifar10:" + d); }, {"missing data_batch_3.bin"});
        expect_input_error([&] { load_dataset("cifar10:" + dir_ + "/none"); }, {"folder not found"});
        expect_input_error([&] { load_dataset("cifar10:"); }, {"needs a folder"});
    }

    void tablesParseAsRfc4180() {
        const std::string text =
            "\xEF\xBB\xBF"
            "a,\"b, quoted\",label\r\n"
            "1, 2.5 ,10\r\n"
            "\r\n"
            "\"3\",+4e0,2\n"
            "-5,\"6\",1\n"
            "7,8,10\n"
            "9,10,2\n";
        TableSummary sum;
        const DatasetPair p = parse_table(text, ',', "label", "t.csv", &sum);
        QCOMPARE(sum.columns, (std::vector<std::string>{"a", "b, quoted", "label"}));
        QCOMPARE(sum.rows, std::int64_t(5));
        QCOMPARE(sum.classes, (std::vector<std::string>{"1", "2", "10"}));  // numeric order, not "1" "10" "2"
        QCOMPARE(p.train.feature_names, (std::vector<std::string>{"a", "b, quoted"}));
        QCOMPARE(p.train.sample_shape, (Shape{2}));
        QCOMPARE(p.train.count + p.test.count, std::int64_t(5));
        QCOMPARE(p.test.count, std::int64_t(1));
        QCOMPARE(sum.test_rows.size(), std::size_t(1));
        // the labels of the rows, in file order, split as test_rows says
        const std::vector<std::int64_t> all = {2, 1, 0, 2, 1};
        std::vector<std::int64_t> train, test;
        for (std::int64_t r = 0; r < 5; ++r)
            (r == sum.test_rows[0] ? test : train).push_back(all[std::size_t(r)]);
        QCOMPARE(p.train.labels, train);
        QCOMPARE(p.test.labels, test);
        // by number, and string classes in byte order; TSV
        TableSummary s2;
        parse_table("x\ty\tkind\n1\t2\tpear\n3\t4\tapple\n5\t6\tpear\n", '\t', "3", "t.tsv", &s2);
        QCOMPARE(s2.target_column, 2);
        QCOMPARE(s2.classes, (std::vector<std::string>{"apple", "pear"}));
        // a quoted field holding a line break and a doubled quote
        TableSummary s3;
        const DatasetPair q = parse_table("\"na\"\"me\nx\",y\n1,a\n2,b\n3,a\n", ',', "y", "q.csv", &s3);
        QCOMPARE(s3.columns[0], std::string("na\"me\nx"));
        QCOMPARE(q.train.count + q.test.count, std::int64_t(3));
    }

    void splitIsSeededAndAFifth() {
        std::string text = "f,c\n";
        for (int i = 0; i < 103; ++i) text += std::to_string(i) + "," + std::to_string(i % 3) + "\n";
        TableSummary a, b;
        parse_table(text, ',', "c", "s.csv", &a);
        parse_table(text, ',', "c", "s.csv", &b);
        QCOMPARE(a.test_rows.size(), std::size_t(20));  // 103 / 5
        QCOMPARE(a.test_rows, b.test_rows);
        QVERIFY(std::is_sorted(a.test_rows.begin(), a.test_rows.end()));
        QVERIFY(std::adjacent_find(a.test_rows.begin(), a.test_rows.end()) == a.test_rows.end());
        // not the first or last rows: a file sorted by class still tests every class
        QVERIFY(a.test_rows.front() < 80 && a.test_rows.back() > 20);
    }

    void standardisedAsPythonComputesIt() {
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("no /usr/bin/python3 for the reference");
        const std::string path = dir_ + "/ref.csv";
        std::string text = "height,\"weight, kg\",age,group\n";
        std::mt19937_64 rng(7);
        std::normal_distribution<double> g(0, 1);
        for (int i = 0; i < 57; ++i) {
            char line[160];
            std::snprintf(line, sizeof line, "%.6f,\"%.4f\",%d,%s\n", 170 + 9 * g(rng), 1e4 + 800 * g(rng), 20 + i % 40,
                          i % 2 ? "b" : "a");
            text += line;
        }
        write_file(path, text);
        TableSummary sum;
        const DatasetPair p = load_table("csv:" + path, "group", &sum);
        QString rows;
        for (std::int64_t r : sum.test_rows) rows += QString::number(r) + QLatin1Char(' ');
        // Python's csv module reads the file, statistics.pstdev the training rows: the standardised test rows
        const char* script = R"(
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))[1:]
test = set(int(t) for t in sys.argv[2].split())
feat = [[float(r[0]), float(r[1]), float(r[2])] for r in rows]
train = [f for i, f in enumerate(feat) if i not in test]
for j in range(3):
    col = [f[j] for f in train]
    m, s = statistics.fmean(col), statistics.pstdev(col)
    print(' '.join(repr((feat[i][j] - m) / s) for i in sorted(test)))
)";
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"),
                 {QStringLiteral("-c"), QString::fromUtf8(script), QString::fromStdString(path), rows.trimmed()});
        QVERIFY(py.waitForFinished(60000));
        QCOMPARE(py.exitCode(), 0);
        const QStringList lines = QString::fromUtf8(py.readAllStandardOutput()).trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 3);
        const std::int64_t T = p.test.count;
        QCOMPARE(T, std::int64_t(11));
        for (int j = 0; j < 3; ++j) {
            const QStringList v = lines[j].split(QLatin1Char(' '));
            QCOMPARE(v.size(), int(T));
            for (std::int64_t i = 0; i < T; ++i) {
                const double want = v[int(i)].toDouble();
                const double got = p.test.features[std::size_t(i * 3 + j)];
                QVERIFY2(std::fabs(got - want) <= 1e-6 * std::max(1.0, std::fabs(want)),
                         qPrintable(QStringLiteral("column %1 row %2: %3 vs python %4").arg(j).arg(i).arg(got).arg(want)));
            }
        }
    }

    void malformedTablesAreRefused() {
        auto parse = [](const std::string& t, const std::string& target = "c") {
            return [t, target] { parse_table(t, ',', target, "m.csv", nullptr); };
        };
        expect_input_error(parse(""), {"m.csv", "no rows"});
        expect_input_error(parse("a,b\n1,2\n3,4\n", ""), {"--target", "a, b"});
        expect_input_error(parse("a,b\n1,2\n3,4\n", "z"), {"no column is named 'z'", "a, b"});
        expect_input_error(parse("a,c\n1,2\n3\n"), {"line 3", "1 fields", "2 columns"});
        expect_input_error(parse("a,c\n1,x\n,y\n"), {"line 3", "column 'a' has no value"});
        expect_input_error(parse("a,c\n1,x\nabc,y\n"), {"line 3", "'abc'", "not a finite number"});
        expect_input_error(parse("a,c\n1,x\ninf,y\n"), {"'inf'", "not a finite number"});
        // finite, but beyond a 32-bit float once standardised (in either split)
        expect_input_error(parse("a,c\n1,x\n2,y\n3,x\n4,y\n1e200,x\n"), {"line 6", "1e+200", "32-bit float"});
        expect_input_error(parse("a,c\n1,x\n\"2,y\n3,z\n"), {"line 3", "not closed"});
        expect_input_error(parse("a,c\n\"1\"2,x\n3,y\n"), {"line 2", "text follows a closing quote"});
        expect_input_error(parse("a,c\n1,x\n2,x\n"), {"only the value 'x'", "at least 2 classes"});
        expect_input_error(parse("a,c\n1,x\n"), {"1 data row", "at least 2"});
        expect_input_error(parse("a,c\n1,\n2,y\n"), {"line 2", "target column 'c' is empty"});
        expect_input_error(parse("c\n1\n2\n"), {"only the target column"});
        expect_input_error(parse("c,c\n1,2\n3,4\n"), {"two columns are named 'c'"});
        std::string many = "a,c\n";
        for (int i = 0; i <= kMaxTableClasses; ++i) many += "1," + std::to_string(i) + "\n";
        expect_input_error(parse(many), {"more than 1000 different values", "regression"});
        expect_input_error([&] { load_table("csv:" + dir_ + "/nope.csv", "c"); }, {"nope.csv", "not found"});
        expect_input_error([&] { load_table("csv:" + dir_, "c"); }, {"is a folder"});
        expect_input_error([&] { load_table("csv:", "c"); }, {"needs a file"});
        expect_input_error([&] { load_table("csv:/dev/zero", "c"); }, {"not a regular file"});
        // --target with data that is not a table
        TrainConfig c;
        c.target = "label";
        expect_input_error([&] { validate_train_config(c); }, {"--target", "fashion-mnist"});
    }

    void aTableTrainsAndIsPlanned() {
        // three separable clusters and a column of noise: tabular-mlp with its own settings learns them
        const std::string path = dir_ + "/clusters.csv";
        std::string text = "x,y,noise,kind\n";
        std::mt19937_64 rng(3);
        std::normal_distribution<double> g(0, 0.5);
        std::uniform_real_distribution<double> u(0, 100);
        const double cx[3] = {0, 3, 1}, cy[3] = {0, 1, 4};
        const char* names[3] = {"setosa", "versicolor", "virginica"};
        for (int i = 0; i < 300; ++i) {
            const int k = i % 3;
            char line[160];
            std::snprintf(line, sizeof line, "%.4f,%.4f,%.3f,%s\n", cx[k] + g(rng), cy[k] + g(rng), u(rng), names[k]);
            text += line;
        }
        write_file(path, text);
        TrainConfig c = default_train_config("tabular-mlp");
        c.data = "csv:" + path;
        c.target = "kind";
        c.device = "cpu";
        c.threads = 1;
        c.model = preset_model_for_data("tabular-mlp", c);
        c.model_source = "preset:tabular-mlp";
        QCOMPARE(c.model.input_shape, (Shape{3}));
        QCOMPARE(c.model.num_classes, 3);
        c.epochs = 10;
        // the plan states the table's RAM and sizes the loader for its 240 training rows
        const PlanRequest req = plan_request(c);
        const DatasetPair p = load_table(c.data, c.target);
        QCOMPARE(req.dataset_bytes, p.train.bytes() + p.test.bytes());
        QCOMPARE(req.train_samples, std::int64_t(240));
        QCOMPARE(req.test_samples, std::int64_t(60));
        Trainer t(c);
        const TrainResult r = t.run();
        QVERIFY2(r.status == "finished", r.error.c_str());
        QVERIFY2(r.test_accuracy > 0.95, qPrintable(QString::number(r.test_accuracy)));
        // a model that takes images cannot take the table, and says so
        TrainConfig bad = c;
        expect_input_error([&] { preset_model_for_data("seed-cnn", bad); }, {"needs image input", "tabular-mlp"});
    }
};

QTEST_GUILESS_MAIN(TablesAndCifarTest)
#include "test_tables_and_cifar.moc"
