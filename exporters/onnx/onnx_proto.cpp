// Protobuf's wire format for onnx_proto.h's messages: tag = field << 3 | wire type; varints for integers and
// enums (wire type 0), little-endian 4 bytes for float (5), a varint length and the bytes for strings, bytes,
// nested messages and packed repeated integers (2). Fields in onnx.proto's numbering.
#include "exporters/onnx/onnx_proto.h"

#include <cstring>

namespace hr::onnx_proto {

namespace {

class Out {
public:
    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            s_ += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        s_ += static_cast<char>(v);
    }
    void tag(int field, int wire) { varint(static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire)); }
    void int64(int field, std::int64_t v) {  // int64 / int32 / enum: two's complement as a 64-bit varint
        tag(field, 0);
        varint(static_cast<std::uint64_t>(v));
    }
    void float32(int field, float v) {
        tag(field, 5);
        char b[4];
        std::memcpy(b, &v, 4);  // x86-64 and every host ONNX Runtime runs on: little-endian
        s_.append(b, 4);
    }
    void bytes(int field, const std::string& v) {
        tag(field, 2);
        varint(v.size());
        s_ += v;
    }
    void packed_int64(int field, const std::vector<std::int64_t>& v) {
        Out p;
        for (auto x : v) p.varint(static_cast<std::uint64_t>(x));
        bytes(field, p.s_);
    }
    std::string& str() { return s_; }

private:
    std::string s_;
};

std::string attribute(const Attribute& a) {
    Out o;
    o.bytes(1, a.name);
    if (a.type == kAttrFloat) o.float32(2, a.f);
    if (a.type == kAttrInt) o.int64(3, a.i);
    if (a.type == kAttrInts)
        for (auto x : a.ints) o.int64(8, x);  // repeated int64 ints = 8 (proto2: not packed)
    o.int64(20, a.type);
    return o.str();
}

std::string node(const Node& n) {
    Out o;
    for (const auto& i : n.input) o.bytes(1, i);
    for (const auto& x : n.output) o.bytes(2, x);
    o.bytes(3, n.name);
    o.bytes(4, n.op_type);
    for (const auto& a : n.attribute) o.bytes(5, attribute(a));
    return o.str();
}

std::string tensor(const Tensor& t) {
    Out o;
    for (auto d : t.dims) o.int64(1, d);  // repeated int64 dims = 1 (not packed)
    o.int64(2, t.data_type);
    o.bytes(8, t.name);
    o.bytes(9, t.raw_data);
    return o.str();
}

std::string value_info(const ValueInfo& v) {
    Out shape;  // TensorShapeProto
    for (const auto& d : v.shape) {
        Out dim;
        if (d.param.empty()) dim.int64(1, d.value);
        else dim.bytes(2, d.param);
        shape.bytes(1, dim.str());
    }
    Out tensor_type;  // TypeProto.Tensor
    tensor_type.int64(1, v.elem_type);
    tensor_type.bytes(2, shape.str());
    Out type;  // TypeProto
    type.bytes(1, tensor_type.str());
    Out o;
    o.bytes(1, v.name);
    o.bytes(2, type.str());
    if (!v.doc_string.empty()) o.bytes(3, v.doc_string);
    return o.str();
}

std::string graph(const Graph& g) {
    Out o;
    for (const auto& n : g.node) o.bytes(1, node(n));
    o.bytes(2, g.name);
    for (const auto& t : g.initializer) o.bytes(5, tensor(t));
    for (const auto& v : g.input) o.bytes(11, value_info(v));
    for (const auto& v : g.output) o.bytes(12, value_info(v));
    return o.str();
}

}  // namespace

std::string serialize(const Model& m) {
    Out o;
    o.int64(1, m.ir_version);
    o.bytes(2, m.producer_name);
    o.bytes(3, m.producer_version);
    o.int64(5, m.model_version);
    o.bytes(6, m.doc_string);
    o.bytes(7, graph(m.graph));
    Out opset;  // OperatorSetIdProto: domain "" (ai.onnx), version
    opset.bytes(1, "");
    opset.int64(2, m.opset);
    o.bytes(8, opset.str());
    for (const auto& [k, v] : m.metadata_props) {
        Out e;
        e.bytes(1, k);
        e.bytes(2, v);
        o.bytes(14, e.str());
    }
    return std::move(o.str());
}

}  // namespace hr::onnx_proto
