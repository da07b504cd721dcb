// Reports: HTML has every section and parses, leads with the outcome and says the configuration in
// words; PDF pages render non-blank (pdftoppm), the outcome has the first page, and no page ends with a
// heading (pdftotext); JSON validates against docs/report.schema.json, CSV rows, and the `headroom
// report` command's exit codes. HEADROOM_TEST_ARTIFACTS=DIR keeps the rendered reports there.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QTextDocument>
#include <QTextDocumentFragment>
#include <QXmlStreamReader>

#include <cmath>

#include "nn/model_spec.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "report/report_writer.h"
#include "store/run_store.h"
#include "test_support.h"
#include "train/trainer.h"

using namespace hrapp;

namespace {

QJsonObject toQt(const nlohmann::json& j) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(j.dump())).object();
}

// A small JSON Schema validator for the subset docs/report.schema.json uses:
// type (string or list; integer = whole number), enum, required, properties, items, minimum.
bool typeMatches(const QJsonValue& v, const QString& t) {
    if (t == "null") return v.isNull();
    if (t == "boolean") return v.isBool();
    if (t == "string") return v.isString();
    if (t == "object") return v.isObject();
    if (t == "array") return v.isArray();
    if (t == "number") return v.isDouble();
    if (t == "integer") return v.isDouble() && std::floor(v.toDouble()) == v.toDouble();
    return false;
}

void validate(const QJsonValue& v, const QJsonObject& schema, const QString& where, QStringList* errors) {
    if (schema.contains("type")) {
        QStringList types;
        if (schema["type"].isArray())
            for (const auto& t : schema["type"].toArray()) types << t.toString();
        else
            types << schema["type"].toString();
        bool ok = false;
        for (const auto& t : types) ok = ok || typeMatches(v, t);
        if (!ok) {
            *errors << QString("%1: expected %2").arg(where, types.join('|'));
            return;
        }
    }
    if (schema.contains("enum") && !schema["enum"].toArray().contains(v))
        *errors << QString("%1: value not in enum").arg(where);
    if (schema.contains("minimum") && v.isDouble() && v.toDouble() < schema["minimum"].toDouble())
        *errors << QString("%1: below minimum").arg(where);
    if (v.isObject()) {
        const QJsonObject o = v.toObject();
        for (const auto& r : schema["required"].toArray())
            if (!o.contains(r.toString())) *errors << QString("%1: missing '%2'").arg(where, r.toString());
        const QJsonObject props = schema["properties"].toObject();
        for (auto it = props.begin(); it != props.end(); ++it)
            if (o.contains(it.key())) validate(o[it.key()], it.value().toObject(), where + "." + it.key(), errors);
    }
    if (v.isArray() && schema.contains("items")) {
        const QJsonArray a = v.toArray();
        for (int i = 0; i < a.size(); ++i)
            validate(a[i], schema["items"].toObject(), QString("%1[%2]").arg(where).arg(i), errors);
    }
}

double nonWhiteFraction(const QImage& img) {
    if (img.isNull()) return 0;
    const QImage im = img.convertToFormat(QImage::Format_RGB32);
    qint64 n = 0;
    for (int y = 0; y < im.height(); ++y) {
        const QRgb* line = reinterpret_cast<const QRgb*>(im.constScanLine(y));
        for (int x = 0; x < im.width(); ++x)
            if (qRed(line[x]) < 240 || qGreen(line[x]) < 240 || qBlue(line[x]) < 240) ++n;
    }
    return double(n) / (double(im.width()) * im.height());
}

}  // namespace

class TestReports : public QObject {
    Q_OBJECT
    QString m_dir;
    QString m_db;
    qint64 m_full = 0;   // a run with everything: steps, epochs, GPU telemetry, memory with prediction
    qint64 m_bare = 0;   // a failed run: a few steps, host telemetry only, no prediction
    qint64 m_deep = 0;   // a model of 160 layers: its layer table is longer than a page

    void keep(const QString& path) {
        const QString dir = qEnvironmentVariable("HEADROOM_TEST_ARTIFACTS");
        if (dir.isEmpty()) return;
        QDir().mkpath(dir);
        QFile::remove(dir + "/" + QFileInfo(path).fileName());
        QFile::copy(path, dir + "/" + QFileInfo(path).fileName());
    }

