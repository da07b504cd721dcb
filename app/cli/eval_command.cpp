// `headroom eval`: the test accuracy of a weights file (core/train/eval_weights.h), printed for a terminal.
#include "base/error.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "io/safetensors.h"
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
        const hr::WeightsEvaluation e = hr::evaluate_weights(r.config, r.weights.toStdString());
        for (const std::string& line : e.notes) eprint(QString::fromStdString(line) + QLatin1Char('\n'));
        if (!r.quiet)
            eprint(Cli::tr("evaluated %1 on %2 test samples of %3 (%4)\n")
                       .arg(r.weights)
                       .arg(e.test_samples)
                       .arg(QString::fromStdString(r.config.data), QString::fromStdString(e.device_name)));
        print(QStringLiteral("test_loss=%1\n").arg(e.test_loss, 0, 'f', 6));
        print(QStringLiteral("test_accuracy=%1\n").arg(e.test_accuracy, 0, 'f', 4));
        return 0;
    } catch (const hr::Error& e) {
        return bad(messageText(e.message()));
    }
}

}  // namespace hrapp
