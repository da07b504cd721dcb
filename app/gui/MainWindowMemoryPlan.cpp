// MainWindow: the Memory plan tab (issue 5) and its wiring to the builder, the setup panels and runs.
#include <QStatusBar>
#include <QTabWidget>

#include "builder/ModelBuilder.h"
#include "gui/DataPanel.h"
#include "gui/MainWindow.h"
#include "gui/MemoryPlanPanel.h"
#include "gui/TrainingSetupPanel.h"

namespace hrapp {

void MainWindow::buildMemoryPlan() {
    m_plan = new MemoryPlanPanel;
    m_plan->setConfigSource([this] { return trainConfig(); });
    // First tab and shown before a run: what the setup will take, before Start.
    m_tabs->insertTab(0, m_plan, tr("Memory plan"));
    m_tabs->setTabToolTip(0, tr("Predicted memory of the current model and setup, per category and per layer"));
    m_tabs->setCurrentWidget(m_plan);
    connect(m_builder, &hrw::ModelBuilder::specChanged, this, [this] {
        m_setup->setModelSpec(m_builder->spec());
        m_plan->scheduleUpdate();
    });
    connect(m_setup, &TrainingSetupPanel::changed, m_plan, &MemoryPlanPanel::scheduleUpdate);
    connect(m_data, &DataPanel::changed, m_plan, &MemoryPlanPanel::scheduleUpdate);
    connect(m_plan, &MemoryPlanPanel::strategyChosen, this, [this](const hr::StrategyConfig& s) {
        m_setup->setStrategy(s);
        statusBar()->showMessage(tr("Memory strategies applied from the planner"), 5000);
    });
    connect(m_plan, &MemoryPlanPanel::restartRequested, this, &MainWindow::start, Qt::QueuedConnection);
    connect(m_plan, &MemoryPlanPanel::comparisonReady, this, [this] {
        statusBar()->showMessage(tr("Predicted against measured memory of this run: see the Memory plan tab"), 8000);
    });
    m_setup->setModelSpec(m_builder->spec());
}

}  // namespace hrapp
