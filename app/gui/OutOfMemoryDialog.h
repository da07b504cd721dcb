#pragma once
// Shown when a run fails for memory: the trainer's message (the category and layer at the peak) and
// the planner's fastest configuration that fits the memory the run had (searched on a worker thread:
// the dialog opens at once and fills the advice in when searchFinished()), applied in one click.
#include <QDialog>

#include "plan/planner.h"
#include "train/config.h"
#include "train/trainer.h"

class QLabel;
class QPushButton;

namespace hrapp {

class PlanSearchTask;

class OutOfMemoryDialog : public QDialog {
    Q_OBJECT
public:
    OutOfMemoryDialog(const hr::TrainConfig& config, const hr::TrainResult& result, QWidget* parent = nullptr);

    bool hasSuggestion() const { return m_search.best >= 0; }
    bool isSearching() const;
    // The suggested strategy, as the setup panel shows it.
    hr::StrategyConfig suggestion() const { return m_suggestion; }
    const hr::PlanSearch& search() const { return m_search; }
    QPushButton* applyAndRestartButton() const { return m_applyRestart; }
    QPushButton* applyButton() const { return m_apply; }

signals:
    void applyRequested(const hr::StrategyConfig& strategy, bool restart);
    void searchFinished();

private:
    void showSearch(const hr::PlanSearch& search, const QString& error);

    hr::TrainConfig m_config;
    std::size_t m_limit = 0;
    QLabel* m_advice = nullptr;
    PlanSearchTask* m_task = nullptr;
    hr::PlanSearch m_search;
    hr::StrategyConfig m_suggestion;
    QPushButton* m_applyRestart = nullptr;
    QPushButton* m_apply = nullptr;
};

}  // namespace hrapp
