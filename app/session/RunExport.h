#pragma once
// A run's model written for other programs, the one code both front ends call: `headroom export RUN --hf DIR |
// --peft DIR | --gguf FILE | --onnx FILE` (cli/export_command.cpp) and the Runs tab's Export menu
// (gui/ExportDialog). Each kind is core's exporter (train/hf_model.h, train/peft_export.h, train/gguf_export.h,
// exporters/onnx); this adds what a person is shown at the end: the files written and their sizes. Refusals are
// core's InputError (a language model as ONNX, a peft adapter of a run without LoRA, a model not in the LLaMA
// layout as GGUF or a Hugging Face folder), thrown before anything is written.
#include <QList>
#include <QString>

#include <cstdint>

#include "exporters/onnx/onnx_export.h"
#include "nn/compression.h"
#include "train/gguf_export.h"
#include "train/hf_model.h"
#include "train/peft_export.h"

namespace hrapp {

enum class ExportKind { HfFolder, PeftAdapter, Gguf, Onnx };

struct ExportRequest {
    ExportKind kind = ExportKind::HfFolder;
    QString run;     // a run folder or its model.safetensors
    QString target;  // the folder (Hugging Face, peft) or file (GGUF, ONNX) to write
    QString ggufType = QStringLiteral("f16");  // f32 | f16 | bf16 | q8_0
    bool ollama = false;                      // GGUF: a Modelfile beside the file
    std::uint64_t shardBytes = 0;             // Hugging Face: 0 = transformers' 5 GB
    hr::CompressionOptions whatIf;            // ONNX: the pruned/quantised what-if's weights
};

struct ExportedFile {
    QString path;  // absolute
    qint64 bytes = 0;
};

struct ExportOutcome {
    QList<ExportedFile> files;  // in the order written
    // what the exporter reported (the one of the request's kind is set)
    hr::HfExportResult hf;
    hr::PeftExportResult peft;
    hr::GgufExportResult gguf;
    hr::OnnxExportResult onnx;
    qint64 totalBytes() const;
};

// Writes the export; hr::InputError (nothing written) or hr::Error. Any thread: it touches no widget.
ExportOutcome exportRun(const ExportRequest& request);

}  // namespace hrapp
