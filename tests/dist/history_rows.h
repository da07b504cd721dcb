#pragma once
// The history as an outsider reads it: "status|error" of every run, read by Python's sqlite3, not by the
// project's RunStore (and without opening it the way `headroom runs` does, which would mark a dead
// process's run failed itself). Used by the multi-rank tests that check how a run was filed.
#include <QProcess>
#include <QString>
#include <QStringList>

namespace hrtest {

inline QStringList history_rows(const QString& db) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start("/usr/bin/python3", {"-c", "import sqlite3,sys\n"
                                       "for s,e in sqlite3.connect(sys.argv[1]).execute('SELECT status, error FROM runs'):\n"
                                       "    print(f'{s}|{e or \"\"}')",
                                 db});
    p.waitForFinished(30000);
    return QString::fromUtf8(p.readAll()).split('\n', Qt::SkipEmptyParts);
}

}  // namespace hrtest