    static QString unligature(QString s) {
        return s.replace(QChar(0xFB01), QLatin1String("fi")).replace(QChar(0xFB02), QLatin1String("fl"));
    }
    // The text of each page of a PDF (pdftotext -layout), or {} when poppler is missing.
    static QStringList pdfPages(const QString& path, int pages) {
        QStringList out;
        for (int p = 1; p <= pages; ++p) {
            QProcess t;
            t.start("pdftotext", {"-layout", "-f", QString::number(p), "-l", QString::number(p), path, "-"});
            if (!t.waitForFinished(60000) || t.exitCode() != 0) return {};
            out << unligature(QString::fromUtf8(t.readAllStandardOutput()));
        }
        return out;
    }
    static int pdfPageCount(const QString& path) {
        QProcess p;
        p.start("pdfinfo", {path});
        if (!p.waitForFinished(60000)) return -1;
        const QRegularExpression re("Pages:\\s+(\\d+)");
        const auto m = re.match(QString::fromUtf8(p.readAllStandardOutput()));
        return m.hasMatch() ? m.captured(1).toInt() : -1;
    }
    struct Line {
        QString text;
        double top = 0, bottom = 0;  // points from the page's top
    };
    // The text lines of one page with their vertical extent (pdftotext -bbox), top to bottom.
    static QVector<Line> pdfLines(const QString& path, int page) {
        QProcess t;
        t.start("pdftotext", {"-bbox", "-f", QString::number(page), "-l", QString::number(page), path, "-"});
        if (!t.waitForFinished(60000) || t.exitCode() != 0) return {};
        const QString xml = QString::fromUtf8(t.readAllStandardOutput());
        static const QRegularExpression word(
            "<word xMin=\"[\\d.]+\" yMin=\"([\\d.]+)\" xMax=\"[\\d.]+\" yMax=\"([\\d.]+)\">([^<]*)</word>");
        QVector<Line> lines;
        for (auto it = word.globalMatch(xml); it.hasNext();) {
            const auto m = it.next();
            const double top = m.captured(1).toDouble(), bottom = m.captured(2).toDouble();
            const QString text = unligature(m.captured(3));
            if (!lines.isEmpty() && std::abs(lines.last().top - top) < 2.0) {
                lines.last().text += " " + text;
                lines.last().bottom = std::max(lines.last().bottom, bottom);
            } else {
                lines.push_back({text, top, bottom});
            }
        }
        std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.top < b.top; });
        return lines;
    }
    // Pages whose last text line is a section heading with nothing drawn under it: a heading must be
    // followed on its page by its content (text, or a chart, seen as ink in the rendered page).
    static QStringList headingsEndingAPage(const QString& path, const QStringList& pngs, int dpi) {
        const QStringList headings = {ReportWriter::tr("Outcome"), ReportWriter::tr("Loss, accuracy and throughput"),
                                      ReportWriter::tr("Memory: predicted and measured"),
                                      ReportWriter::tr("Memory strategies and optimizer"), ReportWriter::tr("Data"),
                                      ReportWriter::tr("Model"), ReportWriter::tr("Device and versions"),
                                      ReportWriter::tr("Power, utilisation and memory over time"),
                                      ReportWriter::tr("Energy"), ReportWriter::tr("Durations"),
                                      ReportWriter::tr("Final metrics"), ReportWriter::tr("Per epoch")};
        QStringList bad;
        for (int i = 0; i < pngs.size(); ++i) {
            QVector<Line> lines = pdfLines(path, i + 1);
            double footerTop = 842;
            while (!lines.isEmpty() && lines.last().text.contains("Headroom run report")) {
                footerTop = lines.last().top;
                lines.removeLast();
            }
            if (lines.isEmpty() || !headings.contains(lines.last().text.trimmed())) continue;
            const QImage page = QImage(pngs[i]).convertToFormat(QImage::Format_RGB32);
            const int y0 = int(lines.last().bottom * dpi / 72.0) + 3, y1 = int(footerTop * dpi / 72.0) - 3;
            const QImage below = y1 > y0 ? page.copy(0, y0, page.width(), y1 - y0) : QImage();
            if (nonWhiteFraction(below) < 0.01)
                bad << QString("page %1 ends with \"%2\"").arg(i + 1).arg(lines.last().text.trimmed());
        }
        return bad;
    }

