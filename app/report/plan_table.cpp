#include "report/plan_table.h"

#include <QStringList>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "memory/allocator.h"
#include "i18n/CoreText.h"

namespace hrapp {

namespace {

bool isWide(char32_t c) {
    return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
           (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
           (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x20000 && c <= 0x3FFFD);
}

}  // namespace

int displayWidth(const QString& text) {
    int w = 0;
    for (char32_t c : text.toUcs4()) w += isWide(c) ? 2 : 1;
    return w;
}

QString padDisplay(const QString& text, int width, bool right) {
    const int pad = std::max(0, width - displayWidth(text));
    return right ? QString(pad, QLatin1Char(' ')) + text : text + QString(pad, QLatin1Char(' '));
}

QString planSearchTable(const hr::PlanSearch& s, bool all) {
    std::vector<int> rows;  // indices into s.candidates, in ranking order
    for (int i = 0; i < int(s.candidates.size()); ++i)
        if (all || s.candidates[std::size_t(i)].pareto) rows.push_back(i);
    std::vector<int> rowOf(s.candidates.size(), -1);  // candidate -> 1-based row number
    for (std::size_t r = 0; r < rows.size(); ++r) rowOf[std::size_t(rows[r])] = int(r) + 1;
    const double bestSeconds = s.best >= 0 ? s.candidates[std::size_t(s.best)].plan.predicted_step_seconds : 0.0;

    const QStringList header = {QString(), PlanTable::tr("#"), PlanTable::tr("strategy"), PlanTable::tr("device"), PlanTable::tr("host"), PlanTable::tr("step (est.)"),
                                PlanTable::tr("verdict")};
    std::vector<QStringList> cells;
    for (int i : rows) {
        const hr::PlanCandidate& c = s.candidates[std::size_t(i)];
        const std::string flags = hr::strategy_flags(c.strategy);
        const double slower = bestSeconds > 0 ? 100.0 * (c.plan.predicted_step_seconds / bestSeconds - 1.0) : 0.0;
        QString verdict;
        if (i == s.best) verdict = PlanTable::tr("best: fits, fastest");
        else if (c.pareto)
            verdict = PlanTable::tr("fits in less memory, %1% slower than the best").arg(slower, 0, 'f', 0);
        else if (c.fits)
            verdict = c.dominated_by >= 0 && rowOf[std::size_t(c.dominated_by)] > 0
                          ? PlanTable::tr("fits, %1% slower; row %2 is no larger and no slower")
                                .arg(slower, 0, 'f', 0)
                                .arg(rowOf[std::size_t(c.dominated_by)])
                          : PlanTable::tr("fits, %1% slower than the best").arg(slower, 0, 'f', 0);
        else
            verdict = PlanTable::tr("does not fit: %1 over the budget").arg(coreBytesText(c.plan.device_total - s.budget));
        cells.push_back({i == s.best ? QStringLiteral("*") : QString(), QString::number(rowOf[std::size_t(i)]),
                         flags.empty() ? PlanTable::tr("(no strategies: fp32)") : QString::fromStdString(flags),
                         coreBytesText(c.plan.device_total),
                         c.plan.host_total ? coreBytesText(c.plan.host_total) : QStringLiteral("-"),
                         QStringLiteral("%1x").arg(c.plan.relative_step_time, 0, 'f', 2), verdict});
    }
    const bool rightAligned[] = {false, true, false, true, true, true, false};
    std::vector<int> widths(header.size(), 0);
    for (int k = 0; k < header.size(); ++k) {
        widths[std::size_t(k)] = displayWidth(header[k]);
        for (const QStringList& row : cells) widths[std::size_t(k)] = std::max(widths[std::size_t(k)], displayWidth(row[k]));
    }
    auto line = [&](const QStringList& row) {
        QString out = QStringLiteral(" ");
        for (int k = 0; k < row.size(); ++k) {
            const bool last = k + 1 == row.size();
            out += last ? row[k] : padDisplay(row[k], widths[std::size_t(k)], rightAligned[k]);
            if (!last) out += QStringLiteral("  ");
        }
        while (out.endsWith(QLatin1Char(' '))) out.chop(1);
        return out + QLatin1Char('\n');
    };
    QString out = line(header);
    for (const QStringList& row : cells) out += line(row);
    if (!all) {
        int dominated = 0, rejected = 0;
        for (const hr::PlanCandidate& c : s.candidates) {
            if (c.fits && !c.pareto) ++dominated;
            if (!c.fits) ++rejected;
        }
        if (dominated + rejected > 0)
            out += QLatin1Char('\n') +
                   PlanTable::tr("Not shown: %1 that fit but another row is no larger and no slower, %2 that do not fit "
                      "(--all lists them).")
                       .arg(dominated)
                       .arg(rejected) +
                   QLatin1Char('\n');
    }
    if (s.duplicates > 0)
        out += (all ? QStringLiteral("\n") : QString()) +
               PlanTable::tr("Left out: %1 combinations that add nothing (offload that moves nothing off the device, or the "
                  "same plan as a row above).")
                   .arg(s.duplicates) +
               QLatin1Char('\n');
    return out;
}

FineTuningCells fineTuningCells(const hr::PlanRequest& request, std::size_t budget) {
    const int rank = request.strategy.lora_rank > 0 ? request.strategy.lora_rank : 16;
    struct Method {
        QString name;
        int lora;
        const char* quantize;
    };
    const std::vector<Method> methods = {{PlanTable::tr("full fine-tuning"), 0, "none"},
                                         {PlanTable::tr("LoRA r=%1").arg(rank), rank, "none"},
                                         {PlanTable::tr("QLoRA nf4 r=%1").arg(rank), rank, "nf4"}};
    const std::vector<int> cards = {1, 2, 4, 8};
    QStringList header = {PlanTable::tr("method"), PlanTable::tr("checkpointing"), PlanTable::tr("ZeRO-3")};
    for (int n : cards) header << (n == 1 ? PlanTable::tr("1 card") : PlanTable::tr("%1 cards").arg(n));
    std::vector<QStringList> rows;
    // A cell is one configuration of the search, the asked one with only the table's axes changed: the
    // asked precision, batch (no micro-batches), optimizer placement; checkpointing none, or the asked
    // checkpointing (all when none was asked); plain data parallelism, or ZeRO-3 (on one card ZeRO-3 keeps
    // the parameters on the host: its only form there). So the cells compare what each method and trick
    // costs, like for like; a cell over the budget is marked, "-" where the search has no such row.
    const std::string precision = request.strategy.precision == "fp16" ? "bf16" : request.strategy.precision;
    const std::string checkpointOn = request.strategy.checkpoint == "every:2" ? "every:2" : "all";
    // cell[method][checkpointing][zero3][card]
    std::vector<std::vector<std::vector<std::vector<QString>>>> cell(
        methods.size(), std::vector<std::vector<std::vector<QString>>>(
                            2, std::vector<std::vector<QString>>(2, std::vector<QString>(cards.size(), QStringLiteral("-")))));
    // one search a method and card count, only the combinations a cell can be (search_plans' `only`), on as
    // many threads as the machine has (each search is independent; the planner's caches are per thread)
    auto fill = [&](std::size_t task) {
        const Method& m = methods[task / cards.size()];
        const std::size_t k = task % cards.size();
        hr::PlanRequest r = request;
        r.strategy.lora_rank = m.lora;
        r.strategy.quantize_base = m.quantize;
        if (m.lora == 0) r.strategy.lora_alpha = 0;
        r.world_size = cards[k];
        if (r.world_size > 1) {
            r.strategy.shard = "dp";
            r.strategy.rank_batch.clear();
            if (r.batch % r.world_size != 0) r.batch = ((r.batch + r.world_size - 1) / r.world_size) * r.world_size;
        }
        auto inCell = [&](const hr::StrategyConfig& cs, int ck, int z) {
            return cs.precision == precision && cs.checkpoint == (ck ? checkpointOn : std::string("none")) &&
                   cs.micro_batch == 0 && cs.tp_head <= 1 && cs.pipeline <= 1 && (cs.shard == "zero3") == (z == 1) &&
                   (z || r.world_size == 1 || cs.shard == "dp");
        };
        hr::PlanSearch s;
        try {
            s = hr::search_plans(r, budget, [&](const hr::StrategyConfig& cs) {
                return inCell(cs, 0, 0) || inCell(cs, 0, 1) || inCell(cs, 1, 0) || inCell(cs, 1, 1);
            });
        } catch (const hr::Error&) {
            return;  // a layout this model cannot take: "-"
        }
        for (int ck = 0; ck < 2; ++ck)
            for (int z = 0; z < 2; ++z) {
                const hr::PlanCandidate* pick = nullptr;
                int pickDistance = 0;
                for (const hr::PlanCandidate& c : s.candidates) {
                    if (!inCell(c.strategy, ck, z)) continue;
                    // the asked optimizer placement, else the nearest the search kept (one card's ZeRO-3
                    // offloads the parameters; an offload that moves nothing is left out of the search)
                    const int distance = int(c.strategy.offload_optimizer != request.strategy.offload_optimizer) +
                                         int(c.strategy.offload_parameters != request.strategy.offload_parameters);
                    if (!pick || distance < pickDistance) pick = &c, pickDistance = distance;
                }
                if (!pick) continue;
                const QString bytes = QString::fromStdString(hr::format_bytes(hr::plan_fit_bytes(pick->plan)));
                cell[task / cards.size()][std::size_t(ck)][std::size_t(z)][k] =
                    pick->fits ? bytes : PlanTable::tr("%1 (over)").arg(bytes);
            }
    };
    const std::size_t tasks = methods.size() * cards.size();
    std::atomic<std::size_t> next{0};
    std::exception_ptr failed;
    std::mutex failedMutex;
    auto worker = [&] {
        for (std::size_t t; (t = next++) < tasks;) {
            try {
                fill(t);
            } catch (...) {
                std::lock_guard<std::mutex> lock(failedMutex);
                if (!failed) failed = std::current_exception();
            }
        }
    };
    std::vector<std::thread> threads;
    const std::size_t extra = std::min<std::size_t>(tasks, std::max(1u, std::thread::hardware_concurrency())) - 1;
    for (std::size_t i = 0; i < extra; ++i) threads.emplace_back(worker);
    worker();
    for (std::thread& t : threads) t.join();
    if (failed) std::rethrow_exception(failed);
    for (std::size_t mi = 0; mi < methods.size(); ++mi) {
        const Method& m = methods[mi];
        for (int ck = 0; ck < 2; ++ck)
            for (int z = 0; z < 2; ++z) {
                QStringList row = {m.name, ck ? PlanTable::tr("on") : PlanTable::tr("none"), z ? PlanTable::tr("yes") : PlanTable::tr("no")};
                for (std::size_t k = 0; k < cards.size(); ++k) row << cell[mi][std::size_t(ck)][std::size_t(z)][k];
                rows.push_back(row);
            }
    }
    return {header, rows};
}

QString fineTuningTable(const hr::PlanRequest& request, std::size_t budget) { return fineTuningTable(fineTuningCells(request, budget)); }

QString fineTuningTable(const FineTuningCells& cells) {
    const QStringList& header = cells.header;
    const std::vector<QStringList>& rows = cells.rows;
    std::vector<int> width(header.size(), 0);
    for (int i = 0; i < header.size(); ++i) width[i] = displayWidth(header[i]);
    for (const auto& r : rows)
        for (int i = 0; i < r.size(); ++i) width[i] = std::max(width[i], displayWidth(r[i]));
    auto line = [&](const QStringList& r) {
        QString out;
        for (int i = 0; i < r.size(); ++i) out += QStringLiteral("  ") + padDisplay(r[i], width[i], i >= 3);
        return out + QLatin1Char('\n');
    };
    QString out = line(header);
    for (const auto& r : rows) out += line(r);
    return out;
}

}  // namespace hrapp
