#pragma once
// The Monitor tab: result cards and live charts (loss, accuracy, throughput, memory by category).
#include <QVector>
#include <QWidget>

#include "session/TrainingSession.h"

class QLabel;

namespace hrw {
class LiveChart;
class MemoryChart;
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

signals:
    void saveChartRequested(hrw::LiveChart* chart);

private:
    QWidget* makeCard(const QString& title, QLabel** value);

    hrw::LiveChart* m_loss = nullptr;
    hrw::LiveChart* m_accuracy = nullptr;
    hrw::LiveChart* m_throughput = nullptr;
    hrw::MemoryChart* m_memory = nullptr;
    QLabel* m_testAccuracy = nullptr;
    QLabel* m_trainLoss = nullptr;
    QLabel* m_throughputValue = nullptr;
    QLabel* m_peakMemory = nullptr;
    double m_ema = 0;
    bool m_emaInit = false;
    std::size_t m_peakBytes = 0;
};

}  // namespace hrapp
