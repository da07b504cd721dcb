#include "gui/PlanSearchTask.h"

#include <QThread>

#include <exception>
#include <memory>

#include "i18n/CoreText.h"

namespace hrapp {

namespace {
struct Outcome {
    hr::PlanSearch search;
    std::exception_ptr error;
};
struct FineTuningOutcome {
    FineTuningCells cells;
    std::exception_ptr error;
};
QString planTaskErrorText(const std::exception_ptr& error) {
    if (!error) return {};
    try {
        std::rethrow_exception(error);
    } catch (const std::exception& e) {
        return coreText(e);
    } catch (...) {
        return PlanSearchTask::tr("the planner failed");
    }
}
}  // namespace

PlanSearchTask::PlanSearchTask(QObject* parent) : QObject(parent) {}

PlanSearchTask::~PlanSearchTask() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

bool PlanSearchTask::start(const hr::PlanRequest& request, std::size_t budget) {
    if (m_thread) return false;
    auto outcome = std::make_shared<Outcome>();
    m_thread = QThread::create([request, budget, outcome] {
        try {
            outcome->search = hr::search_plans(request, budget);
        } catch (...) {
            outcome->error = std::current_exception();
        }
    });
    m_thread->setObjectName(QStringLiteral("plan search"));
    // queued to this object's thread; dropped if the task is destroyed first (it waits, see above)
    connect(m_thread, &QThread::finished, this, [this, outcome] {
        m_thread->deleteLater();
        m_thread = nullptr;
        emit finished(outcome->search, planTaskErrorText(outcome->error));
    });
    m_thread->start(QThread::LowPriority);
    return true;
}

FineTuningTableTask::FineTuningTableTask(QObject* parent) : QObject(parent) {}

FineTuningTableTask::~FineTuningTableTask() {
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

bool FineTuningTableTask::start(const hr::PlanRequest& request, std::size_t budget) {
    if (m_thread) return false;
    auto outcome = std::make_shared<FineTuningOutcome>();
    m_thread = QThread::create([request, budget, outcome] {
        try {
            outcome->cells = fineTuningCells(request, budget);
        } catch (...) {
            outcome->error = std::current_exception();
        }
    });
    m_thread->setObjectName(QStringLiteral("fine-tuning table"));
    connect(m_thread, &QThread::finished, this, [this, outcome] {
        m_thread->deleteLater();
        m_thread = nullptr;
        emit finished(outcome->cells, planTaskErrorText(outcome->error));
    });
    m_thread->start(QThread::LowPriority);
    return true;
}

}  // namespace hrapp
