#pragma once
// TelemetryMonitor: owns the telemetry sampler thread (core/telemetry) for the whole life of the window,
// run or no run (a monitor in its own right, like nvtop). Samples are taken on the sampler thread and
// reach the GUI thread as queued sampleReady() signals carrying copies.
#include <QElapsedTimer>
#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>

#include "telemetry/sampler.h"
#include "telemetry/telemetry.h"

Q_DECLARE_METATYPE(hr::TelemetrySample)

namespace hrapp {

class TelemetryMonitor : public QObject {
    Q_OBJECT
public:
    // gpu null: NVML when a driver is there, else a source saying "no NVIDIA driver ...".
    explicit TelemetryMonitor(std::shared_ptr<hr::GpuTelemetrySource> gpu = nullptr, QObject* parent = nullptr);
    ~TelemetryMonitor() override;  // stops the sampler thread

    void start();
    void stop();
    bool isRunning() const;
    void setIntervalMs(int ms);  // clamped to 100 ms .. 10 s
    int intervalMs() const;
    // The training step new samples are tagged with (-1: no run). Thread-safe.
    void setCurrentStep(qint64 step);

    bool gpuAvailable() const;
    QString gpuStatus() const;  // "NVML 550.54, 2 GPUs" or "no NVIDIA driver: ..."
    int deviceCount() const;
    qint64 samplesDelivered() const { return m_delivered; }
    // Seconds on the samples' clock (sample.t_seconds) now: for placing other events on the same axis.
    double secondsNow() const;

signals:
    void sampleReady(const hr::TelemetrySample& sample);

private:
    std::shared_ptr<hr::GpuTelemetrySource> m_gpu;
    std::unique_ptr<hr::TelemetrySampler> m_sampler;
    QElapsedTimer m_clock;
    qint64 m_delivered = 0;
};

}  // namespace hrapp
