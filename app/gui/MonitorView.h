#pragma once
// The Monitor tab: result cards and live charts (loss, accuracy, throughput, memory by category).
// A multi-rank run's memory comes from every rank: the memory chart shows one rank at a time, picked
// in the Rank box above it (shown once a second rank reports); the peak card is the largest rank's.
#include <QMap>
#include <QVector>
#include <QWidget>

#include "charts/MemoryChart.h"

#include "session/TrainingSession.h"

class QComboBox;
class QLabel;

namespace hrw {
class LiveChart;
}

namespace hrapp {

class MonitorView : public QWidget {
    Q_OBJECT
public:
    explicit MonitorView(QWidget* parent = nullptr);

    void clear();
    void addSteps(const QVector<hr::StepEvent>& steps);
    void addEpoch(const hr::EpochEvent& epoch);
    void addMemory(const hr::MemoryEvent& memory);
    void setResult(const hr::TrainResult& result);
    void setDark(bool dark);
    void resetViews();

    hrw::LiveChart* lossChart() const { return m_loss; }
    hrw::LiveChart* accuracyChart() const { return m_accuracy; }
    hrw::LiveChart* throughputChart() const { return m_throughput; }
    hrw::MemoryChart* memoryChart() const { return m_memory; }
    QList<hrw::LiveChart*> charts() const;
    QString testAccuracyText() const;
    static QString formatAccuracy(double fraction);
    // Several ranks: the ranks whose memory arrived, and the one the memory chart shows.
    QList<int> memoryRanks() const { return m_rankX.keys(); }
    int memoryRank() const { return m_shownRank; }
    void setMemoryRank(int rank);
    QComboBox* memoryRankBox() const { return m_rankBox; }

signals:
    void saveChartRequested(hrw::LiveChart* chart);

private:
    QWidget* makeCard(const QString& title, QLabel** value);

    hrw::LiveChart* m_loss = nullptr;
    hrw::LiveChart* m_accuracy = nullptr;
    hrw::LiveChart* m_throughput = nullptr;
    hrw::MemoryChart* m_memory = nullptr;
    QComboBox* m_rankBox = nullptr;
    QLabel* m_rankLabel = nullptr;
    QMap<int, QVector<double>> m_rankX;                 // per rank: the steps of its memory samples
    QMap<int, QVector<hrw::MemoryChart::GroupBytes>> m_rankBytes;  // and their grouped bytes (MemoryChart::GroupBytes)
    int m_shownRank = 0;
    QLabel* m_testAccuracy = nullptr;
    QLabel* m_trainLoss = nullptr;
    QLabel* m_throughputValue = nullptr;
    QLabel* m_peakMemory = nullptr;
    double m_ema = 0;
    bool m_emaInit = false;
    std::size_t m_peakBytes = 0;
};

}  // namespace hrapp
