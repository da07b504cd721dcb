#include "cli/output.h"

#include <cstdio>

namespace hrapp {

namespace {
OutputCapture* g_capture = nullptr;

void write(std::FILE* f, const QString& text) {
    const QByteArray b = text.toLocal8Bit();
    std::fwrite(b.constData(), 1, static_cast<std::size_t>(b.size()), f);
    std::fflush(f);
}
}  // namespace

void print(const QString& text) {
    if (g_capture) g_capture->m_out += text;
    else write(stdout, text);
}

void eprint(const QString& text) {
    if (g_capture) g_capture->m_err += text;
    else write(stderr, text);
}

OutputCapture::OutputCapture() : m_previous(g_capture) { g_capture = this; }
OutputCapture::~OutputCapture() { g_capture = m_previous; }

}  // namespace hrapp
