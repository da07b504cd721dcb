#include "data/table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cmath>
#include <map>
#include <random>
#include <unordered_map>

#include "base/error.h"
#include "data/data_file.h"

namespace hr {

namespace {

// The columns for a message: all of them, or the first 20 and how many more.
std::string column_list(const std::vector<std::string>& columns) {
    std::string s;
    const std::size_t shown = std::min<std::size_t>(columns.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) {
        const std::string& c = columns[i];
        const bool quote = c.empty() || c.find_first_of(",\t\"") != std::string::npos || c.front() == ' ' || c.back() == ' ';
        s += (i ? ", " : "") + (quote ? "\"" + c + "\"" : c);
    }
    if (columns.size() > shown) s += " and " + std::to_string(columns.size() - shown) + " more";
    return s;
}

// A field as a person reads it in a message (at most 40 bytes).
std::string shown(const std::string& f) { return f.size() > 40 ? f.substr(0, 40) + "…" : f; }

std::string number_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// RFC 4180 records; `line` is the file line a record starts on (1 = the first).
class Records {
public:
    Records(const std::string& text, char delimiter, const std::string& what)
        : s_(text), delim_(delimiter), what_(what) {
        if (s_.size() >= 3 && s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // a UTF-8 byte-order mark
    }

    bool next(std::vector<std::string>& fields, std::int64_t& line) {
        skip_blank_lines();
        if (pos_ >= s_.size()) return false;
        line = line_;
        fields.clear();
        const std::size_t n = s_.size();
        for (;;) {
            std::string f;
            if (pos_ < n && s_[pos_] == '"') {
                ++pos_;
                for (;;) {
                    if (pos_ >= n)
                        throw InputError(HR_MSG("table.unterminated_quote",
                                                "%1, line %2: a quoted field is not closed before the end of the file; "
                                                "add the closing \" (a \" inside a quoted field is written \"\")"),
                                         {what_, std::to_string(line)});
                    const char c = s_[pos_];
                    if (c == '"') {
                        if (pos_ + 1 < n && s_[pos_ + 1] == '"') {
                            f += '"';
                            pos_ += 2;
                            continue;
                        }
                        ++pos_;
                        break;
                    }
                    if (c == '\n') ++line_;
                    f += c;
                    ++pos_;
                }
                while (pos_ < n && (s_[pos_] == ' ' || (s_[pos_] == '\t' && delim_ != '\t'))) ++pos_;
                if (pos_ < n && s_[pos_] != delim_ && s_[pos_] != '\n' &&
                    !(s_[pos_] == '\r' && (pos_ + 1 == n || s_[pos_ + 1] == '\n')))
                    throw InputError(HR_MSG("table.text_after_quote",
                                            "%1, line %2: text follows a closing quote in field %3; quote the whole "
                                            "field (a \" inside it is written \"\")"),
                                     {what_, std::to_string(line_), std::to_string(std::int64_t(fields.size()) + 1)});
            } else {
                const std::size_t start = pos_;
                while (pos_ < n && s_[pos_] != delim_ && s_[pos_] != '\n') ++pos_;
                f.assign(s_, start, pos_ - start);
                if (!f.empty() && f.back() == '\r' && (pos_ >= n || s_[pos_] == '\n')) f.pop_back();
            }
            fields.push_back(std::move(f));
            if (pos_ < n && s_[pos_] == delim_) {
                ++pos_;
                continue;
            }
            if (pos_ < n && s_[pos_] == '\r') ++pos_;
            if (pos_ < n && s_[pos_] == '\n') {
                ++pos_;
                ++line_;
            }
            return true;
        }
    }

private:
    void skip_blank_lines() {
        const std::size_t n = s_.size();
        while (pos_ < n) {
            if (s_[pos_] == '\n') {
                ++pos_;
                ++line_;
            } else if (s_[pos_] == '\r' && (pos_ + 1 == n || s_[pos_ + 1] == '\n')) {
                ++pos_;
            } else {
                break;
            }
        }
    }

    const std::string& s_;
    const char delim_;
    const std::string& what_;
    std::size_t pos_ = 0;
    std::int64_t line_ = 1;
};

std::string trimmed(const std::string& f) {
    std::size_t a = 0, b = f.size();
    while (a < b && (f[a] == ' ' || f[a] == '\t')) ++a;
    while (b > a && (f[b - 1] == ' ' || f[b - 1] == '\t')) --b;
    return f.substr(a, b - a);
}

// A finite number written in full (as C's strtod reads it, without hexadecimal), or false.
bool parse_number(const std::string& text, double& v) {
    std::string t = trimmed(text);
    if (!t.empty() && t[0] == '+') t.erase(0, 1);
    if (t.empty()) return false;
    const char* end = t.data() + t.size();
    auto r = std::from_chars(t.data(), end, v, std::chars_format::general);
    return r.ec == std::errc() && r.ptr == end && std::isfinite(v);
}

// Uniform draw in [0, bound] from the raw 64-bit output, without modulo bias.
std::uint64_t draw(std::mt19937_64& rng, std::uint64_t bound) {
    const std::uint64_t range = bound + 1;
    if (range == 0) return rng();
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    for (;;) {
        const std::uint64_t x = rng();
        if (x < limit) return x % range;
    }
}

}  // namespace

bool is_table_data(const std::string& spec) { return spec.rfind("csv:", 0) == 0 || spec.rfind("tsv:", 0) == 0; }

DatasetPair parse_table(const std::string& text, char delimiter, const std::string& target, const std::string& what,
                        TableSummary* summary) {
    Records records(text, delimiter, what);
    std::vector<std::string> fields;
    std::int64_t line = 0;
    if (!records.next(fields, line))
        throw InputError(HR_MSG("table.empty", "%1: the file holds no rows; a table starts with a row naming its "
                                               "columns, then a row for each sample"),
                         {what});
    const std::vector<std::string> columns = fields;
    const std::int64_t ncol = static_cast<std::int64_t>(columns.size());
    if (ncol > kMaxTableColumns)
        throw InputError(HR_MSG("table.too_many_columns", "%1: %2 columns is more than the %3 Headroom reads"),
                         {what, std::to_string(ncol), std::to_string(kMaxTableColumns)});
    if (target.empty())
        throw InputError(HR_MSG("table.no_target", "%1: name the column to predict with --target COLUMN; the "
                                                   "table's columns are %2"),
                         {what, column_list(columns)});
    int tcol = -1;
    for (std::int64_t c = 0; c < ncol; ++c)
        if (trimmed(columns[std::size_t(c)]) == trimmed(target)) {
            if (tcol >= 0)
                throw InputError(HR_MSG("table.target_twice", "%1: two columns are named '%2'; give the target's number "
                                                              "instead (--target %3 for the first)"),
                                 {what, target, std::to_string(tcol + 1)});
            tcol = static_cast<int>(c);
        }
    if (tcol < 0) {
        int k = 0;
        auto r = std::from_chars(target.data(), target.data() + target.size(), k);
        if (r.ec == std::errc() && r.ptr == target.data() + target.size() && k >= 1 && k <= ncol) tcol = k - 1;
    }
    if (tcol < 0)
        throw InputError(HR_MSG("table.target_not_a_column", "%1: no column is named '%2'; the table's columns are "
                                                             "%3 (or give a column's number from 1 to %4)"),
                         {what, target, column_list(columns), std::to_string(ncol)});
    if (ncol < 2)
        throw InputError(HR_MSG("table.no_features", "%1: the table has only the target column '%2'; a model needs "
                                                     "at least one other column of numbers to learn from"),
                         {what, columns[std::size_t(tcol)]});
    const std::int64_t F = ncol - 1;

    std::vector<double> values;                // (rows, F)
    std::vector<int> label_ids;                // first-seen id of each row's target value
    std::vector<std::string> seen;             // values by first-seen id
    std::unordered_map<std::string, int> ids;
    std::vector<std::int64_t> lines;           // the file line of each row, for messages
    while (records.next(fields, line)) {
        lines.push_back(line);
        if (static_cast<std::int64_t>(fields.size()) != ncol)
            throw InputError(HR_MSG("table.ragged_row", "%1, line %2: %3 fields, but the header names %4 columns; "
                                                        "every row needs a value for each column (quote a value that "
                                                        "holds the delimiter)"),
                             {what, std::to_string(line), std::to_string(std::int64_t(fields.size())), std::to_string(ncol)});
        for (std::int64_t c = 0; c < ncol; ++c) {
            const std::string& f = fields[std::size_t(c)];
            if (c == tcol) {
                const std::string v = trimmed(f);
                if (v.empty())
                    throw InputError(HR_MSG("table.missing_target", "%1, line %2: the target column '%3' is empty; "
                                                                    "every sample needs its class"),
                                     {what, std::to_string(line), columns[std::size_t(c)]});
                auto [it, fresh] = ids.try_emplace(v, static_cast<int>(seen.size()));
                if (fresh) {
                    if (static_cast<int>(seen.size()) >= kMaxTableClasses)
                        throw InputError(HR_MSG("table.too_many_classes",
                                                "%1: the target column '%2' has more than %3 different values; "
                                                "Headroom trains classifiers, so the target must be a class (a "
                                                "regression target is not supported)"),
                                         {what, columns[std::size_t(c)], std::to_string(kMaxTableClasses)});
                    seen.push_back(v);
                }
                label_ids.push_back(it->second);
                continue;
            }
            double v = 0;
            if (!parse_number(f, v)) {
                if (trimmed(f).empty())
                    throw InputError(HR_MSG("table.missing_value", "%1, line %2: column '%3' has no value; fill it in "
                                                                   "or remove the row (Headroom does not impute)"),
                                     {what, std::to_string(line), columns[std::size_t(c)]});
                throw InputError(HR_MSG("table.not_a_number", "%1, line %2: column '%3' holds '%4', which is not a "
                                                              "finite number; every column but the target must be "
                                                              "numeric (encode categories as numbers or drop the column)"),
                                 {what, std::to_string(line), columns[std::size_t(c)], shown(trimmed(f))});
            }
            values.push_back(v);
        }
    }
    const std::int64_t rows = static_cast<std::int64_t>(label_ids.size());
    if (rows < 2)
        throw InputError(HR_MSG("table.too_few_rows", "%1: %2 data row(s); a table needs at least 2 (one for "
                                                      "training, one for the test set)"),
                         {what, std::to_string(rows)});
    if (seen.size() < 2)
        throw InputError(HR_MSG("table.one_class", "%1: the target column '%2' has only the value '%3'; a "
                                                   "classifier needs at least 2 classes"),
                         {what, columns[std::size_t(tcol)], shown(seen.front())});

    // classes: numeric order when every value is a number, else byte order
    std::vector<int> order(seen.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::vector<double> as_number(seen.size());
    bool numeric = true;
    for (std::size_t i = 0; i < seen.size() && numeric; ++i) numeric = parse_number(seen[i], as_number[i]);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
        if (numeric && as_number[std::size_t(a)] != as_number[std::size_t(b)])
            return as_number[std::size_t(a)] < as_number[std::size_t(b)];
        return seen[std::size_t(a)] < seen[std::size_t(b)];
    });
    std::vector<int> class_of(seen.size());
    std::vector<std::string> classes;
    for (std::size_t k = 0; k < order.size(); ++k) {
        class_of[std::size_t(order[k])] = static_cast<int>(k);
        classes.push_back(seen[std::size_t(order[k])]);
    }

