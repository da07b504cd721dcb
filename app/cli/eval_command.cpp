// `headroom eval`: the test accuracy of a weights file (core/train/eval_weights.h), printed for a terminal.
#include "base/error.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "io/safetensors.h"
#include "memory/allocator.h"
#include "session/RunText.h"
#include "train/checkpoint.h"
#include "train/eval_weights.h"

namespace hrapp {

int runEvalCommand(const CliRequest& request) {
    CliRequest r = request;
    auto bad = [](const QString& message) {
        eprint(Cli::tr("headroom eval: %1\n").arg(message));
        return 2;
    };
    if (r.weights.isEmpty()) return bad(Cli::tr("--weights FILE.safetensors is required: the weights to evaluate"));
    try {
        if (r.has("preset") || r.has("model")) {
            resolveModel(r);
        } else {
            // the model the file was written for (its metadata), else the default preset
            const hr::SafeTensorsFile f = hr::read_safetensors(r.weights.toStdString());
            if (f.metadata.count("model_spec")) {
                r.config.model = hr::model_spec_of(f, r.weights.toStdString());
                r.config.model_source = "weights:" + r.weights.toStdString();
            } else {
                resolveModel(r);
            }
        }
        const hr::CompressionOptions what_if = r.config.what_if;
        const hr::WeightsEvaluation e = hr::evaluate_weights(r.config, r.weights.toStdString(), what_if);
        if (e.language_model && r.has("tokenizer") && e.tokenizer != r.config.tokenizer)
            eprint(Cli::tr("the weights name the %1 tokenizer, stored next to them: it was used, not --tokenizer %2\n")
                       .arg(QString::fromStdString(e.tokenizer), QString::fromStdString(r.config.tokenizer)));
        for (const hr::Message& line : e.notes) eprint(messageText(line) + QLatin1Char('\n'));
        if (!r.quiet && e.language_model)
            eprint(Cli::tr("evaluated %1 on %2 validation tokens (%3 windows) of %4 (%5); the loss is per token, the "
                           "accuracy the share of next tokens predicted\n")
                       .arg(r.weights)
                       .arg(e.test_tokens)
                       .arg(e.test_samples)
                       .arg(QString::fromStdString(r.config.data), QString::fromStdString(e.device_name)));
        else if (!r.quiet)
            eprint(Cli::tr("evaluated %1 on %2 test samples of %3 (%4)\n")
                       .arg(r.weights)
                       .arg(e.test_samples)
                       .arg(QString::fromStdString(r.config.data), QString::fromStdString(e.device_name)));
        print(QStringLiteral("test_loss=%1\n").arg(e.test_loss, 0, 'f', 6));
        print(QStringLiteral("test_accuracy=%1\n").arg(e.test_accuracy, 0, 'f', 4));
        if (e.compressed) {
            const hr::CompressionReport& c = e.compression;
            QStringList how;
            if (what_if.prune > 0)
                how << Cli::tr("%1 % of each weight tensor's smallest values set to zero").arg(what_if.prune * 100, 0, 'f', 1);
            if (what_if.bits == 8) how << Cli::tr("int8 with a scale per output row");
            if (what_if.bits == 4) how << Cli::tr("int4 with a scale per %1 values").arg(what_if.group);
            if (what_if.bits == hr::kQuantNf4)
                how << Cli::tr("nf4 (NormalFloat) with a scale per %1 values, the scales quantised too").arg(what_if.group);
            const auto mib = [](std::size_t b) { return QString::fromStdString(hr::format_bytes(b)); };
            if (!r.quiet)
                eprint(Cli::tr("what-if: %1, on %2 weight tensors (%3 values, %4 zero after); stored so they take %5 "
                               "instead of %6 as f32 (%7x), besides %8 of biases, normalisation and statistics kept "
                               "as they are; the largest change to a weight %9\n")
                           .arg(how.join(QStringLiteral("; ")))
                           .arg(c.tensors)
                           .arg(c.values)
                           .arg(c.zeros)
                           .arg(mib(c.stored_bytes), mib(c.dense_bytes))
                           .arg(c.dense_bytes ? static_cast<double>(c.stored_bytes) / static_cast<double>(c.dense_bytes) : 1.0, 0, 'f', 3)
                           .arg(mib(c.other_bytes))
                           .arg(c.max_abs_change, 0, 'g', 4));
            print(QStringLiteral("test_loss_after=%1\n").arg(e.test_loss_after, 0, 'f', 6));
            print(QStringLiteral("test_accuracy_after=%1\n").arg(e.test_accuracy_after, 0, 'f', 4));
            print(QStringLiteral("weights_bytes=%1\n").arg(c.dense_bytes + c.other_bytes));
            print(QStringLiteral("weights_bytes_after=%1\n").arg(c.stored_bytes + c.other_bytes));
        }
        return 0;
    } catch (const hr::Error& e) {
        return bad(messageText(e.message()));
    }
}

}  // namespace hrapp
