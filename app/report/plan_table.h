#pragma once
// The planner's budget search (hr::search_plans) as a table for a terminal, in the UI language:
// the Pareto front of device memory and step time (or, with `all`, every candidate, numbered, the
// ones off the front saying which row beats them), with the best marked, in columns sized to their
// content. Widths count display columns (a Chinese character takes two), so the columns stay
// aligned in either language. `headroom plan --budget` prints it (app/cli/plan_command.cpp).
#include <QCoreApplication>
#include <QString>
#include <QStringList>

#include <vector>

#include "plan/planner.h"

namespace hrapp {

QString planSearchTable(const hr::PlanSearch& search, bool all);

// Fine-tuning a language model on 1, 2, 4 and 8 cards of `budget` each: full fine-tuning, LoRA of rank R
// (the request's, else 16) and QLoRA (nf4 base, rank R), each searched with hr::search_plans (the
// enumeration --all prints) on that many ranks; a row per method x checkpointing (none / on) x ZeRO-3
// (off / on), a column per card count, each cell the per-card bytes of the fastest configuration of that
// row that fits (or "-"). `headroom plan --budget` prints it for a language model.
QString fineTuningTable(const hr::PlanRequest& request, std::size_t budget);

// The same table's texts, a row per method x checkpointing x ZeRO-3 (the window's Memory plan tab shows
// them in a table widget; fineTuningTable lays them out for a terminal).
struct FineTuningCells {
    QStringList header;
    std::vector<QStringList> rows;
};
FineTuningCells fineTuningCells(const hr::PlanRequest& request, std::size_t budget);
QString fineTuningTable(const FineTuningCells& cells);

// The translation context of the table's texts.
class PlanTable {
    Q_DECLARE_TR_FUNCTIONS(PlanTable)
};

// Terminal columns a text takes (East Asian wide and full-width characters count two).
int displayWidth(const QString& text);
// text padded with spaces to `width` display columns (left-aligned, or right-aligned).
QString padDisplay(const QString& text, int width, bool right = false);

}  // namespace hrapp