private slots:
    void initTestCase() {
        m_dir = QString::fromStdString(hrtest::temp_dir("hr-reports"));
        m_db = m_dir + "/runs.sqlite";
        RunStore store;
        QVERIFY(store.open(m_db));
        const hr::ModelSpec spec = hr::preset_model("lenet5");
        QJsonObject config{{"data", "synthetic"}, {"batch", 32}, {"epochs", 2}, {"seed", 7},
                           {"strategy", QJsonObject{{"precision", "bf16"}, {"checkpoint", "every:2"}}},
                           {"optimizer", QJsonObject{{"kind", "adamw"}, {"lr", 0.001}}}};
        m_full = store.beginRun(config, toQt(hr::model_spec_to_json(spec)), "cuda:0", "lenet full");
        QVERIFY(m_full > 0);
        for (int i = 1; i <= 200; ++i) {
            hr::StepEvent e;
            e.step = i;
            e.epoch = i <= 100 ? 1 : 2;
            e.loss = 2.3 * std::exp(-i / 60.0) + 0.1;
            e.accuracy = 1.0 - 0.9 * std::exp(-i / 50.0);
            e.lr = 0.001;
            e.step_seconds = 0.01 + 0.001 * (i % 3);
            e.images_per_second = 3000 + 10 * (i % 7);
            e.elapsed_seconds = i * 0.011;
            store.addStep(m_full, e);
        }
        for (int ep = 1; ep <= 2; ++ep) {
            hr::EpochEvent e;
            e.epoch = ep;
            e.step = ep * 100;
            e.train_loss = 1.0 / ep;
            e.train_accuracy = 0.7 + 0.1 * ep;
            e.test_loss = 1.1 / ep;
            e.test_accuracy = 0.68 + 0.1 * ep;
            e.seconds = 1.1;
            e.images_per_second = 2900;
            store.addEpoch(m_full, e);
        }
        for (int k = 0; k < 20; ++k) {
            hr::TelemetrySample s;
            s.t_seconds = 100 + 0.5 * k;
            s.step = k * 10;
            s.host.cpu_utilization = 30 + k;
            s.host.ram_total = 16LL << 30;
            s.host.ram_used = 4LL << 30;
            s.host.process_rss = (300LL + k) << 20;
            for (int g = 0; g < 2; ++g) {
                hr::GpuStats gs;
                gs.index = g;
                gs.name = "Fake H200";
                gs.memory_total = 141LL << 30;
                gs.memory_used = (2LL + g) << 30;
                gs.power_watts = 150 + 10 * g + k;
                gs.power_limit_watts = 700;
                gs.gpu_utilization = 80 - g * 10;
                gs.memory_utilization = 30;
                gs.temperature_c = 50;
                gs.sm_clock_mhz = 1980;
                gs.energy_joules = 1000 + 80.0 * k;  // 80 J per 0.5 s
                s.gpus.push_back(gs);
            }
            store.addTelemetry(m_full, s);
        }
        hr::MemoryEvent m;
        m.step = 50;
        m.elapsed_seconds = 0.5;
        m.device_capacity = 141LL << 30;
        hr::at(m.ledger.peak, hr::MemCategory::parameters) = 250000;
        hr::at(m.ledger.peak, hr::MemCategory::activations) = 4000000;
        m.ledger.live_total = 4300000;
        store.addMemory(m_full, m);
        hr::CategoryBytes predicted{};
        hr::at(predicted, hr::MemCategory::parameters) = 250000;
        hr::at(predicted, hr::MemCategory::gradients) = 250000;
        hr::at(predicted, hr::MemCategory::activations) = 3800000;
        store.setPredictedMemory(m_full, predicted);
        hr::TrainResult r;
        r.status = "finished";
        r.test_accuracy = 0.88;
        r.test_loss = 0.55;
        r.steps = 200;
        r.epochs_completed = 2;
        r.seconds = 2.2;
        r.images_per_second = 2900;
        r.device_name = "cuda:0 (Fake H200)";
        r.param_count = 61706;
        hr::at(r.ledger.peak, hr::MemCategory::parameters) = 250000;
        hr::at(r.ledger.peak, hr::MemCategory::gradients) = 250000;
        hr::at(r.ledger.peak, hr::MemCategory::activations) = 4100000;
        r.ledger.peak_total = 4600000;
        r.ledger.peak_phase = "backward";
        // --prune 0.5 --quantize int8 (TrainConfig::what_if): the figures app/session puts into the result
        r.what_if.compressed = true;
        r.what_if.options.prune = 0.5;
        r.what_if.options.bits = 8;
        r.what_if.test_samples = 10000;
        r.what_if.test_accuracy = 0.88;
        r.what_if.test_loss = 0.55;
        r.what_if.test_accuracy_after = 0.8125;
        r.what_if.test_loss_after = 0.7;
        r.what_if.compression.tensors = 5;
        r.what_if.compression.values = 61000;
        r.what_if.compression.zeros = 30500;
        r.what_if.compression.dense_bytes = 244000;
        r.what_if.compression.stored_bytes = 38125;
        r.what_if.compression.other_bytes = 2824;
        store.finishRun(m_full, r);

        m_bare = store.beginRun(QJsonObject{{"data", "mnist"}, {"batch", 64}},
                                toQt(hr::model_spec_to_json(hr::preset_model("mlp"))), "cpu", "mlp <bare> & co");
        for (int i = 1; i <= 5; ++i) {
            hr::StepEvent e;
            e.step = i;
            e.epoch = 1;
            e.loss = 2.0;
            store.addStep(m_bare, e);
        }
        hr::TelemetrySample s;
        s.host.ram_total = 1 << 30;
        s.host.cpu_utilization = 12;
        store.addTelemetry(m_bare, s);
        hr::MemoryEvent bm;
        hr::at(bm.ledger.peak, hr::MemCategory::parameters) = 1000;
        store.addMemory(m_bare, bm);
        store.finishRun(m_bare, "failed", "loss became NaN at step 5");

        hr::ModelSpec deep;
        deep.name = "deep-mlp";
        deep.input_shape = {1, 8, 8};
        deep.layers.push_back(hr::default_layer("flatten"));
        hr::LayerSpec first = hr::default_layer("linear");
        first.attrs["in_features"] = 64;
        first.attrs["out_features"] = 16;
        deep.layers.push_back(first);
        for (int i = 0; i < 80; ++i) {
            hr::LayerSpec l = hr::default_layer("linear");
            l.attrs["in_features"] = 16;
            l.attrs["out_features"] = i == 79 ? 10 : 16;
            deep.layers.push_back(hr::default_layer("relu"));
            deep.layers.push_back(l);
        }
        QVERIFY(hr::analyze_model_spec(deep).ok);
        m_deep = store.beginRun(QJsonObject{{"data", "synthetic"}, {"batch", 16}, {"epochs", 1}},
                                toQt(hr::model_spec_to_json(deep)), "cpu", "deep");
        hr::EpochEvent de;
        de.epoch = 1;
        de.step = 10;
        de.test_accuracy = 0.5;
        de.test_loss = 1.5;
        store.addEpoch(m_deep, de);
        hr::TrainResult dr;
        dr.test_accuracy = 0.5;
        dr.steps = 10;
        dr.epochs_completed = 1;
        store.finishRun(m_deep, dr);
    }

    void htmlHasEverySectionAndParses() {
        RunStore store;
        QVERIFY(store.open(m_db));
        auto data = ReportWriter::load(store, m_full);
        QVERIFY(data);
        ReportWriter w(*data);
        const QString path = m_dir + "/full.html";
        QString error;
        QVERIFY2(w.write(path, ReportWriter::Format::Html, &error), qPrintable(error));
        keep(path);
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(f.readAll());
        for (const QString& id : ReportWriter::sectionIds())
            QVERIFY2(html.contains(QString("<h2 id=\"%1\">").arg(id)), qPrintable(id));
        // well-formed (XHTML syntax)
        QXmlStreamReader xml(html);
        int elements = 0;
        while (!xml.atEnd()) {
            xml.readNext();
            if (xml.isStartElement()) ++elements;
        }
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString() + QString(" at line %1").arg(xml.lineNumber())));
        QVERIFY(elements > 100);
        // self-contained: charts are data URIs, nothing fetched from a network
        QVERIFY(!html.contains("http://") && !html.contains("https://"));
        QRegularExpression img("<img src=\"data:image/png;base64,([A-Za-z0-9+/=]+)\"");
        auto it = img.globalMatch(html);
        int images = 0;
        while (it.hasNext()) {
            const auto m = it.next();
            QImage chart;
            QVERIFY(chart.loadFromData(QByteArray::fromBase64(m.captured(1).toLatin1()), "PNG"));
            QVERIFY(chart.width() >= 600);
            const double ink = nonWhiteFraction(chart);
            QVERIFY2(ink > 0.01, qPrintable(QString("chart %1 looks blank (%2)").arg(images).arg(ink)));
            ++images;
        }
        QCOMPARE(images, 7);  // memory categories, loss, accuracy, throughput, power, utilisation, memory over time
        // contents
        QTextDocument doc;
        doc.setHtml(html);
        const QString text = doc.toPlainText();
        QVERIFY(text.contains("lenet full"));
        QVERIFY(text.contains("Fake H200"));
        QVERIFY(text.contains("conv2d"));           // layer table from analyze_model_spec
        QVERIFY(text.contains("61,706") || text.contains("61706"));
        QVERIFY(text.contains("bf16 mixed precision, fp32 master weights"));  // strategies, in words
        QVERIFY(text.contains("one block in every 2"));
        QVERIFY(text.contains("AdamW, learning rate 0.001"));
        QVERIFY(text.contains("Activations"));      // memory table, in the window's words
        QVERIFY(!text.contains("Prediction not available"));
        // the configuration in a person's words: no raw keys
        for (const char* raw : {"loss_scale_growth_interval", "micro_batch", "offload_optimizer", "peak_step",
                                "(0: all)", "optimizer_state", "epochs_completed"})
            QVERIFY2(!text.contains(raw), raw);
        // the outcome comes first: test accuracy and loss, throughput, peak memory against the device's
        // 141 GiB, predicted (4,300,000 B) against measured (4,600,000 B), energy
        const int outcome = html.indexOf("<h2 id=\"summary\">");
        QVERIFY(outcome > 0 && outcome < html.indexOf("<h2 id=\"training\">"));
        const QString first = QTextDocumentFragment::fromHtml(html.left(html.indexOf("<h2 id=\"training\">"))).toPlainText();
        QVERIFY2(first.contains("88.0 %"), qPrintable(first));
        QVERIFY(first.contains("0.55"));
        QVERIFY(first.contains("2,900 images/s"));
        QVERIFY(first.contains(QLocale().formattedDataSize(4600000, 2, QLocale::DataSizeIecFormat)));
        QVERIFY(first.contains("of the device's 141.00 GiB"));
        QVERIFY(first.contains(QLocale().formattedDataSize(4300000, 2, QLocale::DataSizeIecFormat)));
        QVERIFY2(first.contains("(+6.98 %)"), qPrintable(first));  // (4.6 - 4.3) / 4.3
        QVERIFY(first.contains("3,040 J"));
        QVERIFY(first.contains("after epoch 2"));
        QVERIFY(html.indexOf("alt=\"Loss\"") < html.indexOf("<h2 id=\"training\">"));  // the loss curve
        QVERIFY(text.contains("during the backward pass"));
        // energy: 2 GPUs x 19 intervals x 80 J; 200 steps x 32 samples
        const ReportEnergy en = w.energy();
        QVERIFY(en.available && !en.fromPowerIntegral);
        QCOMPARE(en.joules, 2 * 19 * 80.0);
        QCOMPARE(w.samplesTrained(), qint64(6400));
        QVERIFY(qAbs(en.joulesPerSample - 3040.0 / 6400) < 1e-12);
        QVERIFY(text.contains("3,040") || text.contains("3040"));
    }

    // the what-if's section (issue 23 item 4): both rows with their accuracy and stored size, and a first-page
    // figure; a run without a what-if has neither; a language model's has its loss per token and perplexity
    void whatIfSection() {
        RunStore store;
        QVERIFY(store.open(m_db));
        const QString html = ReportWriter(*ReportWriter::load(store, m_full)).html();
        QVERIFY(html.contains(QStringLiteral("id=\"compression\"")));
        QVERIFY(html.contains(QStringLiteral("What-if: pruned and quantised weights")));
        QVERIFY(html.contains(QStringLiteral("Accuracy pruned/quantised")));
        const int at = html.indexOf(QStringLiteral("id=\"compression\""));
        const QString section = html.mid(at, html.indexOf(QStringLiteral("id=\"memory\""), at) - at);
        for (const char* text : {"as trained (f32)", "88.00 %", "81.25 %", "0.7", "50.0 % pruned, int8 (a scale per output row)",
                                 "241.04 KiB", "39.99 KiB", "10,000 test samples", "30,500"})
            QVERIFY2(section.contains(QLatin1String(text)), text);
        QVERIFY(html.indexOf(QStringLiteral("id=\"training\"")) < at);  // right after the training section
        const QJsonObject fm = ReportWriter(*ReportWriter::load(store, m_full)).json()
                                   .value("run").toObject().value("final_metrics").toObject();
        QCOMPARE(fm.value("compression").toObject().value("weights_bytes_after").toInteger(), qint64(38125 + 2824));
        QVERIFY(!ReportWriter(*ReportWriter::load(store, m_deep)).html().contains(QStringLiteral("id=\"compression\"")));

        // a language model's what-if: the loss per token, its perplexity and the next-token accuracy (in a
        // history of its own: the other tests count this one's runs)
        RunStore lmStore;
        QVERIFY(lmStore.open(QString::fromStdString(hrtest::temp_dir("reports-lm")) + QStringLiteral("/runs.sqlite")));
        const qint64 lm = lmStore.beginRun(QJsonObject{{"data", "text:fortunes"}, {"batch", 16}, {"steps", 40}},
                                         toQt(hr::model_spec_to_json(hr::preset_model("gpt-tiny"))), "cpu", "gpt what-if");
        hr::TrainResult r;
        r.status = "finished";
        r.test_loss = 2.9481;
        r.test_accuracy = 0.2315;
        r.steps = 40;
        r.what_if.compressed = true;
        r.what_if.language_model = true;
        r.what_if.options.prune = 0.3;
        r.what_if.options.bits = 4;
        r.what_if.test_samples = 512;
        r.what_if.test_tokens = 65536;
        r.what_if.test_loss = 2.9481;
        r.what_if.test_accuracy = 0.2315;
        r.what_if.test_loss_after = 2.9454;
        r.what_if.test_accuracy_after = 0.2307;
        r.what_if.compression.tensors = 10;
        r.what_if.compression.values = 442368;
        r.what_if.compression.dense_bytes = 1769472;
        r.what_if.compression.stored_bytes = 238000;
        r.what_if.compression.other_bytes = 14336;
        lmStore.finishRun(lm, r);
        const QString lmHtml = ReportWriter(*ReportWriter::load(lmStore, lm)).html();
        QVERIFY(lmHtml.contains(QStringLiteral("Validation loss pruned/quantised")));
        QVERIFY(!lmHtml.contains(QStringLiteral("Accuracy pruned/quantised")));
        const int lmAt = lmHtml.indexOf(QStringLiteral("id=\"compression\""));
        QVERIFY(lmAt > 0);
        const QString lmSection = lmHtml.mid(lmAt, lmHtml.indexOf(QStringLiteral("id=\"memory\""), lmAt) - lmAt);
        // perplexity exp(2.9481) = 19.07, exp(2.9454) = 19.02
        for (const char* text : {"65,536 validation tokens", "Validation loss", "Perplexity", "Token accuracy", "2.9481",
                                 "2.9454", "19.07", "19.02", "23.15 %", "23.07 %", "30.0 % pruned, int4"})
            QVERIFY2(lmSection.contains(QLatin1String(text)), text);
        QVERIFY(!lmSection.contains(QStringLiteral("Test accuracy")));
    }

    void bareRunSaysWhatIsMissing() {
        RunStore store;
        QVERIFY(store.open(m_db));
        ReportWriter w(*ReportWriter::load(store, m_bare));
        const QString html = w.html();
        QXmlStreamReader xml(html);
        while (!xml.atEnd()) xml.readNext();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
        QVERIFY(html.contains("mlp &lt;bare&gt; &amp; co"));
        QVERIFY(html.contains("Prediction not available"));
        QVERIFY(html.contains("No GPU telemetry"));
        QVERIFY(html.contains("Energy not measured"));
        QVERIFY(html.contains("loss became NaN at step 5"));
        for (const QString& id : ReportWriter::sectionIds()) QVERIFY(html.contains(QString("id=\"%1\"").arg(id)));
        QVERIFY(!w.energy().available);
    }

    void pdfPagesAreNotBlank() {
        RunStore store;
        QVERIFY(store.open(m_db));
        ReportWriter w(*ReportWriter::load(store, m_full));
        const QString path = m_dir + "/full.pdf";
        QString error;
        QVERIFY2(w.write(path, ReportWriter::Format::Pdf, &error), qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.read(5) == "%PDF-");
        f.close();
        if (QStandardPaths::findExecutable("pdftoppm").isEmpty()) QSKIP("pdftoppm (poppler-utils) is not installed");
        QProcess p;
        p.start("pdftoppm", {"-r", "40", "-png", path, m_dir + "/page"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        const QStringList pages = QDir(m_dir).entryList({"page*.png"}, QDir::Files, QDir::Name);
        // title, model table, data/device, strategies, memory + chart, 3 training charts, telemetry charts:
        // more than one A4 page and not absurdly many
        QVERIFY2(pages.size() >= 3 && pages.size() <= 12, qPrintable(QString::number(pages.size())));
        for (const QString& page : pages) {
            QImage img(m_dir + "/" + page);
            QVERIFY(!img.isNull());
            QVERIFY2(nonWhiteFraction(img) > 0.003, qPrintable(page + " is blank"));
        }
        keep(path);
        if (QStandardPaths::findExecutable("pdftotext").isEmpty()) QSKIP("pdftotext (poppler-utils) is not installed");
        const QStringList text = pdfPages(path, int(pages.size()));
        QCOMPARE(text.size(), int(pages.size()));
        // the outcome has the first page to itself; the details follow
        QVERIFY(text[0].contains("Outcome") && text[0].contains("88.0 %") && text[0].contains("Test loss"));
        QVERIFY(!text[0].contains("Memory: predicted and measured"));
        QVERIFY(text[0].contains(QString("page 1 of %1").arg(pages.size())));
        QStringList pngs;
        for (const QString& page : pages) pngs << m_dir + "/" + page;
        const QStringList bad = headingsEndingAPage(path, pngs, 40);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join('\n')));
    }

    void longTableFlowsOverPages() {
        RunStore store;
        QVERIFY(store.open(m_db));
        ReportWriter w(*ReportWriter::load(store, m_deep));
        const QString path = m_dir + "/deep.pdf";
        QVERIFY(w.write(path, ReportWriter::Format::Pdf));
        keep(path);
        if (QStandardPaths::findExecutable("pdftotext").isEmpty() || QStandardPaths::findExecutable("pdfinfo").isEmpty())
            QSKIP("pdftotext/pdfinfo (poppler-utils) are not installed");
        const int n = pdfPageCount(path);
        QVERIFY2(n >= 4, qPrintable(QString::number(n)));
        const QStringList text = pdfPages(path, n);
        QCOMPARE(text.size(), n);
        // all 162 layers are there, each once, and the table's header is repeated on the next page
        int rows = 0, headers = 0, modelPages = 0;
        for (const QString& page : text) {
            bool any = false;
            for (const QString& line : page.split('\n')) {
                if (line.contains(QRegularExpression("^\\s*\\d+\\s+\\d+\\s+(linear|relu|flatten)"))) ++rows, any = true;
                if (line.contains("Activations / sample")) ++headers;
            }
            modelPages += any;
        }
        QCOMPARE(rows, 162);
        QVERIFY2(modelPages >= 2, qPrintable(QString::number(modelPages)));
        QCOMPARE(headers, modelPages);
        QProcess p;
        p.start("pdftoppm", {"-r", "40", "-png", path, m_dir + "/deep"});
        QVERIFY(p.waitForFinished(60000));
        QStringList pngs;
        for (const QString& f : QDir(m_dir).entryList({"deep*.png"}, QDir::Files, QDir::Name)) pngs << m_dir + "/" + f;
        QCOMPARE(int(pngs.size()), n);
        const QStringList bad = headingsEndingAPage(path, pngs, 40);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join('\n')));
    }

    void jsonValidatesAgainstSchema() {
        RunStore store;
        QVERIFY(store.open(m_db));
        QFile sf(hrtest::qsource_path("docs/report.schema.json"));
        QVERIFY(sf.open(QIODevice::ReadOnly));
        const QJsonObject schema = QJsonDocument::fromJson(sf.readAll()).object();
        QVERIFY(schema.contains("$schema"));
        for (qint64 id : {m_full, m_bare}) {
            ReportWriter w(*ReportWriter::load(store, id));
            const QString path = m_dir + QString("/run%1.json").arg(id);
            QVERIFY(w.write(path, ReportWriter::Format::Json));
            QFile f(path);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QJsonParseError pe;
            const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &pe);
            QCOMPARE(pe.error, QJsonParseError::NoError);
            QStringList errors;
            validate(doc.object(), schema, "$", &errors);
            QVERIFY2(errors.isEmpty(), qPrintable(errors.mid(0, 5).join("\n")));
            const QJsonObject o = doc.object();
            QCOMPARE(o["run"].toObject()["id"].toInteger(), id);
            if (id == m_full) {
                QCOMPARE(o["steps"].toArray().size(), 200);
                QCOMPARE(o["epochs"].toArray().size(), 2);
                QCOMPARE(o["telemetry"].toArray().size(), 40);
                QCOMPARE(o["memory"].toObject()["categories"].toArray().size(), 9);
                QVERIFY(o["layers"].toArray().size() >= 5);
                QCOMPARE(o["energy"].toObject()["joules"].toDouble(), 3040.0);
            } else {
                QCOMPARE(o["run"].toObject()["status"].toString(), QString("failed"));
                QVERIFY(o["energy"].toObject()["joules"].isNull());
            }
        }
        // and the validator does catch a bad document
        QStringList errors;
        validate(QJsonObject{{"format", "nope"}}, schema, "$", &errors);
        QVERIFY(errors.size() >= 5);
    }

    void csvRows() {
        RunStore store;
        QVERIFY(store.open(m_db));
        ReportWriter w(*ReportWriter::load(store, m_full));
        const QString path = m_dir + "/full.csv";
        QVERIFY(w.write(path, ReportWriter::Format::Csv));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 200 + 2);
        const int columns = lines[0].split(',').size();
        QCOMPARE(columns, 12);
        for (const QString& l : lines) QCOMPARE(l.split(',').size(), columns);
        QVERIFY(lines[1].startsWith("step,1,1,"));
        QVERIFY(lines.last().startsWith("epoch,200,2,"));
        QCOMPARE(lines[200].split(',')[1], QString("200"));
    }

    void reportCommand() {
        const auto report = [](QStringList args) { return runCommand(QStringList{"report"} + args); };
        const QString out = m_dir + "/cmd.html";
        QCOMPARE(report({QString::number(m_full), "--db", m_db, "--out", out}), 0);
        QVERIFY(QFileInfo(out).size() > 10000);
        // format from the extension, run by name and by "last"
        QCOMPARE(report({"lenet full", "--db", m_db, "--out", m_dir + "/cmd.json"}), 0);
        QVERIFY(QJsonDocument::fromJson([&] { QFile f(m_dir + "/cmd.json"); f.open(QIODevice::ReadOnly); return f.readAll(); }()).isObject());
        QCOMPARE(report({"last", "--db", m_db, "--format", "csv", "--out", m_dir + "/last.csv"}), 0);
        QVERIFY(QFile::exists(m_dir + "/last.csv"));
        // bad input: exit 2, one message, and nothing written
        {
            OutputCapture c;
            QCOMPARE(report({"9999", "--db", m_db, "--out", m_dir + "/none.html"}), 2);
            QVERIFY2(c.err().contains("no run '9999'") && c.err().count('\n') == 1, qPrintable(c.err()));
        }
        QVERIFY(!QFile::exists(m_dir + "/none.html"));
        {
            OutputCapture c;
            QCOMPARE(report({QString::number(m_full), "--db", m_db, "--format", "docx", "--out", m_dir + "/x.docx"}), 2);
            QVERIFY2(c.err().contains("unknown format 'docx' for --format; use html, pdf, json or csv"), qPrintable(c.err()));
        }
        QVERIFY(!QFile::exists(m_dir + "/x.docx"));
        QCOMPARE(report({QString::number(m_full), "--db", m_db, "--out", "/nonexistent-dir/r.html"}), 2);
        QCOMPARE(report({QString::number(m_full), "--db", m_db, "--out", m_dir}), 2);
        QCOMPARE(report({"--db", m_db}), 2);
        QCOMPARE(report({"1", "--bogus", "x", "--db", m_db}), 2);
        QCOMPARE(report({"1", "--db", m_dir + "/missing.sqlite"}), 2);
        QVERIFY(!QFile::exists(m_dir + "/missing.sqlite"));
        QVERIFY(QDir(m_dir).entryList({"*.tmp", "*~", ".*.html*"}, QDir::Files | QDir::Hidden).isEmpty());
    }

    void runsCommandListsTheHistory() {
        const auto runs = [](QStringList args, QString* out) {
            OutputCapture c;
            const int code = runCommand(QStringList{"runs"} + args);
            *out = c.out() + c.err();
            return code;
        };
        QString text;
        QCOMPARE(runs({"--db", m_db}, &text), 0);
        QStringList lines = text.split('\n', Qt::SkipEmptyParts);
        QVERIFY2(lines.size() == 4, qPrintable(text));  // the header and the three runs, newest first
        QVERIFY2(lines[0].contains("ID") && lines[0].contains("STATUS") && lines[0].contains("TEST ACC"), qPrintable(lines[0]));
        QVERIFY2(lines[1].trimmed().startsWith(QString::number(m_deep)) && lines[1].contains("finished") &&
                     lines[1].contains("deep"),
                 qPrintable(lines[1]));
        QVERIFY2(lines[2].trimmed().startsWith(QString::number(m_bare)) && lines[2].contains("failed") &&
                     lines[2].contains("mlp <bare> & co") && lines[2].contains(" - "),
                 qPrintable(lines[2]));
        QVERIFY2(lines[3].trimmed().startsWith(QString::number(m_full)) && lines[3].contains("finished") &&
                     lines[3].contains("0.8800") && lines[3].contains("lenet full"),
                 qPrintable(lines[3]));
        // filters: one status, a limit, a text
        QCOMPARE(runs({"--db", m_db, "--status", "failed"}, &text), 0);
        lines = text.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[1].contains("mlp <bare> & co"));
        QCOMPARE(runs({"--db", m_db, "--status", "failed,finished", "--limit", "2"}, &text), 0);
        lines = text.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[1].contains("deep") && lines[2].contains("mlp <bare> & co"));
        QCOMPARE(runs({"--db", m_db, "--status", "finished", "--filter", "lenet"}, &text), 0);
        lines = text.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        QVERIFY(lines[1].contains("lenet full"));
        QCOMPARE(runs({"--db", m_db, "--filter", "no such run"}, &text), 0);
        QVERIFY2(text.startsWith("No runs in "), qPrintable(text));
        // bad input: exit 2 and one message
        QCOMPARE(runs({"--db", m_db, "--status", "exploded"}, &text), 2);
        QVERIFY2(text.contains("unknown status 'exploded'") && text.count('\n') == 1, qPrintable(text));
        QCOMPARE(runs({"--db", m_db, "--limit", "-1"}, &text), 2);
        QVERIFY2(text.contains("--limit expects an integer from 0 to 2147483647"), qPrintable(text));
    }
};

QTEST_MAIN(TestReports)
#include "test_reports.moc"