    // the split: a fifth of the rows, chosen by a seeded shuffle
    std::vector<std::int64_t> perm(static_cast<std::size_t>(rows));
    for (std::int64_t i = 0; i < rows; ++i) perm[std::size_t(i)] = i;
    std::mt19937_64 rng(kTableSplitSeed);
    for (std::int64_t i = rows - 1; i > 0; --i)
        std::swap(perm[std::size_t(i)], perm[std::size_t(draw(rng, static_cast<std::uint64_t>(i)))]);
    const std::int64_t test_rows = std::max<std::int64_t>(1, rows / 5);
    std::vector<char> is_test(static_cast<std::size_t>(rows), 0);
    for (std::int64_t i = 0; i < test_rows; ++i) is_test[std::size_t(perm[std::size_t(i)])] = 1;

    // standardisation with the training rows' statistics
    std::vector<double> mean(static_cast<std::size_t>(F), 0.0), sd(static_cast<std::size_t>(F), 0.0);
    const double ntrain = static_cast<double>(rows - test_rows);
    for (std::int64_t r = 0; r < rows; ++r)
        if (!is_test[std::size_t(r)])
            for (std::int64_t j = 0; j < F; ++j) mean[std::size_t(j)] += values[std::size_t(r * F + j)];
    for (double& m : mean) m /= ntrain;
    for (std::int64_t r = 0; r < rows; ++r)
        if (!is_test[std::size_t(r)])
            for (std::int64_t j = 0; j < F; ++j) {
                const double d = values[std::size_t(r * F + j)] - mean[std::size_t(j)];
                sd[std::size_t(j)] += d * d;
            }
    auto too_far = [&](std::int64_t r, std::int64_t j) {
        std::int64_t c = j < tcol ? j : j + 1;  // the feature's column
        return InputError(HR_MSG("table.out_of_range",
                                 "%1, line %2: column '%3' holds %4, too far from the training rows' values to be "
                                 "held as a 32-bit float once standardised; rescale the column (a logarithm, other "
                                 "units) or remove the row"),
                          {what, std::to_string(lines[std::size_t(r)]), columns[std::size_t(c)],
                           number_text(values[std::size_t(r * F + j)])});
    };
    for (std::int64_t j = 0; j < F; ++j) {
        double& s = sd[std::size_t(j)];
        s = std::sqrt(s / ntrain);
        if (!std::isfinite(s) || !std::isfinite(mean[std::size_t(j)])) {  // the statistics overflowed: its largest value
            std::int64_t worst = 0;
            for (std::int64_t r = 1; r < rows; ++r)
                if (std::fabs(values[std::size_t(r * F + j)]) > std::fabs(values[std::size_t(worst * F + j)])) worst = r;
            throw too_far(worst, j);
        }
        if (!(s > 0)) s = 1.0;
    }

