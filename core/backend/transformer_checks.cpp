#include "backend/transformer_checks.h"

namespace hr::ops {

RowsCols rows_cols(const char* op, const Tensor& t) {
    if (t.ndim() < 1) fail(op, "expects a tensor with a last dimension, got " + desc(t));
    RowsCols rc;
    rc.C = t.dim(-1);
    rc.R = rc.C > 0 ? t.numel() / rc.C : 0;
    return rc;
}

EmbeddingDims check_embedding_forward(const TensorRules& rules, const Tensor& ids, const Tensor& table, const Tensor& y) {
    const char* op = "embedding_forward";
    rules.here(op, "ids", ids);
    rules.here(op, "table", table);
    rules.here(op, "y", y);
    require_dtype(op, "ids", ids, DType::i64);
    rules.floating(op, "table", table);
    require_same_dtype(op, "table", table, "y", y);
    if (table.ndim() != 2) fail(op, "expects table (V, C), got " + desc(table));
    const EmbeddingDims d = embedding_dims(ids, table);
    if (y.numel() != d.N * d.C || y.dim(-1) != d.C)
        fail(op, "y " + desc(y) + " must hold ids " + desc(ids) + " x " + std::to_string(d.C) + " values");
    return d;
}

EmbeddingDims check_embedding_backward(const TensorRules& rules, const Tensor& ids, const Tensor& dy,
                                       const Tensor& dtable) {
    const char* op = "embedding_backward";
    rules.here(op, "ids", ids);
    rules.here(op, "dy", dy);
    rules.here(op, "dtable", dtable);
    require_dtype(op, "ids", ids, DType::i64);
    rules.floating(op, "dy", dy);
    rules.floating(op, "dtable", dtable);
    if (dtable.ndim() != 2) fail(op, "expects dtable (V, C), got " + desc(dtable));
    const EmbeddingDims d{dtable.dim(0), dtable.dim(1), ids.numel()};
    if (dy.numel() != d.N * d.C || dy.dim(-1) != d.C)
        fail(op, "dy " + desc(dy) + " must hold ids " + desc(ids) + " x " + std::to_string(d.C) + " values");
    return d;
}

RowsCols check_layernorm_forward(const TensorRules& rules, const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& y, const Tensor& mean, const Tensor& rstd) {
    const char* op = "layernorm_forward";
    rules.here(op, "x", x);
    rules.here(op, "gamma", gamma);
    rules.here(op, "y", y);
    rules.here(op, "mean", mean);
    rules.here(op, "rstd", rstd);
    if (beta.defined()) rules.here(op, "beta", beta);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    rules.floating(op, "x", x);
    rules.floating(op, "gamma", gamma);
    if (beta.defined()) rules.floating(op, "beta", beta);
    const RowsCols rc = rows_cols(op, x);
    if (gamma.numel() != rc.C)
        fail(op, "gamma " + desc(gamma) + " must have shape (" + std::to_string(rc.C) + ") for x " + desc(x));
    if (beta.defined() && beta.numel() != rc.C)
        fail(op, "beta " + desc(beta) + " must have shape (" + std::to_string(rc.C) + ")");
    require_dtype(op, "mean", mean, DType::f32);
    require_dtype(op, "rstd", rstd, DType::f32);
    if (mean.numel() != rc.R || rstd.numel() != rc.R)
        fail(op, "mean " + desc(mean) + " and rstd " + desc(rstd) + " must hold one value per row (" +
                     std::to_string(rc.R) + ") of x " + desc(x));
    return rc;
}

RowsCols check_layernorm_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                  const Tensor& mean, const Tensor& rstd, const Tensor& dx, const Tensor& dgamma,
                                  const Tensor& dbeta) {
    const char* op = "layernorm_backward";
    rules.here(op, "x", x);
    rules.here(op, "dy", dy);
    rules.here(op, "gamma", gamma);
    rules.here(op, "mean", mean);
    rules.here(op, "rstd", rstd);
    rules.here(op, "dx", dx);
    rules.here(op, "dgamma", dgamma);
    if (dbeta.defined()) rules.here(op, "dbeta", dbeta);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    rules.floating(op, "x", x);
    rules.floating(op, "gamma", gamma);
    rules.floating(op, "dgamma", dgamma);
    if (dbeta.defined()) rules.floating(op, "dbeta", dbeta);
    const RowsCols rc = rows_cols(op, x);
    if (gamma.numel() != rc.C || dgamma.numel() != rc.C || (dbeta.defined() && dbeta.numel() != rc.C))
        fail(op, "gamma " + desc(gamma) + ", dgamma " + desc(dgamma) + " and dbeta " + desc(dbeta) +
                     " must have shape (" + std::to_string(rc.C) + ")");
    require_dtype(op, "mean", mean, DType::f32);
    require_dtype(op, "rstd", rstd, DType::f32);
    if (mean.numel() != rc.R || rstd.numel() != rc.R) fail(op, "mean and rstd must hold one value per row of x " + desc(x));
    return rc;
}

