#pragma once
#include "cli/flags.h"

namespace hrapp {
// `headroom report RUN [--format html|pdf|json|csv] [--out FILE] [--db FILE]` (parsed by cli/flags).
// RUN: a run id, "last", or a run's exact name. Without --format the format follows --out's
// extension (else html); without --out the file is ./headroom-run-<id>.<ext>. Exit codes: 0 written,
// 1 failure (database, rendering), 2 bad input (unknown run, unwritable --out); one message on
// stderr, nothing half-written. Needs a QGuiApplication (the charts, the PDF).
int run_report_command(const CliRequest& request);
}  // namespace hrapp
