// `headroom presets`, `headroom devices` and `headroom runs`: what is there to train with, and what
// was trained.
#include <unistd.h>

#include <QCoreApplication>
#include <QFileInfo>
#include <QJsonValue>
#include <thread>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "memory/allocator.h"
#include "nn/model_spec.h"
#include "session/RunText.h"
#include "store/run_store.h"
#include "train/preset_training.h"
#ifdef HEADROOM_WITH_CUDA
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda_compat.h"
#include "i18n/CoreText.h"
#endif

namespace hrapp {

int runPresetsCommand(const CliRequest& r) {
    // `headroom presets --json NAME`: the preset's model spec as JSON (docs/model-spec.md), for tools
    // such as bench/torch_reference.py that build the same model elsewhere.
    if (r.json || !r.positional.isEmpty()) {
        if (!r.json || r.positional.isEmpty()) {
            eprint(Cli::tr("headroom presets: give --json and a preset name, e.g. headroom presets --json seed-cnn\n"));
            return 2;
        }
        try {
            print(q(hr::model_spec_to_json(hr::preset_model(r.positional.first().toStdString())).dump(2)) + QStringLiteral("\n"));
            return 0;
        } catch (const hr::InputError& e) {
            eprint(Cli::tr("headroom presets: %1\n").arg(messageText(e.message())));
            return 2;
        }
    }
    std::vector<std::string> names = hr::preset_names();
    for (const auto& name : hr::language_model_preset_names()) names.push_back(name);
    for (const auto& name : names) {
        hr::SpecReport rep = hr::analyze_model_spec(hr::preset_model(name));
        print(QStringLiteral("%1  %2 %3\n    %4\n")
                  .arg(q(name), -12)
                  .arg(rep.total_params)
                  .arg(Cli::tr("parameters"))
                  .arg(q(hr::preset_description(name))));
        const hr::PresetTraining t = hr::preset_training(name);
        if (t.has_training)
            print(QStringLiteral("    %1\n").arg(presetTrainingText(t)));
    }
    return 0;
}

int runDevicesCommand(const CliRequest&) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    print(Cli::tr("cpu      %1 cores, %2 memory\n")
              .arg(std::thread::hardware_concurrency())
              .arg(q(hr::format_bytes(static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)))));
#ifdef HEADROOM_WITH_CUDA
    const auto gpus = hr::cuda_devices();
    if (gpus.empty()) {
        print(Cli::tr("cuda     none: %1\n").arg(q(hr::cuda_unavailable_reason())));
    } else {
        const std::string archs = hr::cuda_built_archs();
        for (const auto& d : gpus) {
            print(Cli::tr("cuda:%1   %2, %3 memory (%4 free), compute capability %5.%6\n")
                      .arg(d.index)
                      .arg(q(d.name), q(hr::format_bytes(d.total_bytes)), q(hr::format_bytes(d.free_bytes)))
                      .arg(d.cc_major)
                      .arg(d.cc_minor));
            // whether this build holds code for the GPU (cuda_compat.h), before a run finds out
            if (hr::cuda_archs_cover(archs, d.cc_major, d.cc_minor))
                print(Cli::tr("         GPU code: built for %1, which covers compute capability %2.%3\n")
                          .arg(q(archs))
                          .arg(d.cc_major)
                          .arg(d.cc_minor));
            else
                print(Cli::tr("         GPU code: none for this GPU: %1\n")
                          .arg(hrapp::coreText(hr::cuda_arch_missing(d.name, d.cc_major, d.cc_minor, archs))));
        }
    }
    print(Cli::tr("versions %1\n").arg(q(hr::cuda_versions())));
#else
    print(Cli::tr("cuda     not available: this build has no CUDA backend (built without nvcc)\n"));
#endif
    return 0;
}

namespace {
// After a run's name: the history's links between a run and the run continuing it (--resume).
QString continuationText(const RunInfo& info) {
    QStringList links;
    if (info.continuesRunId > 0) links << Cli::tr("continues #%1").arg(info.continuesRunId);
    for (qint64 by : info.continuedBy) links << Cli::tr("continued in #%1").arg(by);
    return links.isEmpty() ? QString() : QStringLiteral("  (%1)").arg(links.join(QStringLiteral("; ")));
}
}  // namespace

int runRunsCommand(const CliRequest& r) {
    if (!r.db.isEmpty() && !QFileInfo::exists(r.db)) {
        eprint(Cli::tr("headroom runs: there is no run history at %1; give the --db of an existing history\n").arg(r.db));
        return 2;
    }
    RunStore store;
    if (!store.open(r.db)) {
        eprint(Cli::tr("headroom runs: %1\n").arg(store.lastError()));
        return 1;
    }
    RunFilter f;
    f.text = r.filter;
    f.statuses = r.statuses;
    f.limit = r.limit;
    const auto runs = store.listRuns(f);
    if (runs.isEmpty()) {
        print(Cli::tr("No runs in %1.\n").arg(store.path()));
        return 0;
    }
    QString table = QStringLiteral("%1  %2  %3  %4  %5\n")
                        .arg(Cli::tr("ID"), 5)
                        .arg(Cli::tr("STATUS"), -9)
                        .arg(Cli::tr("STARTED"), -16)
                        .arg(Cli::tr("TEST ACC"), 8)
                        .arg(Cli::tr("NAME"));
    for (const RunInfo& info : runs) {
        const QJsonValue acc = info.finalMetrics.value(QStringLiteral("test_accuracy"));
        table += QStringLiteral("%1  %2  %3  %4  %5\n")
                     .arg(info.id, 5)
                     .arg(info.status, -9)
                     .arg(info.created.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm")), -16)
                     .arg(acc.isDouble() ? QString::number(acc.toDouble(), 'f', 4) : QStringLiteral("-"), 8)
                     .arg(info.name + continuationText(info));
    }
    print(table);
    return 0;
}

}  // namespace hrapp
