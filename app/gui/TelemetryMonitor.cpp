#include "gui/TelemetryMonitor.h"

#include <QMetaObject>
#include <QPointer>

#include "telemetry/nvml_source.h"

namespace hrapp {

TelemetryMonitor::TelemetryMonitor(std::shared_ptr<hr::GpuTelemetrySource> gpu, QObject* parent)
    : QObject(parent), m_gpu(gpu ? std::move(gpu) : hr::make_default_gpu_source()) {
    qRegisterMetaType<hr::TelemetrySample>("hr::TelemetrySample");
    QPointer<TelemetryMonitor> self(this);
    m_sampler = std::make_unique<hr::TelemetrySampler>(m_gpu, [self](const hr::TelemetrySample& s) {
        // On the sampler thread: hand a copy to the GUI thread and return at once.
        if (!self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, s] {
                if (!self) return;
                ++self->m_delivered;
                emit self->sampleReady(s);
            },
            Qt::QueuedConnection);
    });
}

TelemetryMonitor::~TelemetryMonitor() { stop(); }

void TelemetryMonitor::start() {
    if (m_sampler->running()) return;
    m_clock.start();
    m_sampler->start();
}

void TelemetryMonitor::stop() {
    if (m_sampler) m_sampler->stop();
}

bool TelemetryMonitor::isRunning() const { return m_sampler->running(); }

void TelemetryMonitor::setIntervalMs(int ms) { m_sampler->set_interval_ms(hr::TelemetrySampler::clamp_interval_ms(ms)); }

int TelemetryMonitor::intervalMs() const { return m_sampler->interval_ms(); }

void TelemetryMonitor::setCurrentStep(qint64 step) { m_sampler->set_current_step(step); }

bool TelemetryMonitor::gpuAvailable() const { return m_gpu && m_gpu->available(); }

QString TelemetryMonitor::gpuStatus() const { return m_gpu ? QString::fromStdString(m_gpu->status()) : QString(); }

int TelemetryMonitor::deviceCount() const { return m_gpu ? m_gpu->device_count() : 0; }

double TelemetryMonitor::secondsNow() const { return m_clock.isValid() ? m_clock.nsecsElapsed() / 1e9 : 0.0; }

}  // namespace hrapp
