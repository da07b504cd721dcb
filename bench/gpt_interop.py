"""Headroom's GPT weights and nanoGPT / Hugging Face GPT-2 (tests/slow/test_gpt_interop.cpp runs this).

nanoGPT's model (Karpathy, model.py) is written out below with the same module names, so its
state_dict names are nanoGPT's: transformer.wte / .wpe / .h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2,
mlp.c_fc, mlp.c_proj} / .ln_f, lm_head (tied to wte). The causal mask is computed, not registered as a
buffer, so load_state_dict(strict=True) sees exactly the parameters.

usage:
  gpt_interop.py logits WEIGHTS TOKENS.i64 N T OURS.f32
      load a Headroom model.safetensors with strict=True, compute the logits of the (N, T) tokens and
      compare with Headroom's; prints {"loaded": K, "max_abs_diff": D}, exit 1 when D >= 1e-5
  gpt_interop.py train WEIGHTS TOKENS.i64 N T STEPS OUT.safetensors OUT_LOGITS.f32
      train STEPS AdamW steps in PyTorch on the (N, T + 1) tokens (next-token targets), save the
      state_dict (nanoGPT names, no Headroom metadata) and the trained model's logits of the first T
      tokens of every row; prints {"losses": [...]}
  gpt_interop.py hf WEIGHTS OUT.safetensors
      rewrite a Headroom file as Hugging Face's GPT2Model stores it: no "transformer." prefix, Conv1D
      weights [in, out], attention-mask buffers, no lm_head
Runs with Debian's python3-torch (/usr/bin/python3)."""
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from headroom_torch import read_safetensors  # noqa: E402


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, bias, dropout):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.ones(T, T, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, n_embd, hidden, bias, dropout):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, hidden, bias=bias)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(hidden, n_embd, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, hidden, bias, dropout, eps):
        super().__init__()
        self.ln_1 = LayerNorm(n_embd, bias, eps)
        self.attn = CausalSelfAttention(n_embd, n_head, bias, dropout)
        self.ln_2 = LayerNorm(n_embd, bias, eps)
        self.mlp = MLP(n_embd, hidden, bias, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block_size, n_layer, n_head, n_embd, hidden, bias=True, dropout=0.0, eps=1e-5):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, hidden, bias, dropout, eps) for _ in range(n_layer)]),
            ln_f=LayerNorm(n_embd, bias, eps),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))  # logits at every position


def gpt_from_spec(spec):
    layers = spec["layers"]
    blocks = [l for l in layers if l["type"] == "transformer_block"]
    wte = layers[0]
    wpe = next(l for l in layers if l["type"] == "position_embedding")
    b0 = blocks[0]
    dim = wte["dim"]
    head = next(l for l in layers if l["type"] == "lm_head")
    assert head.get("tied", True), "this helper builds nanoGPT's tied GPT"
    return GPT(wte["vocab_size"], wpe["max_positions"], len(blocks), b0["heads"], dim, b0.get("hidden", 0) or 4 * dim,
               b0.get("bias", True), b0.get("dropout", 0.0), b0.get("eps", 1e-5))


def write_safetensors(path, tensors, metadata=None):
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        a = t.detach().contiguous().cpu().numpy()
        dtype = {np.float32: "F32", np.float64: "F64", np.int64: "I64", np.uint8: "U8", np.bool_: "BOOL"}[a.dtype.type]
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        chunks.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for c in chunks:
            f.write(c)


def load(path):
    tensors, meta = read_safetensors(path)
    model = gpt_from_spec(json.loads(meta["model_spec"]))
    model.load_state_dict(tensors, strict=True)
    return model, tensors, meta


def main():
    mode = sys.argv[1]
    torch.manual_seed(0)
    if mode == "logits":
        path, tok, n, t, ours = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
        model, tensors, meta = load(path)
        model.eval()
        idx = torch.from_numpy(np.fromfile(tok, dtype=np.int64).reshape(n, t))
        with torch.no_grad():
            theirs = model(idx).numpy()
        mine = np.fromfile(ours, dtype=np.float32).reshape(theirs.shape)
        diff = float(np.abs(theirs - mine).max())
        print(json.dumps({"loaded": len(tensors), "max_abs_diff": diff}))
        sys.exit(0 if diff < 1e-5 else 1)
    if mode == "train":
        path, tok, n, t, steps, out, out_logits = sys.argv[2:9]
        n, t, steps = int(n), int(t), int(steps)
        model, _, _ = load(path)
        data = torch.from_numpy(np.fromfile(tok, dtype=np.int64).reshape(n, t + 1))
        x, y = data[:, :t], data[:, 1:]
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
        model.train()
        losses = []
        for _ in range(steps):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            model(x).numpy().astype(np.float32).tofile(out_logits)
        write_safetensors(out, model.state_dict(), {"format": "pt"})
        print(json.dumps({"losses": losses}))
        return
    if mode == "hf":
        path, out = sys.argv[2], sys.argv[3]
        tensors, meta = read_safetensors(path)
        spec = json.loads(meta["model_spec"])
        t = next(l for l in spec["layers"] if l["type"] == "position_embedding")["max_positions"]
        hf = {}
        for name, v in tensors.items():
            if name == "lm_head.weight":
                continue  # GPT2Model has no head (GPT2LMHeadModel ties it)
            key = name[len("transformer."):]
            if any(key.endswith(s) for s in (".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight",
                                             ".mlp.c_proj.weight")):
                v = v.t().contiguous()  # Conv1D: [in, out]
            hf[key] = v
            if key.endswith(".ln_1.weight"):  # the mask buffers Hugging Face files carry
                layer = key[: -len(".ln_1.weight")]
                hf[layer + ".attn.bias"] = torch.ones(t, t).tril().view(1, 1, t, t)
                hf[layer + ".attn.masked_bias"] = torch.tensor(-1e4)
        write_safetensors(out, hf, {"format": "pt"})
        print(json.dumps({"written": len(hf)}))
        return
    raise SystemExit("unknown mode " + mode)


if __name__ == "__main__":
    main()