void check_gelu_forward(const TensorRules& rules, const Tensor& x, const Tensor& y) {
    const char* op = "gelu_tanh_forward";
    rules.here(op, "x", x);
    rules.here(op, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    rules.floating(op, "x", x);
}

void check_gelu_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& dx) {
    const char* op = "gelu_tanh_backward";
    rules.here(op, "x", x);
    rules.here(op, "dy", dy);
    rules.here(op, "dx", dx);
    require_same_shape(op, "x", x, "dy", dy);
    require_same_shape(op, "x", x, "dx", dx);
    require_same_dtype(op, "x", x, "dy", dy);
    require_same_dtype(op, "x", x, "dx", dx);
    rules.floating(op, "x", x);
}

VocabDims check_cross_entropy(const TensorRules& rules, const Tensor& logits, const Tensor& targets) {
    const char* op = "cross_entropy_inplace";
    rules.here(op, "logits", logits);
    rules.here(op, "targets", targets);
    rules.floating(op, "logits", logits);
    require_dtype(op, "targets", targets, DType::i64);
    if (logits.ndim() != 2) fail(op, "expects logits (N, V), got " + desc(logits));
    const VocabDims d{logits.dim(0), logits.dim(1)};
    if (targets.numel() != d.N)
        fail(op, "targets " + desc(targets) + " must have " + std::to_string(d.N) + " values for logits " + desc(logits));
    if (d.V <= 0) fail(op, "logits " + desc(logits) + " has an empty vocabulary");
    return d;
}

void check_copy_rows(const TensorRules& rules, const Tensor& src, std::int64_t src_row, const Tensor& dst,
                     std::int64_t dst_row, std::int64_t rows) {
    const char* op = "copy_rows";
    rules.here(op, "src", src);
    rules.here(op, "dst", dst);
    require_same_dtype(op, "src", src, "dst", dst);
    if (src.ndim() != 3 || dst.ndim() != 3 || src.dim(2) != dst.dim(2) || (src.dim(0) != dst.dim(0) && src.dim(0) != 1))
        fail(op, "expects src (N or 1, S, C) and dst (N, D, C), got src " + desc(src) + ", dst " + desc(dst));
    if (rows < 0 || src_row < 0 || dst_row < 0 || src_row > src.dim(1) - rows || dst_row > dst.dim(1) - rows)
        fail(op, "rows [" + std::to_string(src_row) + ", " + std::to_string(src_row + rows) + ") of src " + desc(src) +
                     " to rows [" + std::to_string(dst_row) + ", " + std::to_string(dst_row + rows) + ") of dst " +
                     desc(dst) + " are out of range");
}

void check_transpose_last2(const TensorRules& rules, const Tensor& x, const Tensor& y) {
    const char* op = "transpose_last2";
    rules.here(op, "x", x);
    rules.here(op, "y", y);
    require_same_dtype(op, "x", x, "y", y);
    if (x.ndim() != 3 || y.ndim() != 3 || y.dim(0) != x.dim(0) || y.dim(1) != x.dim(2) || y.dim(2) != x.dim(1))
        fail(op, "expects x (N, A, B) and y (N, B, A), got x " + desc(x) + ", y " + desc(y));
}

void check_dequantize(const TensorRules& rules, const Tensor& packed, int bits, std::int64_t group, const Tensor& w) {
    const char* op = "dequantize";
    rules.here(op, "packed", packed);
    rules.here(op, "w", w);
    require_dtype(op, "packed", packed, DType::u8);
    rules.floating(op, "w", w);
    if (!quantized_format_known(bits)) fail(op, "takes int8, int4 or nf4, got code " + std::to_string(bits));
    if (group < 1) fail(op, "needs a group of at least 1 value, got " + std::to_string(group));
    if (w.ndim() != 2) fail(op, "expects w (rows, cols), got " + desc(w));
    if (packed.nbytes() < quantized_bytes(w.dim(0), w.dim(1), bits, group))
        fail(op, "packed " + desc(packed) + " is smaller than " + std::to_string(quantized_bytes(w.dim(0), w.dim(1), bits, group)) +
                     " bytes, what w " + desc(w) + " takes at " + std::to_string(bits) + " bits");
}

AttnDims attention_dims(const Tensor& qkv, const AttentionParams& p) {
    const std::int64_t H = p.heads, KV = p.kv_heads == 0 ? p.heads : p.kv_heads;
    const std::int64_t parts = H + 2 * KV;  // head-sized columns of qkv per token
    return {qkv.dim(0), qkv.dim(1), qkv.dim(2) / parts * H, H, qkv.dim(2) / parts, KV};
}

