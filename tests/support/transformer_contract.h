#pragma once
// Calls of the transformer ops of backend.h that break their argument contract
// (core/backend/cpu/transformer_checks.h), each with a phrase its refusal must hold. tests/unit runs
// them on the CPU backend; tests/cuda checks the GPU refuses each with the CPU's very message.
// Every call is refused before an op reads its data, so unwritten tensors of any backend will do.
#include <functional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "tensor/tensor.h"

namespace hrtest {

struct ContractCase {
    std::string name;    // what is wrong
    std::string phrase;  // a part of the message (after "op: ")
    std::function<void(hr::Backend&)> call;
    bool same_text = true;  // false: the message holds a figure of the backend's own (a workspace size)
};

// A tensor of the backend's allocator, left unwritten (no case reads it).
inline hr::Tensor blank(hr::Backend& be, const hr::Shape& s, hr::DType dt = hr::DType::f32) {
    return hr::Tensor::empty(be.allocator(), s, dt, hr::MemCategory::other);
}

inline std::vector<ContractCase> transformer_contract_cases() {
    using hr::DType;
    using hr::Tensor;
    using B = hr::Backend;
    std::vector<ContractCase> c;
    c.push_back({"embedding ids not i64", "embedding_forward: ids", [](B& be) {
                     Tensor ids = blank(be, {2, 3}, DType::f32), table = blank(be, {5, 4}), y = blank(be, {2, 3, 4});
                     be.embedding_forward(ids, table, y);
                 }});
    c.push_back({"embedding table not 2-D", "embedding_forward: expects table (V, C)", [](B& be) {
                     Tensor ids = blank(be, {2, 3}, DType::i64), table = blank(be, {5, 4, 1}), y = blank(be, {2, 3, 4});
                     be.embedding_forward(ids, table, y);
                 }});
    c.push_back({"embedding y too small", "must hold ids", [](B& be) {
                     Tensor ids = blank(be, {2, 3}, DType::i64), table = blank(be, {5, 4}), y = blank(be, {2, 3, 3});
                     be.embedding_forward(ids, table, y);
                 }});
    c.push_back({"embedding backward dy too small", "embedding_backward: dy", [](B& be) {
                     Tensor ids = blank(be, {2, 3}, DType::i64), dy = blank(be, {2, 2, 4}), dt = blank(be, {5, 4});
                     be.embedding_backward(ids, dy, dt);
                 }});
    c.push_back({"layernorm gamma width", "layernorm_forward: gamma", [](B& be) {
                     Tensor x = blank(be, {3, 8}), g = blank(be, {7}), b = blank(be, {8}), y = blank(be, {3, 8});
                     Tensor m = blank(be, {3}), r = blank(be, {3});
                     be.layernorm_forward(x, g, b, 1e-5f, y, m, r);
                 }});
    c.push_back({"layernorm mean per row", "one value per row", [](B& be) {
                     Tensor x = blank(be, {3, 8}), g = blank(be, {8}), b = blank(be, {8}), y = blank(be, {3, 8});
                     Tensor m = blank(be, {2}), r = blank(be, {3});
                     be.layernorm_forward(x, g, b, 1e-5f, y, m, r);
                 }});
    c.push_back({"layernorm backward dx shape", "layernorm_backward: x", [](B& be) {
                     Tensor x = blank(be, {3, 8}), dy = blank(be, {3, 8}), g = blank(be, {8}), m = blank(be, {3});
                     Tensor r = blank(be, {3}), dx = blank(be, {3, 7}), dg = blank(be, {8}), db = blank(be, {8});
                     be.layernorm_backward(x, dy, g, m, r, dx, dg, db);
                 }});
    c.push_back({"gelu shapes differ", "gelu_tanh_forward: x", [](B& be) {
                     Tensor x = blank(be, {4, 2}), y = blank(be, {8});
                     be.gelu_tanh_forward(x, y);
                 }});
    c.push_back({"gelu backward dtypes differ", "gelu_tanh_backward: x", [](B& be) {
                     Tensor x = blank(be, {8}), dy = blank(be, {8}, DType::bf16), dx = blank(be, {8});
                     be.gelu_tanh_backward(x, dy, dx);
                 }});
    c.push_back({"cross-entropy targets count", "cross_entropy_inplace: targets", [](B& be) {
                     Tensor l = blank(be, {4, 10}), t = blank(be, {3}, DType::i64);
                     be.cross_entropy_inplace(l, t, true, 1.0f);
                 }});
    c.push_back({"cross-entropy logits not 2-D", "expects logits (N, V)", [](B& be) {
                     Tensor l = blank(be, {4, 10, 1}), t = blank(be, {4}, DType::i64);
                     be.cross_entropy_inplace(l, t, true, 1.0f);
                 }});
    c.push_back({"copy_rows out of range", "copy_rows: rows [2, 5)", [](B& be) {
                     Tensor s = blank(be, {2, 4, 3}), d = blank(be, {2, 6, 3});
                     be.copy_rows(s, 2, d, 0, 3);
                 }});
    c.push_back({"transpose_last2 shapes", "transpose_last2: expects x (N, A, B)", [](B& be) {
                     Tensor x = blank(be, {2, 3, 4}), y = blank(be, {2, 3, 4});
                     be.transpose_last2(x, y);
                 }});
    c.push_back({"attention heads do not divide", "is not divisible by 3 heads", [](B& be) {
                     Tensor qkv = blank(be, {1, 4, 24}), out = blank(be, {1, 4, 8}), lse = blank(be, {1, 3, 4}), ws;
                     hr::AttentionParams p;
                     p.heads = 3;
                     be.attention_forward(qkv, out, lse, p, ws);
                 }});
    c.push_back({"attention lse shape", "attention_forward: lse", [](B& be) {
                     Tensor qkv = blank(be, {1, 4, 24}), out = blank(be, {1, 4, 8}), lse = blank(be, {1, 4, 2}), ws;
                     hr::AttentionParams p;
                     p.heads = 2;
                     be.attention_forward(qkv, out, lse, p, ws);
                 }});
    c.push_back({"attention dropout", "dropout", [](B& be) {
                     Tensor qkv = blank(be, {1, 4, 24}), out = blank(be, {1, 4, 8}), lse = blank(be, {1, 2, 4}), ws;
                     hr::AttentionParams p;
                     p.heads = 2;
                     p.dropout = 1.0f;
                     be.attention_forward(qkv, out, lse, p, ws);
                 }});
    c.push_back({"attention backward dqkv shape", "attention_backward: qkv", [](B& be) {
                     Tensor qkv = blank(be, {1, 4, 24}), out = blank(be, {1, 4, 8}), lse = blank(be, {1, 2, 4});
                     Tensor dout = blank(be, {1, 4, 8}), dqkv = blank(be, {1, 4, 8}), ws;
                     hr::AttentionParams p;
                     p.heads = 2;
                     be.attention_backward(qkv, out, lse, dout, dqkv, p, ws);
                 }});
    c.push_back({"attention backward workspace", "workspace", [](B& be) {
                     Tensor qkv = blank(be, {1, 4, 24}), out = blank(be, {1, 4, 8}), lse = blank(be, {1, 2, 4});
                     Tensor dout = blank(be, {1, 4, 8}), dqkv = blank(be, {1, 4, 24}), ws = blank(be, {1});
                     hr::AttentionParams p;
                     p.heads = 2;
                     be.attention_backward(qkv, out, lse, dout, dqkv, p, ws);
                 },
                 false});
    return c;
}

}  // namespace hrtest
