#pragma once
// The hardware half of the Monitor tab: a device table and live charts of GPU power, utilisation,
// temperature and memory (NVML used against the ledger's allocated and reserved bytes), one line per
// device, plus host CPU and memory (RAM used, this process's resident memory). Fed by the always-on
// TelemetryMonitor, run or no run. Without an NVIDIA driver it says so and shows the host charts.
#include <QElapsedTimer>
#include <QHash>
#include <QWidget>

#include "session/TrainingSession.h"
#include "telemetry/telemetry.h"

class QLabel;
class QTimer;
class QTableWidget;
class QGridLayout;
class QFrame;

namespace hrw {
class LiveChart;
}

namespace hrapp {

class HardwareView : public QWidget {
    Q_OBJECT
public:
    explicit HardwareView(QWidget* parent = nullptr);

    // What the GPU source said (TelemetryMonitor::gpuAvailable/gpuStatus).
    void setGpuState(bool available, const QString& status);
    bool gpuAvailable() const { return m_gpuAvailable; }
    void addSample(const hr::TelemetrySample& sample);
    // A ledger snapshot at time t (the samples' clock): allocated and reserved bytes of a GPU run,
    // drawn on the GPU memory chart against NVML's used bytes (gpu < 0, a CPU run: ignored).
    void addLedger(double t, const hr::MemoryEvent& memory, int gpu);
    void setDark(bool dark);
    void resetViews();
    // The charts redraw at most every ms (0: at every sample); the window keeps it at the Monitor's
    // redraw interval during a run, so drawing takes little of a CPU run's cores (MonitorView).
    void setRefreshIntervalMs(int ms);

    hrw::LiveChart* powerChart() const { return m_power; }
    hrw::LiveChart* utilizationChart() const { return m_util; }
    hrw::LiveChart* temperatureChart() const { return m_temp; }
    hrw::LiveChart* gpuMemoryChart() const { return m_gpuMemory; }
    hrw::LiveChart* cpuChart() const { return m_cpu; }
    hrw::LiveChart* hostMemoryChart() const { return m_hostMemory; }
    QList<hrw::LiveChart*> charts() const;
    QTableWidget* deviceTable() const { return m_table; }
    QString statusText() const;
    bool showsNoDriverState() const;

signals:
    void saveChartRequested(hrw::LiveChart* chart);

private:
    void layoutCharts();
    int gpuSeries(hrw::LiveChart* chart, int gpu, const QString& name);
    void updateTable(const std::vector<hr::GpuStats>& gpus);
    void refreshCharts();

    QLabel* m_title = nullptr;
    QLabel* m_status = nullptr;
    QFrame* m_banner = nullptr;
    QLabel* m_bannerText = nullptr;
    QTableWidget* m_table = nullptr;
    QGridLayout* m_grid = nullptr;
    hrw::LiveChart* m_power = nullptr;
    hrw::LiveChart* m_util = nullptr;
    hrw::LiveChart* m_temp = nullptr;
    hrw::LiveChart* m_gpuMemory = nullptr;
    hrw::LiveChart* m_cpu = nullptr;
    hrw::LiveChart* m_hostMemory = nullptr;
    bool m_gpuAvailable = false;
    QHash<QString, int> m_series;  // "<chart>/<gpu>" -> series index
    int m_ledgerAllocGpu = -1, m_ledgerReservedGpu = -1;
    int m_refreshMs = 0;
    QTimer* m_refreshTimer = nullptr;
    QElapsedTimer m_sinceRefresh;
};

}  // namespace hrapp
