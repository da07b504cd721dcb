#pragma once
// One field of a record's JSON form, written and read the same way by every record's serialiser
// (memory/ledger_json.h, train/record_json.h): a real number that is not finite is written null (JSON has
// no NaN) and null reads back as NaN; a key that is missing leaves the value as it was (an older writer did
// not know the field: the record's default stands); a value of the wrong kind is an InputError naming the
// field. Vectors are arrays of their elements; any other type T is read with from_json(json, T&) and written
// with to_json(json&, const T&) found next to T.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_limits.h"

namespace hr::json_field {

using json = nlohmann::json;

template <typename T>
json write(const T& v) {
    if constexpr (std::is_floating_point_v<T>) {
        return json_finite(static_cast<double>(v));
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_integral_v<T>) {
        return json(v);
    } else {
        json j;
        to_json(j, v);
        return j;
    }
}

template <typename T>
json write(const std::vector<T>& v) {
    json a = json::array();
    for (const T& e : v) a.push_back(write(e));
    return a;
}

[[noreturn]] inline void wrong_kind(const char* key, bool text) {
    if (text) throw InputError(HR_MSG("event.field_text", "run event: \"%1\" must be a string"), {key});
    throw InputError(HR_MSG("event.field_type", "run event: \"%1\" must be a number"), {key});
}

// `v` from the value `j` of the field `key`.
template <typename T>
void read_value(const json& j, const char* key, T& v) {
    if constexpr (std::is_floating_point_v<T>) {
        if (j.is_null()) v = std::nan("");
        else if (j.is_number()) v = j.get<T>();
        else wrong_kind(key, false);
    } else if constexpr (std::is_same_v<T, bool>) {
        v = j.is_boolean() && j.get<bool>();  // anything but true is false, as the older readers had it
    } else if constexpr (std::is_integral_v<T>) {
        if (!j.is_number_integer() || (std::is_unsigned_v<T> && !j.is_number_unsigned())) wrong_kind(key, false);
        v = j.get<T>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!j.is_string()) wrong_kind(key, true);
        v = j.get<std::string>();
    } else {
        from_json(j, v);
    }
}

template <typename T>
void read_value(const json& j, const char* key, std::vector<T>& v) {
    if (!j.is_array()) wrong_kind(key, false);
    v.clear();
    for (const json& e : j) {
        T x{};
        read_value(e, key, x);
        v.push_back(std::move(x));
    }
}

// `v` from `record[key]`; a missing key leaves `v` as it was.
template <typename T>
void read(const json& record, const char* key, T& v) {
    if (!record.is_object()) return;
    const auto it = record.find(key);
    if (it != record.end()) read_value(*it, key, v);
}

// Writes and reads through one list of fields: `fields(record, visitor)` calls visitor(name, member) for
// each field; these two visitors make the record's to_json and from_json.
struct Writer {
    json& out;
    template <typename T>
    void operator()(const char* key, const T& v) const { out[key] = write(v); }
};
struct Reader {
    const json& in;
    template <typename T>
    void operator()(const char* key, T& v) const { read(in, key, v); }
};

}  // namespace hr::json_field
