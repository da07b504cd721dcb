// `headroom export RUN --hf DIR`: a trained model as a Hugging Face model folder (core/train/hf_model.h).
// `headroom export RUN --gguf FILE [--type T]`: as one GGUF file for llama.cpp (core/train/gguf_export.h).
// `headroom export RUN --peft DIR`: a LoRA run's adapters as peft's adapter folder (core/train/peft_export.h).
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
#include "session/RunExport.h"
#include "session/RunText.h"
#include "memory/allocator.h"

namespace hrapp {

namespace {

int runOnnxExport(const CliRequest& r) {
    try {
        ExportRequest req;
        req.kind = ExportKind::Onnx;
        req.run = r.positional.value(0);
        req.target = r.exportOnnx;
        req.whatIf = r.config.what_if;
        const hr::OnnxExportResult res = exportRun(req).onnx;
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
    const int targets = int(!r.exportHf.isEmpty()) + int(!r.exportGguf.isEmpty()) + int(!r.exportOnnx.isEmpty()) +
                        int(!r.exportPeft.isEmpty());
    if (targets != 1)
        return bad(Cli::tr("give one of --hf DIR (a Hugging Face model folder), --peft DIR (a LoRA run's peft adapter), "
                           "--gguf FILE (a GGUF file) and --onnx FILE (an ONNX file)"));
    if ((!r.ggufType.isEmpty() || r.ollama) && r.exportGguf.isEmpty())
        return bad(Cli::tr("--type and --ollama are for a GGUF file: give --gguf FILE"));
    if (!r.exportOnnx.isEmpty()) return runOnnxExport(r);
    if (r.config.what_if.active()) return bad(Cli::tr("--prune and --quantize go with --onnx FILE"));
    try {
        ExportRequest req;
        req.run = r.positional.value(0);
        if (!r.exportPeft.isEmpty()) {
            req.kind = ExportKind::PeftAdapter;
            req.target = r.exportPeft;
            const ExportOutcome out = exportRun(req);
            QStringList targets;
            for (const auto& t : out.peft.target_modules) targets << q(t);
            print(Cli::tr("wrote %1 (peft adapter: r %2, alpha %3, %4; %5 of adapters): adapter_config.json, "
                          "adapter_model.safetensors\n")
                      .arg(r.exportPeft)
                      .arg(out.peft.rank)
                      .arg(out.peft.alpha)
                      .arg(targets.join(QLatin1Char(',')))
                      .arg(q(hr::format_bytes(static_cast<std::size_t>(out.peft.adapter_bytes)))));
            return 0;
        }
        if (!r.exportGguf.isEmpty()) {
            req.kind = ExportKind::Gguf;
            req.target = r.exportGguf;
            req.ggufType = r.ggufType.isEmpty() ? QStringLiteral("f16") : r.ggufType;
            req.ollama = r.ollama;
            const hr::GgufExportResult res = exportRun(req).gguf;
            print(Cli::tr("wrote %1 (%2, %3, %4 tensors, %5; tokenizer %6%7)\n")
                      .arg(r.exportGguf)
                      .arg(q(res.architecture))
                      .arg(r.ggufType.isEmpty() ? QStringLiteral("f16") : r.ggufType)
                      .arg(res.tensors)
                      .arg(q(hr::format_bytes(static_cast<std::size_t>(res.file_bytes))))
                      .arg(q(res.tokenizer))
                      .arg(res.chat_template.empty() ? QString() : Cli::tr(", chat template %1").arg(q(res.chat_template))));
            if (!res.modelfile.empty()) print(Cli::tr("wrote %1 (for ollama create)\n").arg(q(res.modelfile)));
            return 0;
        }
        req.kind = ExportKind::HfFolder;
        req.target = r.exportHf;
        req.shardBytes = r.shardBytes;
        const hr::HfExportResult res = exportRun(req).hf;
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
