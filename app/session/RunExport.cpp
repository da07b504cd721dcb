#include "session/RunExport.h"

#include <QDir>
#include <QFileInfo>

namespace hrapp {

qint64 ExportOutcome::totalBytes() const {
    qint64 n = 0;
    for (const ExportedFile& f : files) n += f.bytes;
    return n;
}

namespace {
ExportedFile fileOf(const QString& path) {
    const QFileInfo info(path);
    return {info.absoluteFilePath(), info.size()};
}
}  // namespace

ExportOutcome exportRun(const ExportRequest& r) {
    ExportOutcome out;
    const std::string run = r.run.toStdString(), target = r.target.toStdString();
    switch (r.kind) {
    case ExportKind::HfFolder:
        out.hf = hr::export_hf_folder(run, target, r.shardBytes > 0 ? r.shardBytes : hr::kHfDefaultShardBytes);
        for (const std::string& f : out.hf.files) out.files << fileOf(QDir(r.target).filePath(QString::fromStdString(f)));
        break;
    case ExportKind::PeftAdapter:
        out.peft = hr::export_peft_adapter(run, target);
        for (const std::string& f : out.peft.files) out.files << fileOf(QDir(r.target).filePath(QString::fromStdString(f)));
        break;
    case ExportKind::Gguf:
        out.gguf = hr::export_gguf(run, target, hr::parse_gguf_type(r.ggufType.toStdString()), r.ollama);
        out.files << fileOf(r.target);
        if (!out.gguf.modelfile.empty()) out.files << fileOf(QString::fromStdString(out.gguf.modelfile));
        break;
    case ExportKind::Onnx:
        out.onnx = hr::export_onnx(run, target, r.whatIf);
        out.files << fileOf(r.target);
        break;
    }
    return out;
}

}  // namespace hrapp
