#pragma once
// The part of ONNX's protobuf schema (onnx/onnx.proto, IR version 8) an exported graph uses, as plain structs,
// and their protobuf wire encoding (https://protobuf.dev/programming-guides/encoding/). Written here rather than
// through libonnx/libprotobuf: Debian's libsentencepiece.so.0 (which core links for BPE tokenizers) exports its
// own copy of protobuf-lite's symbols, and a process that loads it with libprotobuf.so.32 crashes while
// libprotobuf registers its descriptors (docs/export.md). Only what is written is modelled; every field number
// and enum value is onnx.proto's. ONNX's checker (python3-onnx) and ONNX Runtime read every file in the tests.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace hr::onnx_proto {

// AttributeProto.AttributeType
enum AttrType { kAttrFloat = 1, kAttrInt = 2, kAttrInts = 7 };
// TensorProto.DataType
enum DataType { kFloat = 1, kInt64 = 7 };

struct Attribute {
    std::string name;
    AttrType type = kAttrInt;
    float f = 0;
    std::int64_t i = 0;
    std::vector<std::int64_t> ints;
};

struct Node {
    std::string op_type, name;
    std::vector<std::string> input, output;
    std::vector<Attribute> attribute;
};

struct Tensor {  // an initializer: raw_data, little-endian
    std::string name;
    DataType data_type = kFloat;
    std::vector<std::int64_t> dims;  // empty: a scalar
    std::string raw_data;
};

struct Dim {  // TensorShapeProto.Dimension: a value, or a name (dynamic) when param is not empty
    std::int64_t value = 0;
    std::string param;
};

struct ValueInfo {  // a graph input or output: a float tensor of a shape
    std::string name, doc_string;
    DataType elem_type = kFloat;
    std::vector<Dim> shape;
};

struct Graph {
    std::string name;
    std::deque<Node> node;  // a deque: references to nodes stay valid while more are added
    std::vector<Tensor> initializer;
    std::vector<ValueInfo> input, output;
};

struct Model {
    std::int64_t ir_version = 8;
    std::string producer_name, producer_version, doc_string;
    std::int64_t model_version = 1;
    std::int64_t opset = 17;  // the default domain (ai.onnx)
    Graph graph;
    std::vector<std::pair<std::string, std::string>> metadata_props;
};

// ModelProto's bytes.
std::string serialize(const Model& m);

}  // namespace hr::onnx_proto
