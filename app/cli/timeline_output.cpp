#include "cli/timeline_output.h"

#include <QSaveFile>

#include <algorithm>

#include "cli/output.h"
#include "i18n/CoreText.h"
#include "report/plan_table.h"

namespace hrapp {

QString timelineText(const hr::StepTimeline& t) {
    if (t.empty())
        return Cli::tr("Step timeline: none (the run ended before the chosen step; see --timeline-step)\n");
    QString out = Cli::tr("Step timeline (%1 phases, %2 events; * marks the peak):\n").arg(t.phases.size()).arg(t.events.size());
    // at most 80 rows: the first 20, the 40 around the peak, the last 20
    const int n = static_cast<int>(t.phases.size());
    const int peak = t.peak_phase;
    auto shown = [&](int p) { return n <= 80 || p < 20 || p >= n - 20 || (peak >= 0 && p >= peak - 20 && p < peak + 20); };
    auto nameOf = [&](const hr::StepPhase& ph) {
        const QString name = phaseText(ph);
        return t.phases.back().micro > 0 ? Cli::tr("%1, micro-batch %2").arg(name).arg(ph.micro + 1) : name;
    };
    // the phase column as wide as its longest name (a pipeline stage's send/receive names are long)
    int nameWidth = std::max(44, displayWidth(Cli::tr("phase")));
    for (int p = 0; p < n; ++p)
        if (shown(p)) nameWidth = std::max(nameWidth, displayWidth(nameOf(t.phases[static_cast<std::size_t>(p)])));
    out += QStringLiteral("  %1 %2 %3 %4\n")
               .arg(QStringLiteral("#"), 5)
               .arg(padDisplay(Cli::tr("phase"), nameWidth))
               .arg(Cli::tr("activations"), 12)
               .arg(Cli::tr("live"), 12);
    hr::CategoryBytes live = t.base;
    std::size_t ev = 0;
    bool gap = false;
    for (int p = 0; p < n; ++p) {
        while (ev < t.events.size() && t.events[ev].phase <= p) live = t.events[ev++].live;
        if (!shown(p)) {
            gap = true;
            continue;
        }
        if (gap) out += QStringLiteral("  %1\n").arg(QStringLiteral("..."), 5);
        gap = false;
        out += QStringLiteral("  %1 %2 %3 %4%5\n")
                   .arg(p, 5)
                   .arg(padDisplay(nameOf(t.phases[static_cast<std::size_t>(p)]), nameWidth))
                   .arg(coreBytesText(hr::at(live, hr::MemCategory::activations)), 12)
                   .arg(coreBytesText(hr::total(live)), 12)
                   .arg(p == peak ? QStringLiteral(" *") : QString());
    }
    out += Cli::tr("Peak of the step: %1\n").arg(peakText(t));
    return out;
}

bool writeTimelineTrace(const QString& path, const hr::StepTimeline& t, const QString& name, QString* error) {
    QSaveFile f(path);
    const std::string text = hr::step_timeline_trace_json(t, name.toStdString()).dump() + "\n";
    if (!f.open(QIODevice::WriteOnly) || f.write(text.data(), static_cast<qint64>(text.size())) != static_cast<qint64>(text.size()) ||
        !f.commit()) {
        if (error)
            *error = Cli::tr("could not write the trace to %1 (%2); choose a writable file with --trace")
                         .arg(path, f.errorString());
        return false;
    }
    return true;
}

}  // namespace hrapp
