// `headroom export RUN --hf DIR`: a trained model as a Hugging Face model folder (core/train/hf_model.h).
// `headroom export RUN --onnx FILE`: an image or table model as an ONNX file (exporters/onnx/onnx_export.h), with
// --prune/--quantize the what-if's weights as the floats it computes.
//
// RUN is a run folder or its model.safetensors. The folder gets config.json, model.safetensors (sharded
// above --shard-size, with model.safetensors.index.json) and the run's tokenizer file; a LoRA run's
// adapters are merged into the weights (its peft adapter folder is the run folder itself). Nothing is
// written when the model is not in the LLaMA layout or the file is damaged.
#include <QCoreApplication>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "exporters/onnx/onnx_export.h"
#include "session/RunText.h"
#include "memory/allocator.h"
#include "train/hf_model.h"

namespace hrapp {

namespace {

int runOnnxExport(const CliRequest& r) {
    try {
        const hr::OnnxExportResult res =
            hr::export_onnx(r.positional.value(0).toStdString(), r.exportOnnx.toStdString(), r.config.what_if);
        print(Cli::tr("wrote %1 (%2, %3): %4 nodes, opset %5, input \"input\" (batch, %6), output \"logits\" (batch, %7)%8\n")
                  .arg(r.exportOnnx, q(res.model), q(hr::format_bytes(static_cast<std::size_t>(res.bytes))))
                  .arg(res.nodes)
                  .arg(res.opset)
                  .arg(q([&] {
                      std::string s;
                      for (auto d : res.input_shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
                      return s;
                  }()))
                  .arg(res.classes)
                  .arg(res.compressed ? Cli::tr("; the what-if's weights") : QString()));
        return 0;
    } catch (const hr::InputError& e) {
        eprint(Cli::tr("headroom export: %1\n").arg(messageText(e.message())));
        return 2;
    } catch (const hr::Error& e) {
        eprint(Cli::tr("headroom export: %1\n").arg(messageText(e.message())));
        return 1;
    }
}

}  // namespace

int runExportCommand(const CliRequest& r) {
    auto bad = [](const QString& message) {
        eprint(Cli::tr("headroom export: %1\n").arg(message));
        return 2;
    };
    if (r.exportHf.isEmpty() == r.exportOnnx.isEmpty())
        return bad(Cli::tr("give one of --hf DIR (a Hugging Face model folder) and --onnx FILE (an ONNX file)"));
    if (!r.exportOnnx.isEmpty()) return runOnnxExport(r);
    if (r.config.what_if.active()) return bad(Cli::tr("--prune and --quantize go with --onnx FILE"));
    try {
        const hr::HfExportResult res = hr::export_hf_folder(r.positional.value(0).toStdString(), r.exportHf.toStdString(),
                                                            r.shardBytes > 0 ? r.shardBytes : hr::kHfDefaultShardBytes);
        print(Cli::tr("wrote %1 (%2 files, %3 of weights): %4\n")
                  .arg(r.exportHf)
                  .arg(res.files.size())
                  .arg(q(hr::format_bytes(static_cast<std::size_t>(res.weight_bytes))))
                  .arg(q([&] {
                      std::string s;
                      for (const auto& f : res.files) s += (s.empty() ? "" : ", ") + f;
                      return s;
                  }())));
        return 0;
    } catch (const hr::InputError& e) {
        return bad(messageText(e.message()));
    } catch (const hr::Error& e) {
        eprint(Cli::tr("headroom export: %1\n").arg(messageText(e.message())));
        return 1;
    }
}

}  // namespace hrapp