AttnDims check_attention(const char* op, const TensorRules& rules, const Tensor& qkv, const Tensor& out,
                         const Tensor& lse, const AttentionParams& p) {
    rules.here(op, "qkv", qkv);
    rules.here(op, "out", out);
    rules.here(op, "lse", lse);
    rules.floating(op, "qkv", qkv);
    require_same_dtype(op, "qkv", qkv, "out", out);
    require_dtype(op, "lse", lse, DType::f32);
    const std::int64_t H = p.heads, KV = p.kv_heads == 0 ? p.heads : p.kv_heads;
    if (H < 1 || KV < 1 || H % KV != 0)
        fail(op, std::to_string(H) + " query heads cannot share " + std::to_string(KV) +
                     " key/value heads: kv_heads must divide heads");
    const std::int64_t parts = H + 2 * KV;  // head-sized columns of qkv per token
    if (KV == H) {  // multi-head attention: (B, T, 3C)
        if (qkv.ndim() != 3 || qkv.dim(2) % 3 != 0) fail(op, "expects qkv (B, T, 3C), got " + desc(qkv));
        if (qkv.dim(2) / 3 % H != 0)
            fail(op, "width " + std::to_string(qkv.dim(2) / 3) + " of qkv " + desc(qkv) + " is not divisible by " +
                         std::to_string(p.heads) + " heads");
    } else if (qkv.ndim() != 3 || qkv.dim(2) % parts != 0) {
        fail(op, "expects qkv (B, T, (H + 2 KV) D) = (B, T, " + std::to_string(parts) + " D) for " + std::to_string(H) +
                     " query and " + std::to_string(KV) + " key/value heads, got " + desc(qkv));
    }
    const AttnDims d = attention_dims(qkv, p);
    if (out.ndim() != 3 || out.dim(0) != d.B || out.dim(1) != d.T || out.dim(2) != d.C)
        fail(op, "out " + desc(out) + " must be " + shape_str({d.B, d.T, d.C}) + " for qkv " + desc(qkv));
    if (lse.ndim() != 3 || lse.dim(0) != d.B || lse.dim(1) != d.H || lse.dim(2) != d.T)
        fail(op, "lse " + desc(lse) + " must be " + shape_str({d.B, d.H, d.T}) + " f32 for qkv " + desc(qkv));
    if (!(p.dropout >= 0.0f && p.dropout < 1.0f)) fail(op, "dropout " + std::to_string(p.dropout) + " must be in [0, 1)");
    return d;
}

AttnDims check_attention_backward(const TensorRules& rules, const Tensor& qkv, const Tensor& out, const Tensor& lse,
                                  const Tensor& dout, const Tensor& dqkv, const AttentionParams& p) {
    const char* op = "attention_backward";
    const AttnDims d = check_attention(op, rules, qkv, out, lse, p);
    rules.here(op, "dout", dout);
    rules.here(op, "dqkv", dqkv);
    require_same_shape(op, "out", out, "dout", dout);
    require_same_shape(op, "qkv", qkv, "dqkv", dqkv);
    require_same_dtype(op, "qkv", qkv, "dout", dout);
    require_same_dtype(op, "qkv", qkv, "dqkv", dqkv);
    return d;
}

void check_workspace(const char* op, const TensorRules& rules, const Tensor& workspace, std::size_t need) {
    if (!workspace.defined() || workspace.nbytes() < need)
        fail(op, "workspace " + desc(workspace) + " is smaller than the " + std::to_string(need) +
                     " bytes attention_workspace_bytes asks for");
    rules.here(op, "workspace", workspace);
}

RowsCols check_rmsnorm_forward(const TensorRules& rules, const Tensor& x, const Tensor& gamma, const Tensor& y,
                               const Tensor& rstd) {
    const char* op = "rmsnorm_forward";
    rules.here(op, "x", x);
    rules.here(op, "gamma", gamma);
    rules.here(op, "y", y);
    rules.here(op, "rstd", rstd);
    rules.floating(op, "x", x);
    rules.floating(op, "gamma", gamma);
    require_same_dtype(op, "x", x, "y", y);
    require_same_shape(op, "x", x, "y", y);
    require_dtype(op, "rstd", rstd, DType::f32);
    const RowsCols rc = rows_cols(op, x);
    if (gamma.numel() != rc.C) fail(op, "gamma " + desc(gamma) + " must hold " + std::to_string(rc.C) + " values for x " + desc(x));
    if (rstd.numel() != rc.R) fail(op, "rstd " + desc(rstd) + " must hold one value per row (" + std::to_string(rc.R) + ") of x " + desc(x));
    return rc;
}

