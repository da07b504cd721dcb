// GGUF writer (io/gguf.h).
#include "io/gguf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "base/dtype.h"
#include "base/error.h"

namespace hr {

namespace {

constexpr std::uint64_t kGgufAlign = 32;
constexpr std::int64_t kGgufQ8Block = 32;

enum : std::uint32_t { kGgufU32 = 4, kGgufI32 = 5, kGgufF32 = 6, kGgufBool = 7, kGgufString = 8, kGgufArray = 9, kGgufU64 = 10 };

void gguf_put_u32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void gguf_put_u64(std::string& s, std::uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
void gguf_put_str(std::string& s, const std::string& v) {
    gguf_put_u64(s, v.size());
    s += v;
}
std::uint64_t gguf_pad(std::uint64_t n) { return (n + kGgufAlign - 1) / kGgufAlign * kGgufAlign; }

void gguf_put_value(std::string& s, const GgufValue& v) {
    std::visit(
        [&](const auto& x) {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::uint32_t>) {
                gguf_put_u32(s, kGgufU32), gguf_put_u32(s, x);
            } else if constexpr (std::is_same_v<X, std::int32_t>) {
                gguf_put_u32(s, kGgufI32), gguf_put_u32(s, static_cast<std::uint32_t>(x));
            } else if constexpr (std::is_same_v<X, float>) {
                gguf_put_u32(s, kGgufF32), s.append(reinterpret_cast<const char*>(&x), 4);
            } else if constexpr (std::is_same_v<X, bool>) {
                gguf_put_u32(s, kGgufBool), s.push_back(x ? 1 : 0);
            } else if constexpr (std::is_same_v<X, std::string>) {
                gguf_put_u32(s, kGgufString), gguf_put_str(s, x);
            } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
                gguf_put_u32(s, kGgufArray), gguf_put_u32(s, kGgufString), gguf_put_u64(s, x.size());
                for (const auto& e : x) gguf_put_str(s, e);
            } else if constexpr (std::is_same_v<X, std::vector<std::int32_t>>) {
                gguf_put_u32(s, kGgufArray), gguf_put_u32(s, kGgufI32), gguf_put_u64(s, x.size());
                s.append(reinterpret_cast<const char*>(x.data()), 4 * x.size());
            } else {
                gguf_put_u32(s, kGgufArray), gguf_put_u32(s, kGgufF32), gguf_put_u64(s, x.size());
                s.append(reinterpret_cast<const char*>(x.data()), 4 * x.size());
            }
        },
        v);
}

std::int64_t gguf_row_length(const GgufTensorInfo& t) { return t.shape.back(); }
std::uint64_t gguf_numel(const GgufTensorInfo& t) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= static_cast<std::uint64_t>(d);
    return n;
}

}  // namespace

const char* gguf_type_name(GgufTensorType t) {
    switch (t) {
        case GgufTensorType::f32: return "f32";
        case GgufTensorType::f16: return "f16";
        case GgufTensorType::bf16: return "bf16";
        case GgufTensorType::q8_0: return "q8_0";
    }
    return "?";
}

std::uint64_t gguf_row_bytes(GgufTensorType t, std::int64_t n) {
    const auto u = static_cast<std::uint64_t>(n);
    switch (t) {
        case GgufTensorType::f32: return 4 * u;
        case GgufTensorType::f16:
        case GgufTensorType::bf16: return 2 * u;
        case GgufTensorType::q8_0: return u / kGgufQ8Block * (2 + kGgufQ8Block);
    }
    return 0;
}

GgufLayout gguf_layout(const std::vector<GgufKv>& kvs, const std::vector<GgufTensorInfo>& tensors) {
    GgufLayout l;
    std::string& h = l.header;
    h += "GGUF";
    gguf_put_u32(h, 3);
    gguf_put_u64(h, tensors.size());
    gguf_put_u64(h, kvs.size());
    std::set<std::string> keys;
    for (const auto& kv : kvs) {
        if (kv.key.empty() || !keys.insert(kv.key).second)
            throw Error(HR_MSG("gguf.key", "GGUF metadata key '%1' is empty or given twice"), {kv.key});
        gguf_put_str(h, kv.key);
        gguf_put_value(h, kv.value);
    }
    std::set<std::string> names;
    std::uint64_t at = 0;
    for (const auto& t : tensors) {
        if (t.name.empty() || !names.insert(t.name).second)
            throw Error(HR_MSG("gguf.name", "GGUF tensor name '%1' is empty or given twice"), {t.name});
        bool ok = !t.shape.empty() && t.shape.size() <= 4;
        for (auto d : t.shape) ok = ok && d >= 1;
        if (ok && t.type == GgufTensorType::q8_0) ok = gguf_row_length(t) % kGgufQ8Block == 0;
        if (!ok) throw Error(HR_MSG("gguf.shape", "GGUF tensor '%1' has a shape its type cannot hold"), {t.name});
        gguf_put_str(h, t.name);
        gguf_put_u32(h, static_cast<std::uint32_t>(t.shape.size()));
        for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) gguf_put_u64(h, static_cast<std::uint64_t>(*it));
        gguf_put_u32(h, static_cast<std::uint32_t>(t.type));
        gguf_put_u64(h, at);
        l.offsets.push_back(at);
        at = gguf_pad(at + gguf_numel(t) / static_cast<std::uint64_t>(gguf_row_length(t)) * gguf_row_bytes(t.type, gguf_row_length(t)));
    }
    h.resize(gguf_pad(h.size()), '\0');
    l.data_bytes = at;
    return l;
}

