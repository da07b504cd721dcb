#pragma once
// The CPU-against-GPU op tests' figures (issue 43): every comparison's largest difference, kept per op
// and dtype, and printed after each test function, always (not only on a mismatch), one line each:
//   op-diff: {"op": "conv forward", "dtype": "bf16", "max_abs": 0.0031, "max_rel": 0.0012, "tol": 0.01,
//             "checks": 6, "nan": false}
// max_rel is the largest |gpu - cpu| over the reference's largest magnitude (the tests' own measure, so
// it compares with tol directly). scripts/gpu-check collects these lines into its results.
// The op and dtype come from the comparison's description: the words before its first dtype name
// ("conv forward f32 x (8, 3, 16, 16) ..." is "conv forward", f32) plus the words after its last figure
// ("attention bf16 B2 T64 ... dqkv" is "attention dqkv"); "copy f32 -> bf16" has dtype "f32->bf16".
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>
#include <string>
#include <utility>

namespace hrtest {

struct OpDiff {
    double max_abs = 0, max_rel = 0, tol = 0;
    int checks = 0;
    bool nan = false;
};

inline std::map<std::pair<QString, QString>, OpDiff>& op_diffs() {
    static std::map<std::pair<QString, QString>, OpDiff> m;
    return m;
}

inline bool is_dtype_word(const QString& w) {
    static const QStringList names = {"f32", "f64", "bf16", "f16", "tf32", "i32", "i64", "u8", "fp32", "fp16"};
    return names.contains(w);
}

// (op, dtype) of a comparison's description (see the top of this file).
inline std::pair<QString, QString> op_key(const QString& what) {
    // parenthesised groups holding a figure are shapes: dropped
    QString text;
    int depth = 0;
    QString group;
    for (QChar ch : what) {
        if (ch == '(') ++depth;
        if (depth > 0) group += ch;
        else text += ch;
        if (ch == ')' && depth > 0 && --depth == 0) {
            // a shape counts as a figure (a placeholder word), anything else stays
            text += group.contains(QRegularExpression(QStringLiteral("[0-9]"))) ? QStringLiteral(" 0 ") : group;
            group.clear();
        }
    }
    const QStringList words = text.split(' ', Qt::SkipEmptyParts);
    QStringList head, tail, dtypes;
    bool seen_figure = false;
    for (int i = 0; i < words.size(); ++i) {
        const QString& w = words[i];
        if (is_dtype_word(w)) {
            if (dtypes.isEmpty() || (i > 0 && words[i - 1] == QLatin1String("->"))) dtypes << w;
            seen_figure = true;
            tail.clear();
        } else if (w.contains(QRegularExpression(QStringLiteral("[0-9=:,]"))) || w == QLatin1String("->")) {
            seen_figure = true;
            tail.clear();
        } else if (!seen_figure) {
            head << w;
        } else {
            tail << w;
        }
    }
    QString op = (head + tail).join(' ');
    if (op.isEmpty()) op = what;
    return {op, dtypes.isEmpty() ? QStringLiteral("-") : dtypes.join(QStringLiteral("->"))};
}

inline void record_op_diff(const QString& what, double max_abs, double scale, double tol, bool nan) {
    OpDiff& d = op_diffs()[op_key(what)];
    d.max_abs = std::max(d.max_abs, max_abs);
    d.max_rel = std::max(d.max_rel, scale > 0 ? max_abs / scale : max_abs);
    d.tol = std::max(d.tol, tol);
    d.nan = d.nan || nan;
    ++d.checks;
}

// Compares `got` with `want` as the CUDA op tests do (largest difference against the largest |want|), records
// the figure and returns that scale, so each test's own check can follow.
inline double record_comparison(const std::vector<double>& got, const std::vector<double>& want, double tol,
                                const QString& what) {
    double scale = 0.0;
    for (double w : want) scale = std::max(scale, std::abs(w));
    double max_abs = 0.0;
    bool nan = false;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
        const double d = std::abs(got[i] - want[i]);
        if (std::isnan(d)) nan = true;
        else max_abs = std::max(max_abs, d);
    }
    record_op_diff(what, max_abs, scale, tol, nan);
    return scale;
}

// Prints what was recorded since the last call, and forgets it (call it from each test's cleanup()).
inline void print_op_diffs() {
    auto num = [](double v) { return QString::number(v, 'g', 4); };
    for (const auto& [key, d] : op_diffs()) {
        QString op = key.first;
        op.replace('\\', QLatin1String("\\\\")).replace('"', QLatin1String("\\\""));
        qInfo("op-diff: {\"op\": \"%s\", \"dtype\": \"%s\", \"max_abs\": %s, \"max_rel\": %s, \"tol\": %s, \"checks\": %d, "
              "\"nan\": %s}",
              qPrintable(op), qPrintable(key.second), qPrintable(num(d.max_abs)), qPrintable(num(d.max_rel)),
              qPrintable(num(d.tol)), d.checks, d.nan ? "true" : "false");
    }
    op_diffs().clear();
}

}  // namespace hrtest
