# The outside world of tests/unit/test_hf_round_trip.cpp: a small LLaMA written as Hugging Face writes it,
# and PyTorch 1.13's forward, loss and one SGD step of it in plain torch ops (no transformers here).
#
#   hf_round_trip.py make DIR      writes DIR/base: config.json, two shards model-0000K-of-00002.safetensors
#                                  (the embedding in bf16, the rest f32) and model.safetensors.index.json,
#                                  with plain Python; DIR/batch.json (tokens, targets); DIR/ref.json: the loss
#                                  and every weight after one SGD step (lr 0.5), computed in float64 from the
#                                  weights as stored (the embedding's bf16 values widened)
#   hf_round_trip.py check DIR OUT reads the folder Headroom exported (OUT: config.json, shards, index) with
#                                  plain Python and prints the largest difference from ref.json's weights, and
#                                  whether config.json describes the same model
import json
import math
import os
import struct
import sys

import torch

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": 32, "hidden_size": 16,
    "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
    "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
    "tie_word_embeddings": False, "torch_dtype": "float32", "attention_bias": False,
}
N, T, LR = 2, 8, 0.5


def names_and_shapes(c):
    C, F, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    D = C // c["num_attention_heads"]
    KV = c["num_key_value_heads"] * D
    out = [("model.embed_tokens.weight", (V, C))]
    for k in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % k
        out += [(p + "input_layernorm.weight", (C,)), (p + "self_attn.q_proj.weight", (C, C)),
                (p + "self_attn.k_proj.weight", (KV, C)), (p + "self_attn.v_proj.weight", (KV, C)),
                (p + "self_attn.o_proj.weight", (C, C)), (p + "post_attention_layernorm.weight", (C,)),
                (p + "mlp.gate_proj.weight", (F, C)), (p + "mlp.up_proj.weight", (F, C)),
                (p + "mlp.down_proj.weight", (C, F))]
    out += [("model.norm.weight", (C,)), ("lm_head.weight", (V, C))]
    return out


