#pragma once
// The Monitor tab: result cards and live charts (loss, accuracy, throughput, memory by category).
// A multi-rank run's memory comes from every rank: the memory chart shows one rank at a time, picked
// in the Rank box above it (shown once a second rank reports); the peak card is the largest rank's.
// Drawing is coalesced: events append their data at once, but the charts and cards are redrawn on one
// timer, at most every refreshIntervalMs() (the settings' chart refresh rate), and less often while
// drawing costs the GUI thread more than drawBudget() of a core (long runs, large windows): on a CPU
// run every millisecond this thread draws is taken from the training threads. Charts that cannot be
// seen (another tab, a minimised window) are not drawn; they are drawn once when shown.
#include <QElapsedTimer>
#include <QMap>
#include <QVector>
#include <QWidget>

#include "charts/MemoryChart.h"

#include "session/TrainingSession.h"

class QComboBox;
class QLabel;
class QTimer;

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
    // Test (validation) loss and accuracy: a point per evaluation, at its step (--eval-every's within an
    // epoch too); an epoch's own figures are drawn only when no evaluation came for its step (older relays).
    void addEval(const hr::EvalEvent& eval);
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

    // The shortest time between two redraws (ms; the settings' chart refresh rate).
    void setRefreshIntervalMs(int ms);
    int refreshIntervalMs() const { return m_baseIntervalMs; }
    // The time between redraws now: the base, lengthened while a redraw costs more than the budget.
    int effectiveIntervalMs() const { return m_intervalMs; }
    static constexpr double drawBudget() { return 0.01; }  // share of one core the charts may take
    // Draws what has arrived now (the end of a run; tests).
    void flush();
    bool refreshPending() const;
    qint64 redraws() const { return m_redraws; }

signals:
    void saveChartRequested(hrw::LiveChart* chart);
    // The effective interval changed: events need not come more often than this.
    void refreshIntervalChanged(int ms);

protected:
    void showEvent(QShowEvent* event) override;

private:
    QWidget* makeCard(const QString& title, QLabel** value);
    void markDirty(hrw::LiveChart* chart);
    void redraw();

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
    std::int64_t m_lastEvalStep = -1;  // the step of the last evaluation drawn
    QLabel* m_trainLoss = nullptr;
    QLabel* m_throughputValue = nullptr;
    QLabel* m_peakMemory = nullptr;
    double m_ema = 0;
    bool m_emaInit = false;
    std::size_t m_peakBytes = 0;
    // coalesced redraws
    QTimer* m_timer = nullptr;
    QList<hrw::LiveChart*> m_dirty;  // charts with new data since the last redraw
    QString m_lossText, m_throughputText;  // the cards' next texts
    bool m_cardsDirty = false;
    int m_baseIntervalMs = 100;
    int m_intervalMs = 100;
    double m_drawCpuMs = 0;       // CPU time of the replots since the last redraw (this thread)
    double m_replotStartMs = 0;
    double m_costEmaMs = -1;      // smoothed CPU cost of one redraw
    qint64 m_redraws = 0;
    QElapsedTimer m_sinceRedraw;
};

}  // namespace hrapp