GgufWriter::GgufWriter(const std::string& path, const std::vector<GgufKv>& kvs, std::vector<GgufTensorInfo> tensors)
    : tensors_(std::move(tensors)), layout_(gguf_layout(kvs, tensors_)), out_(path) {
    out_.write(layout_.header);
}

namespace {
// One q8_0 block as ggml's quantize_row_q8_0_ref writes it: the scale d = max|x| / 127 as f16, then
// round(x / d) as 32 signed bytes (divided by the unrounded d).
void q8_0_block(const float* x, std::uint8_t* blk) {
    float amax = 0;
    for (std::int64_t j = 0; j < kGgufQ8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const std::uint16_t dh = f32_to_f16(d);
    std::memcpy(blk, &dh, 2);
    for (std::int64_t j = 0; j < kGgufQ8Block; ++j)
        blk[2 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::roundf(x[j] * id)));
}
}  // namespace

void gguf_round_trip(GgufTensorType type, float* v, std::size_t n) {
    switch (type) {
        case GgufTensorType::f32: return;
        case GgufTensorType::f16:
            for (std::size_t k = 0; k < n; ++k) v[k] = f16_to_f32(f32_to_f16(v[k]));
            return;
        case GgufTensorType::bf16:
            for (std::size_t k = 0; k < n; ++k) v[k] = bf16_to_f32(f32_to_bf16(v[k]));
            return;
        case GgufTensorType::q8_0: {
            if (n % kGgufQ8Block != 0)
                throw Error(HR_MSG("gguf.q8_row", "q8_0 rounding of %1 values: not whole blocks of 32"), {std::to_string(n)});
            std::uint8_t blk[2 + kGgufQ8Block];
            for (std::size_t b = 0; b < n; b += kGgufQ8Block) {
                q8_0_block(v + b, blk);
                std::uint16_t dh;
                std::memcpy(&dh, blk, 2);
                const float d = f16_to_f32(dh);  // ggml's dequantize_row_q8_0: q * d
                for (std::int64_t j = 0; j < kGgufQ8Block; ++j) v[b + j] = static_cast<std::int8_t>(blk[2 + j]) * d;
            }
            return;
        }
    }
}

void GgufWriter::pad_to(std::uint64_t offset) {
    static const char zeros[kGgufAlign] = {};
    if (offset > written_) out_.write(zeros, offset - written_);
    written_ = offset;
}

void GgufWriter::append_rows(const float* v, std::size_t count) {
    if (at_ >= tensors_.size())
        throw Error(HR_MSG("gguf.extra", "GGUF writer: more values than the layout's tensors hold"));
    const GgufTensorInfo& t = tensors_[at_];
    const auto n = static_cast<std::size_t>(gguf_row_length(t));
    if (count % n != 0 || values_ + count > gguf_numel(t))
        throw Error(HR_MSG("gguf.rows", "GGUF writer: %1 values do not make whole rows of tensor '%2'"),
                    {std::to_string(count), t.name});
    if (values_ == 0) pad_to(layout_.offsets[at_]);
    const std::size_t rows = count / n;
    buf_.resize(rows * gguf_row_bytes(t.type, static_cast<std::int64_t>(n)));
    std::uint8_t* o = buf_.data();
    switch (t.type) {
        case GgufTensorType::f32: std::memcpy(o, v, 4 * count); break;
        case GgufTensorType::f16:
        case GgufTensorType::bf16:
            for (std::size_t k = 0; k < count; ++k) {
                const std::uint16_t h = t.type == GgufTensorType::f16 ? f32_to_f16(v[k]) : f32_to_bf16(v[k]);
                std::memcpy(o + 2 * k, &h, 2);
            }
            break;
        case GgufTensorType::q8_0:
            for (std::size_t b = 0; b < count / kGgufQ8Block; ++b)
                q8_0_block(v + b * kGgufQ8Block, o + b * (2 + kGgufQ8Block));
            break;
    }
    out_.write(buf_.data(), buf_.size());
    written_ += buf_.size();
    values_ += count;
    if (values_ == gguf_numel(t)) ++at_, values_ = 0;
}

void GgufWriter::commit() {
    if (at_ != tensors_.size() || values_ != 0)
        throw Error(HR_MSG("gguf.incomplete", "GGUF writer: tensor '%1' was not written whole"),
                    {tensors_[std::min(at_, tensors_.size() - 1)].name});
    pad_to(layout_.data_bytes);
    out_.commit();
}

}  // namespace hr
