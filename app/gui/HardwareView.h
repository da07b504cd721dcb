#pragma once
// The hardware half of the Monitor tab: a device table and live charts of GPU power, utilisation,
// temperature and memory (NVML used against the ledger's allocated and reserved bytes), one line per
// device, plus host CPU and memory (RAM used, this process's resident memory). Fed by the always-on
// TelemetryMonitor, run or no run. Without an NVIDIA driver it says so and shows the host charts.
// A multi-rank run adds what its ranks report (RankTelemetry): each rank's resident memory, the GPUs and
// host figures of machines the window's own monitor does not see, and which rank trains on which GPU.
// Each rank's ledger is drawn too: a GPU rank's against its GPU, a CPU rank's on the "Memory per rank"
// chart, named by what the rank runs (a pipeline stage, a stage of a data-parallel replica).
#include <QElapsedTimer>
#include <QHash>
#include <QWidget>

#include <map>
#include <vector>

#include "session/RunEvent.h"
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
    // A rank's telemetry at time t (the samples' clock); localHost: this machine's host name. Every
    // rank's resident memory joins the host memory chart. A machine the window's own monitor does not
    // see (another host, or this one when it has no driver here) adds its GPUs to the GPU charts and the
    // table, and its CPU and RAM; the table's Ranks column says which rank trains on which GPU, and a
    // rank on a GPU draws its ledger against that GPU (addLedger).
    void addRankTelemetry(double t, const RankTelemetry& telemetry, const QString& localHost);
    // The run's layout over its ranks, for the names of the per-rank lines: `ranks` processes, `pipeline`
    // stages (1: none; with more ranks than stages, rank r runs stage r / D of replica r % D, D = ranks /
    // pipeline). Set when a run starts (after clearRanks).
    void setRunLayout(int ranks, int pipeline);
    // "rank 1", "rank 1: stage 0", "rank 1: stage 0 of replica 1"
    QString rankName(int rank) const;
    // A run starts or ends: the ranks and the GPUs only they reported leave the table (the charts keep
    // their lines, which age out of the time window).
    // keepCharts: a run ended; its GPUs' lines stay on view (the GPU charts of a window without a driver
    // do not vanish under the user), until the next run's clearRanks().
    void clearRanks(bool keepCharts = false);
    // GPUs in the table that only the ranks reported (another machine's, or this one's without a driver here).
    int relayedGpuCount() const { return int(m_relayed.size()); }
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
    hrw::LiveChart* rankMemoryChart() const { return m_rankMemory; }
    QList<hrw::LiveChart*> charts() const;
    QTableWidget* deviceTable() const { return m_table; }
    QString statusText() const;
    bool showsNoDriverState() const;

signals:
    void saveChartRequested(hrw::LiveChart* chart);

private:
    void layoutCharts();
    void applyGpuState();
    int gpuSeries(hrw::LiveChart* chart, const QString& key, const QString& name, int color);
    void updateTable();
    void addGpuPoints(double t, const hr::GpuStats& g, const QString& key, const QString& label, int color);
    void scheduleRefresh();
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
    hrw::LiveChart* m_rankMemory = nullptr;  // CPU ranks' ledgers (MiB), shown once a CPU rank reports one
    bool m_gpuAvailable = false;
    QString m_gpuStatus;
    bool m_relayedCharts = false;  // the GPU charts show GPUs the ranks reported
    QHash<QString, int> m_series;  // "<chart>/<key>" -> series index
    int m_ledgerAllocGpu = -1, m_ledgerReservedGpu = -1;
    std::vector<hr::GpuStats> m_localGpus;  // the own monitor's last sample
    struct Relayed {  // a GPU only the ranks report, by "host:index"
        QString host;
        hr::GpuStats stats;
        int color = 0;
        bool local = false;  // this machine's (no driver here), keyed by its index alone
    };
    std::map<QString, Relayed> m_relayed;
    struct Place {  // where a rank runs
        QString host;
        int gpu = -1;
        bool local = false;  // host is this machine
    };
    std::map<int, Place> m_ranks;
    QHash<int, QPair<int, int>> m_rankLedger;  // rank -> its ledger's allocated and reserved series
    QHash<int, int> m_cpuRankLedger;           // a CPU rank -> its series on m_rankMemory
    int m_layoutRanks = 1, m_layoutPipeline = 1;
    int m_refreshMs = 0;
    QTimer* m_refreshTimer = nullptr;
    QElapsedTimer m_sinceRefresh;
};

}  // namespace hrapp
