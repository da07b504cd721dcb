#pragma once
#include <QStringList>

namespace hrapp {
// `headroom report RUN [--format html|pdf|json|csv] [--out FILE] [--db FILE]`
// RUN: a run id, "last", or a run's exact name. Without --format the format follows --out's
// extension (else html); without --out the file is ./headroom-run-<id>.<ext>. args excludes
// "report" itself. Exit codes: 0 written, 1 failure (database, rendering), 2 bad input (unknown run,
// bad format, unwritable --out); one message on stderr, nothing half-written.
// Call it before any QCoreApplication exists (it creates a QApplication for the charts, offscreen
// when there is no display) or with a QApplication running.
int run_report_command(const QStringList& args);

// `headroom runs [--status S[,S...]] [--filter TEXT] [--limit N] [--db FILE]`: the run history as a
// table on stdout. Exit codes as above.
int run_runs_command(const QStringList& args);
}  // namespace hrapp