RowsCols check_rmsnorm_backward(const TensorRules& rules, const Tensor& x, const Tensor& dy, const Tensor& gamma,
                                const Tensor& rstd, const Tensor& dx, const Tensor& dgamma) {
    const char* op = "rmsnorm_backward";
    const RowsCols rc = check_rmsnorm_forward(rules, x, gamma, dy, rstd);
    rules.here(op, "dx", dx);
    rules.here(op, "dgamma", dgamma);
    require_same_dtype(op, "x", x, "dx", dx);
    require_same_shape(op, "x", x, "dx", dx);
    rules.floating(op, "dgamma", dgamma);
    if (dgamma.numel() != rc.C) fail(op, "dgamma " + desc(dgamma) + " must hold " + std::to_string(rc.C) + " values");
    return rc;
}

AttnDims check_attention_cached(const TensorRules& rules, const Tensor& qkv, const Tensor& k_cache,
                                const Tensor& v_cache, std::int64_t pos, const AttentionParams& p, const Tensor& out) {
    const char* op = "attention_cached";
    rules.here(op, "k_cache", k_cache);
    rules.here(op, "v_cache", v_cache);
    if (qkv.ndim() != 3 || qkv.dim(0) != 1) fail(op, "expects qkv (1, n, ...) of one sequence, got " + desc(qkv));
    rules.here(op, "qkv", qkv);
    rules.here(op, "out", out);
    rules.floating(op, "qkv", qkv);
    require_same_dtype(op, "qkv", qkv, "out", out);
    const std::int64_t H = p.heads, KV = p.kv_heads == 0 ? p.heads : p.kv_heads;
    if (H < 1 || KV < 1 || H % KV != 0 || qkv.dim(2) % (H + 2 * KV) != 0)
        fail(op, "expects qkv (1, n, (H + 2 KV) D) for " + std::to_string(H) + " query and " + std::to_string(KV) +
                     " key/value heads, got " + desc(qkv));
    const AttnDims d = attention_dims(qkv, p);
    if (out.ndim() != 3 || out.dim(0) != 1 || out.dim(1) != d.T || out.dim(2) != d.C)
        fail(op, "out " + desc(out) + " must be " + shape_str({1, d.T, d.C}) + " for qkv " + desc(qkv));
    if (!p.causal || p.dropout != 0.0f) fail(op, "decodes causal attention without dropout only");
    require_same_dtype(op, "qkv", qkv, "k_cache", k_cache);
    require_same_dtype(op, "qkv", qkv, "v_cache", v_cache);
    if (k_cache.ndim() != 3 || k_cache.dim(0) != d.KV || k_cache.dim(2) != d.D || v_cache.shape() != k_cache.shape())
        fail(op, "k_cache " + desc(k_cache) + " and v_cache " + desc(v_cache) + " must both be (" +
                     std::to_string(d.KV) + ", L, " + std::to_string(d.D) + ") for qkv " + desc(qkv));
    if (pos < 0 || pos + d.T > k_cache.dim(1))
        fail(op, "positions " + std::to_string(pos) + " .. " + std::to_string(pos + d.T - 1) +
                     " do not fit a cache of " + std::to_string(k_cache.dim(1)) + " positions");
    return d;
}

RopeDims check_rope(const TensorRules& rules, const Tensor& x, int heads, const RopeParams& p) {
    const char* op = "rope_apply";
    rules.here(op, "x", x);
    rules.floating(op, "x", x);
    if (x.ndim() != 3 || heads < 1 || x.dim(2) % heads != 0 || (x.dim(2) / heads) % 2 != 0)
        fail(op, "expects x (B, T, heads * D) with an even head size D, got " + desc(x) + " for " +
                     std::to_string(heads) + " heads");
    if (!(p.theta > 1.0) || !(p.factor >= 0.0) ||
        (p.factor > 0 && !(p.high_freq_factor > p.low_freq_factor && p.low_freq_factor > 0 && p.original_max_positions > 0)))
        fail(op, "rope_theta must exceed 1 and a llama3 scaling needs factor > 0, 0 < low_freq_factor < high_freq_factor "
                 "and original_max_position_embeddings > 0");
    return rope_dims(x, heads);
}

void check_swiglu(const char* op, const TensorRules& rules, const Tensor& gate, const Tensor& up, const Tensor& a,
                  const Tensor& b) {
    rules.here(op, "gate", gate);
    rules.here(op, "up", up);
    rules.floating(op, "gate", gate);
    for (const Tensor* t : {&up, &a, &b}) {
        if (!t->defined()) continue;
        rules.here(op, "tensor", *t);
        require_same_dtype(op, "gate", gate, "tensor", *t);
        require_same_shape(op, "gate", gate, "tensor", *t);
    }
}

}  // namespace hr::ops
