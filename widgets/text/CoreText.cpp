#include "text/CoreText.h"

#include "memory/allocator.h"

#include <QCoreApplication>

namespace hrw {

QString categoryText(hr::MemCategory c) {
    using hr::MemCategory;
    // the plan chart's context, where these were first translated
    static const char* const kContext = "hrw::PlanBarChart";
    switch (c) {
        case MemCategory::parameters: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Parameters"));
        case MemCategory::gradients: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Gradients"));
        case MemCategory::optimizer_state:
            return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Optimizer state"));
        case MemCategory::master_weights:
            return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Master weights"));
        case MemCategory::activations: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Activations"));
        case MemCategory::workspace: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Workspace"));
        case MemCategory::data: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Data"));
        case MemCategory::communication:
            return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Communication"));
        default: return QCoreApplication::translate(kContext, QT_TRANSLATE_NOOP("hrw::PlanBarChart", "Other"));
    }
}

QString fillCoreArgs(const QString& templ, const QStringList& args) {
    QString out;
    out.reserve(templ.size() + 16 * int(args.size()));
    for (qsizetype i = 0; i < templ.size(); ++i) {
        const QChar c = templ[i];
        if (c == QLatin1Char('%') && i + 1 < templ.size()) {
            const QChar d = templ[i + 1];
            if (d >= QLatin1Char('1') && d <= QLatin1Char('9')) {
                const qsizetype k = d.unicode() - '1';
                out += k < args.size() ? args[k] : QStringView(templ).mid(i, 2).toString();
                ++i;
                continue;
            }
        }
        out += c;
    }
    return out;
}

QString coreText(const hr::Message& m) {
    QStringList args;
    args.reserve(qsizetype(m.args.size()));
    for (const std::string& a : m.args) args << QString::fromStdString(a);
    if (m.id.empty()) return fillCoreArgs(QString::fromStdString(m.text), args);
    // translate() returns the source text when the id's context has no translation
    return fillCoreArgs(QCoreApplication::translate(m.id.c_str(), m.text.c_str()), args);
}

QString coreText(const hr::TableText& t) {
    if (t.empty()) return QString();
    if (!t.id || !*t.id) return QString::fromUtf8(t.text);
    return QCoreApplication::translate(t.id, t.text);
}

QString coreText(const std::vector<hr::Message>& sentences) {
    QString out;
    for (const hr::Message& m : sentences) {
        if (!out.isEmpty()) out += QLatin1Char(' ');
        out += coreText(m);
    }
    return out;
}

QString coreText(const hr::Error& e) {
    const hr::Message& m = e.message();
    if (m.text.empty()) return QString::fromUtf8(e.what());
    return coreText(m);
}

QString coreText(const std::exception& e) {
    if (const auto* he = dynamic_cast<const hr::Error*>(&e)) return coreText(*he);
    return QString::fromUtf8(e.what());
}

QString coreBytesText(std::size_t bytes) { return QString::fromStdString(hr::format_bytes(bytes)); }

QString phaseText(const hr::StepPhase& phase) { return coreText(hr::describe_phase(phase)); }

QString peakText(const hr::StepTimeline& t) {
    QStringList parts;
    for (const hr::PeakPart& p : hr::peak_parts(t)) {
        hr::Message m = hr::peak_part_message(p);
        QStringList args;
        for (const std::string& a : m.args) args << QString::fromStdString(a);
        if (!p.rest && !args.isEmpty()) args[0] = categoryText(p.category).toLower();  // the interface's name of it
        parts << fillCoreArgs(QCoreApplication::translate(m.id.c_str(), m.text.c_str()), args);
    }
    const QString comp = parts.join(QCoreApplication::translate("hrw::CoreText", ", ", "between the parts of a list"));
    const QString bytes = QString::fromStdString(hr::format_bytes_short(t.peak_total));
    if (t.peak_phase < 0)
        return fillCoreArgs(QCoreApplication::translate(hr::kPeakAtStart.id, hr::kPeakAtStart.text), {bytes, comp});
    return fillCoreArgs(QCoreApplication::translate(hr::kPeakSentence.id, hr::kPeakSentence.text),
                        {bytes, phaseText(t.phases[static_cast<std::size_t>(t.peak_phase)]), comp});
}

}  // namespace hrw
