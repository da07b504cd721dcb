// `headroom generate`: continue a prompt with a trained language model (core/train/generate.h).
//
// The weights come from --weights FILE or --run RUN (a run folder, or a run of the history: its id,
// 'last' or its name, whose folder the history keeps); the tokenizer is the one stored next to them.
// stdout gets the prompt and the generated text, nothing else (so it can be piped); the figures of the
// generation go to stderr (with --ids, the token ids too). --as-exported T computes on the weights rounded
// as a GGUF file of type T holds them (hr::round_as_gguf), what llama.cpp reading that file should say.
#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <optional>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "session/RunText.h"
#include "store/run_store.h"
#include "train/before_after.h"
#include "train/generate.h"
#include "train/gguf_export.h"

namespace hrapp {

namespace {


// The folder of a run given by id, 'last' or name in the history; "" with *why when there is none.
QString runFolderFromHistory(const QString& spec, const QString& db, QString* why) {
    if (!db.isEmpty() && !QFileInfo::exists(db)) {
        *why = Cli::tr("there is no run history at %1; give the --db of an existing history").arg(db);
        return {};
    }
    RunStore store;
    if (!store.open(db)) {
        *why = store.lastError();
        return {};
    }
    std::optional<RunInfo> found;
    if (spec.compare(QLatin1String("last"), Qt::CaseInsensitive) == 0) {
        RunFilter f;
        f.limit = 1;
        const auto runs = store.listRuns(f);
        if (!runs.isEmpty()) found = runs.first();
    } else {
        bool ok = false;
        const qint64 id = spec.toLongLong(&ok);
        if (ok) found = store.run(id);
        if (!found)
            for (const RunInfo& r : store.listRuns())
                if (r.name == spec) {
                    found = r;
                    break;
                }
    }
    if (!found) {
        *why = Cli::tr("there is no run '%1' in %2 and no such folder; see headroom runs").arg(spec, store.path());
        return {};
    }
    if (found->outDir.isEmpty()) {
        *why = Cli::tr("run %1 (%2) has no output folder on record; pass its folder with --run DIR or its weights "
                       "with --weights FILE")
                   .arg(found->id)
                   .arg(found->name);
        return {};
    }
    return found->outDir;
}

}  // namespace

int runGenerateCommand(const CliRequest& r) {
    auto bad = [](const QString& message) {
        eprint(Cli::tr("headroom generate: %1\n").arg(message));
        return 2;
    };
    if (r.run.isEmpty() && r.weights.isEmpty())
        return bad(Cli::tr("say which model to sample: --run RUN (an id, 'last', a name or a run folder) or "
                           "--weights FILE; see headroom generate --help"));
    try {
        std::unique_ptr<hr::Generator> generator;
        std::optional<hr::GgufTensorType> asExported;
        if (!r.asExported.isEmpty()) asExported = hr::parse_gguf_type(r.asExported.toStdString());
        if (r.before && r.run.isEmpty())
            return bad(Cli::tr("--before compares a run with the model it started from: give --run RUN"));
        if (r.before && asExported)
            return bad(Cli::tr("--before and --as-exported do not go together: --as-exported shows what the exported "
                               "trained model says; drop one of them"));
        if (!r.weights.isEmpty()) {
            if (!QFileInfo(r.weights).isFile())
                return bad(Cli::tr("--weights %1: no such file; pass a model.safetensors written by headroom train")
                               .arg(r.weights));
            generator = hr::Generator::from_weights(r.weights.toStdString(), r.threads, asExported);
        } else {
            QString folder = r.run;
            if (!QFileInfo(folder).isDir()) {
                QString why;
                folder = runFolderFromHistory(r.run, r.db, &why);
                if (folder.isEmpty()) return bad(QStringLiteral("--run %1: %2").arg(r.run, why));
                if (!QFileInfo(folder).isDir())
                    return bad(Cli::tr("--run %1: the run's folder %2 is gone; pass --weights FILE").arg(r.run, folder));
            }
            const std::string dir = QDir(folder).path().toStdString();
            generator = r.before ? hr::start_generator(dir, r.threads) : hr::Generator::from_run(dir, r.threads, asExported);
        }
        hr::GenerateOptions o;
        o.prompt = r.prompt.toStdString();
        o.tokens = r.tokens;
        o.temperature = r.temperature;
        o.top_k = r.topK;
        o.seed = r.seed;
        o.kv_cache = !r.noKvCache;
        const hr::GenerateResult g = generator->generate(o);
        print(q(g.text) + QLatin1Char('\n'));
        if (r.showIds) {
            auto joined = [](const std::vector<std::int32_t>& ids) {
                QStringList s;
                for (const std::int32_t id : ids) s << QString::number(id);
                return s.join(QLatin1Char(' '));
            };
            eprint(Cli::tr("prompt ids: %1\n").arg(joined(g.prompt_ids)));
            eprint(Cli::tr("generated ids: %1\n").arg(joined(g.ids)));
        }
        const QString cache = g.cached_tokens > 0
                                  ? Cli::tr("key/value cache %1 MB").arg(double(generator->kv_cache_bytes()) / 1e6, 0, 'f', 1)
                                  : Cli::tr("no key/value cache");
        eprint(Cli::tr("generated %1 tokens in %2 s (%3 tokens/s; %4 tokenizer, context %5, %6)\n")
                   .arg(static_cast<qint64>(g.ids.size()))
                   .arg(g.seconds, 0, 'f', 2)
                   .arg(g.tokens_per_second, 0, 'f', 1)
                   .arg(q(generator->tokenizer().kind()))
                   .arg(generator->context())
                   .arg(cache));
        return 0;
    } catch (const hr::InputError& e) {
        return bad(messageText(e.message()));
    } catch (const hr::Error& e) {
        eprint(Cli::tr("headroom generate: %1\n").arg(messageText(e.message())));
        return 1;
    } catch (const std::exception& e) {
        eprint(Cli::tr("headroom generate: %1\n").arg(q(e.what())));
        return 1;
    }
}

}  // namespace hrapp