    DatasetPair p;
    std::vector<std::string> feature_names;
    for (std::int64_t c = 0; c < ncol; ++c)
        if (c != tcol) feature_names.push_back(columns[std::size_t(c)]);
    for (Dataset* d : {&p.train, &p.test}) {
        d->name = what + (d == &p.train ? "/train" : "/test");
        d->sample_shape = {F};
        d->num_classes = static_cast<int>(classes.size());
        d->class_names = classes;
        d->feature_names = feature_names;
        d->norm_mean = 0.0f;
        d->norm_std = 1.0f;
        const std::int64_t count = d == &p.train ? rows - test_rows : test_rows;
        d->features.reserve(static_cast<std::size_t>(count * F));
        d->labels.reserve(static_cast<std::size_t>(count));
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        Dataset& d = is_test[std::size_t(r)] ? p.test : p.train;
        for (std::int64_t j = 0; j < F; ++j) {
            const double z = (values[std::size_t(r * F + j)] - mean[std::size_t(j)]) / sd[std::size_t(j)];
            const float zf = static_cast<float>(z);
            if (!std::isfinite(zf)) throw too_far(r, j);  // a value far outside the training rows
            d.features.push_back(zf);
        }
        d.labels.push_back(class_of[std::size_t(label_ids[std::size_t(r)])]);
        ++d.count;
    }
    if (summary) {
        summary->columns = columns;
        summary->rows = rows;
        summary->target_column = tcol;
        summary->classes = classes;
        summary->feature_mean = mean;
        summary->feature_std = sd;
        summary->test_rows.clear();
        for (std::int64_t r = 0; r < rows; ++r)
            if (is_test[std::size_t(r)]) summary->test_rows.push_back(r);
    }
    return p;
}

std::vector<std::string> read_table_columns(const std::string& spec) {
    const bool tsv = spec.rfind("tsv:", 0) == 0;
    const std::string path = spec.substr(4);
    data_file_size(path, tsv ? "a TSV table" : "a CSV table");
    std::string head;
    {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) throw InputError(HR_MSG("table.cannot_open", "%1: cannot open; check the file's permissions"), {path});
        head.resize(1 << 20);
        head.resize(std::fread(head.data(), 1, head.size(), f));
        std::fclose(f);
    }
    Records records(head, tsv ? '\t' : ',', path);
    std::vector<std::string> fields;
    std::int64_t line = 0;
    try {
        if (!records.next(fields, line)) return {};
    } catch (const InputError&) {
        return {};  // a quoted header longer than the part read: no choice to offer
    }
    return fields;
}

DatasetPair load_table(const std::string& spec, const std::string& target, TableSummary* summary) {
    const bool tsv = spec.rfind("tsv:", 0) == 0;
    const std::string path = spec.substr(4);
    if (path.empty())
        throw InputError(HR_MSG("table.no_file", "%1 needs a file, e.g. --data %1/path/to/table.%2 --target COLUMN"),
                         {tsv ? "tsv:" : "csv:", tsv ? "tsv" : "csv"});
    const std::string text = read_data_file(path, kMaxTableBytes, tsv ? "a TSV table" : "a CSV table");
    DatasetPair p = parse_table(text, tsv ? '\t' : ',', target, path, summary);
    p.source_dir = path;
    return p;
}

}  // namespace hr
