#pragma once
// The command line's one way to write: print() to stdout, eprint() to stderr, both flushed at once and
// encoded for the terminal's locale. OutputCapture redirects both into strings (tests run the
// subcommands in-process and read what a user would see).
#include <QCoreApplication>
#include <QString>

#include <string>

namespace hrapp {

// The command line's strings: Cli::tr("...") translates in the "Cli" context (lupdate sees it).
struct Cli {
    Q_DECLARE_TR_FUNCTIONS(Cli)
};

void print(const QString& text);
void eprint(const QString& text);

// Core's strings (UTF-8) for the command line's text.
inline QString q(const std::string& s) { return QString::fromStdString(s); }

class OutputCapture {
public:
    OutputCapture();   // from now on print/eprint append to out()/err()
    ~OutputCapture();  // back to stdout/stderr
    OutputCapture(const OutputCapture&) = delete;
    OutputCapture& operator=(const OutputCapture&) = delete;
    const QString& out() const { return m_out; }
    const QString& err() const { return m_err; }

private:
    friend void print(const QString&);
    friend void eprint(const QString&);
    QString m_out, m_err;
    OutputCapture* m_previous = nullptr;
};

}  // namespace hrapp