def write_safetensors(path, tensors):  # [(name, tensor)], the format by hand
    header, blobs, off = {}, [], 0
    for name, t in tensors:
        if t.dtype == torch.bfloat16:
            raw, dt = t.contiguous().view(torch.int16).numpy().tobytes(), "BF16"
        else:
            raw, dt = t.contiguous().float().numpy().tobytes(), "F32"
        header[name] = {"dtype": dt, "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, e2 = e["data_offsets"]
        raw = data[8 + n + b:8 + n + e2]
        if e["dtype"] == "F32":
            t = torch.frombuffer(bytearray(raw), dtype=torch.float32)
        elif e["dtype"] == "BF16":
            t = torch.frombuffer(bytearray(raw), dtype=torch.int16).view(torch.bfloat16).float()
        else:
            raise SystemExit("unexpected dtype " + e["dtype"])
        out[name] = t.reshape(e["shape"]).double()
    return out


def rms(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def forward_loss(W, c, x, y):
    C, H, KVH = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    D, eps = C // H, c["rms_norm_eps"]
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, D, 2, dtype=torch.float64) / D))
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    h = W["model.embed_tokens.weight"][x]  # (N, T, C)
    mask = torch.full((T, T), float("-inf"), dtype=torch.float64).triu(1)
    for k in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % k
        n1 = rms(h, W[p + "input_layernorm.weight"], eps)
        q = (n1 @ W[p + "self_attn.q_proj.weight"].T).view(N, T, H, D).transpose(1, 2)
        kk = (n1 @ W[p + "self_attn.k_proj.weight"].T).view(N, T, KVH, D).transpose(1, 2)
        v = (n1 @ W[p + "self_attn.v_proj.weight"].T).view(N, T, KVH, D).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        kk = kk * cos + rotate_half(kk) * sin
        kk = kk.repeat_interleave(H // KVH, dim=1)
        v = v.repeat_interleave(H // KVH, dim=1)
        a = torch.softmax(q @ kk.transpose(-1, -2) / math.sqrt(D) + mask, dim=-1) @ v
        h = h + a.transpose(1, 2).reshape(N, T, C) @ W[p + "self_attn.o_proj.weight"].T
        n2 = rms(h, W[p + "post_attention_layernorm.weight"], eps)
        g = n2 @ W[p + "mlp.gate_proj.weight"].T
        u = n2 @ W[p + "mlp.up_proj.weight"].T
        h = h + (g * torch.sigmoid(g) * u) @ W[p + "mlp.down_proj.weight"].T
    logits = rms(h, W["model.norm.weight"], eps) @ W["lm_head.weight"].T
    return torch.nn.functional.cross_entropy(logits.reshape(N * T, -1), y.reshape(-1))


def make(d):
    torch.manual_seed(46)
    base = os.path.join(d, "base")
    os.makedirs(base, exist_ok=True)
    with open(os.path.join(base, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)
    tensors = []
    for name, shape in names_and_shapes(CONFIG):
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            t = 1.0 + 0.1 * torch.randn(shape)
        else:
            t = 0.2 * torch.randn(shape)
        if name == "model.embed_tokens.weight":
            t = t.bfloat16()
        tensors.append((name, t))
    shard1, shard2 = tensors[:6], tensors[6:]
    write_safetensors(os.path.join(base, "model-00001-of-00002.safetensors"), shard1)
    write_safetensors(os.path.join(base, "model-00002-of-00002.safetensors"), shard2)
    wm = {n: "model-00001-of-00002.safetensors" for n, _ in shard1}
    wm.update({n: "model-00002-of-00002.safetensors" for n, _ in shard2})
    with open(os.path.join(base, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": wm}, f, indent=2)
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, CONFIG["vocab_size"], (N, T), generator=g)
    y = torch.randint(0, CONFIG["vocab_size"], (N, T), generator=g)
    with open(os.path.join(d, "batch.json"), "w") as f:
        json.dump({"x": x.reshape(-1).tolist(), "y": y.reshape(-1).tolist(), "n": N, "t": T, "lr": LR}, f)
    W = {n: t.float().double().requires_grad_(True) for n, t in tensors}
    loss = forward_loss(W, CONFIG, x, y)
    loss.backward()
    after = {n: (w - LR * w.grad).detach().reshape(-1).tolist() for n, w in W.items()}
    with open(os.path.join(d, "ref.json"), "w") as f:
        json.dump({"loss": loss.item(), "weights": after}, f)


def check(d, out):
    with open(os.path.join(d, "ref.json")) as f:
        ref = json.load(f)
    with open(os.path.join(out, "config.json")) as f:
        cfg = json.load(f)
    same = all(cfg[k] == CONFIG[k] for k in ("architectures", "vocab_size", "hidden_size", "intermediate_size",
                                             "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                                             "max_position_embeddings", "rope_theta", "tie_word_embeddings"))
    same = same and abs(cfg["rms_norm_eps"] - CONFIG["rms_norm_eps"]) < 1e-12
    with open(os.path.join(out, "model.safetensors.index.json")) as f:
        index = json.load(f)
    W = {}
    for shard in sorted(set(index["weight_map"].values())):
        part = read_safetensors(os.path.join(out, shard))
        for n in part:
            if index["weight_map"][n] != shard:
                raise SystemExit("index places %s elsewhere" % n)
        W.update(part)
    if set(W) != set(ref["weights"]):
        raise SystemExit("tensors differ: %s" % sorted(set(W) ^ set(ref["weights"])))
    worst = max(float((W[n].reshape(-1) - torch.tensor(v, dtype=torch.float64)).abs().max()) for n, v in ref["weights"].items())
    print(json.dumps({"max_abs_diff": worst, "config_same": same, "shards": len(set(index["weight_map"].values()))}))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
