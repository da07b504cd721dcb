#include "gui/RuntimeInfo.h"

#include <QCoreApplication>
#include <QLibrary>
#include <QRegularExpression>
#include <QThread>

#include "telemetry/nvml_source.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#endif

namespace hrapp {

QList<DeviceChoice> availableDevices() {
    QList<DeviceChoice> list;
    list.push_back({QStringLiteral("cpu"),
                    QCoreApplication::translate("hrapp::RuntimeInfo", "CPU (%1 threads)")
                        .arg(QThread::idealThreadCount())});
    // HOOK: CUDA devices go here once core reports them.
    return list;
}

namespace {
using IntFn = int (*)(int*);
QString probe(const QStringList& names, const char* symbol, bool outParam, QString (*fmt)(int)) {
    for (const QString& n : names) {
        QLibrary lib(n);
        if (!lib.load()) continue;
        auto f = lib.resolve(symbol);
        if (!f) continue;
        int v = 0;
        if (outParam) {
            if (reinterpret_cast<IntFn>(f)(&v) != 0) continue;
        } else {
            v = int(reinterpret_cast<size_t (*)()>(f)());
        }
        return fmt(v);
    }
    return QCoreApplication::translate("hrapp::RuntimeInfo", "not found");
}
}  // namespace

QString cudaRuntimeVersion() {
#ifdef HEADROOM_WITH_CUDA
    // the runtime is linked into the CUDA module (cmake/Cuda.cmake): its version is the module's
    const QString versions = QString::fromStdString(hr::cuda_versions());
    const QRegularExpressionMatch m = QRegularExpression(QStringLiteral("CUDA runtime ([0-9.]+)")).match(versions);
    if (m.hasMatch())
        return QCoreApplication::translate("hrapp::RuntimeInfo", "%1 (in the CUDA module)").arg(m.captured(1));
#endif
    return probe({QStringLiteral("cudart"), QStringLiteral("libcudart.so.13"), QStringLiteral("libcudart.so.12")},
                 "cudaRuntimeGetVersion", true,
                 [](int v) { return QStringLiteral("%1.%2").arg(v / 1000).arg((v % 1000) / 10); });
}

QString cudnnVersion() {
    return probe({QStringLiteral("cudnn"), QStringLiteral("libcudnn.so.9"), QStringLiteral("libcudnn.so.8")},
                 "cudnnGetVersion", false, [](int v) {
                     return v >= 10000 ? QStringLiteral("%1.%2.%3").arg(v / 10000).arg((v % 10000) / 100).arg(v % 100)
                                       : QStringLiteral("%1.%2.%3").arg(v / 1000).arg((v % 1000) / 100).arg(v % 100);
                 });
}

QString ncclVersion() {
    return probe({QStringLiteral("nccl"), QStringLiteral("libnccl.so.2")}, "ncclGetVersion", true, [](int v) {
        return QStringLiteral("%1.%2.%3").arg(v / 10000).arg((v % 10000) / 100).arg(v % 100);
    });
}

QString gpuDriverStatus() {
    try {
        auto src = hr::make_default_gpu_source();
        return QString::fromStdString(src->status());
    } catch (...) {
        return QCoreApplication::translate("hrapp::RuntimeInfo", "not found");
    }
}

}  // namespace hrapp
