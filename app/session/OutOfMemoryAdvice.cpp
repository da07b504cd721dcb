#include "session/OutOfMemoryAdvice.h"

#include "session/RunText.h"

#include <QCoreApplication>

#include "memory/allocator.h"
#include "i18n/CoreText.h"

namespace hrapp {

namespace {
struct Text {
    Q_DECLARE_TR_FUNCTIONS(OutOfMemoryAdvice)
};
}  // namespace

hr::PlanRequest outOfMemoryRequest(const hr::TrainConfig& config, const hr::TrainResult& r) {
    return hr::plan_request(config, r.train_samples, r.test_samples);
}

OutOfMemoryAdvice adviceFromSearch(const hr::TrainConfig& config, std::size_t limit, hr::PlanSearch search,
                                   const QString& plannerError) {
    OutOfMemoryAdvice a;
    a.limit = limit;
    a.batch = config.batch;
    a.plannerError = plannerError;
    if (plannerError.isEmpty()) {
        a.search = std::move(search);
        a.best = a.search.best;
    }
    return a;
}

OutOfMemoryAdvice adviseOutOfMemory(const hr::TrainConfig& config, const hr::TrainResult& r) {
    try {
        return adviceFromSearch(config, r.oom_limit, hr::search_plans(outOfMemoryRequest(config, r), r.oom_limit));
    } catch (const std::exception& e) {
        return adviceFromSearch(config, r.oom_limit, {}, QString::fromUtf8(e.what()));
    }
}

QString OutOfMemoryAdvice::flags() const {
    if (!found()) return {};
    const QString rest = QString::fromStdString(hr::strategy_flags(bestCandidate().strategy));
    return QStringLiteral("--batch %1").arg(batch) + (rest.isEmpty() ? QString() : QLatin1Char(' ') + rest);
}

QString OutOfMemoryAdvice::summary() const {
    if (!plannerError.isEmpty()) return Text::tr("the planner could not search for a configuration: %1").arg(plannerError);
    if (!found() && search.ranks_needed > 0)  // sharded over more ranks it would (issue 10)
        return Text::tr("no combination of precision, checkpointing, micro-batches and offload fits in %1 at batch %2 as "
                        "set up; sharded, it %3. Otherwise lower --batch or make the model smaller")
            .arg(coreBytesText(limit))
            .arg(batch)
            .arg(messageText(search.ranks_reason));
    if (!found())
        return Text::tr("no combination of precision, checkpointing, micro-batches and offload fits in %1 at batch %2; "
                  "lower --batch, make the model smaller or raise the memory limit")
            .arg(coreBytesText(limit))
            .arg(batch);
    const hr::MemoryPlan& p = bestCandidate().plan;
    return Text::tr("this fits in %1 (predicted %2, %3x the step time): %4")
        .arg(coreBytesText(limit), coreBytesText(p.device_total))
        .arg(p.relative_step_time, 0, 'f', 2)
        .arg(flags());
}

QStringList OutOfMemoryAdvice::changes() const {
    if (!found()) return {};
    const hr::ResolvedStrategy& s = bestCandidate().plan.strategy;
    QStringList what;
    what << Text::tr("precision %1").arg(QString::fromStdString(s.precision).toUpper());
    what << (s.checkpoint_blocks.empty() ? Text::tr("no checkpointing")
                                         : Text::tr("checkpointing %n block(s)", nullptr, int(s.checkpoint_blocks.size())));
    what << (s.accumulate > 1 ? Text::tr("micro-batch %1 × %2 accumulation steps").arg(s.micro_batch).arg(s.accumulate)
                              : Text::tr("the whole batch at once"));
    what << (s.offload_parameters ? Text::tr("parameters, gradients and optimizer state in host memory (ZeRO-3 on one rank)")
             : s.offload_optimizer    ? Text::tr("optimizer state in host memory")
                                      : Text::tr("optimizer state on the device"));
    return what;
}

}  // namespace hrapp
