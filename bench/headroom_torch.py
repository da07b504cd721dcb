"""Helpers shared by the PyTorch peer scripts: build the torch.nn equivalent of a Headroom model spec
(same state_dict names and layouts), read safetensors without the safetensors package, read IDX data.
Runs with Debian's python3-torch (/usr/bin/python3)."""
import gzip
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Residual(nn.Module):
    """output = body(x) + shortcut(x); state_dict names "body.N...", "shortcut.N..." as in Headroom."""

    def __init__(self, body, shortcut=None):
        super().__init__()
        self.body = body
        if shortcut is not None:
            self.shortcut = shortcut

    def forward(self, x):
        s = self.shortcut(x) if hasattr(self, "shortcut") else x
        return self.body(x) + s


class LayerNorm(nn.Module):
    """LayerNorm over the last dimension with an optional bias (torch 1.13's nn.LayerNorm has no bias=False)."""

    def __init__(self, dim, eps=1e-5, bias=True):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)


class SelfAttention(nn.Module):
    """nanoGPT's CausalSelfAttention (fused c_attn, c_proj), causal or not."""

    def __init__(self, dim, heads, causal=True, dropout=0.0, bias=True):
        super().__init__()
        self.c_attn = nn.Linear(dim, 3 * dim, bias=bias)
        self.c_proj = nn.Linear(dim, dim, bias=bias)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.heads, self.dim, self.causal = heads, dim, causal

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.dim, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.causal:
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Mlp(nn.Module):
    def __init__(self, dim, hidden, dropout=0.0, bias=True, gelu_tanh=True):
        super().__init__()
        self.c_fc = nn.Linear(dim, hidden, bias=bias)
        self.c_proj = nn.Linear(hidden, dim, bias=bias)
        self.approximate = "tanh" if gelu_tanh else "none"
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate=self.approximate)))


class Block(nn.Module):
    """nanoGPT's Block: x + attn(ln_1(x)), then + mlp(ln_2(x))."""

    def __init__(self, dim, heads, hidden=0, causal=True, dropout=0.0, bias=True, gelu_tanh=True, eps=1e-5):
        super().__init__()
        self.ln_1 = LayerNorm(dim, eps, bias)
        self.attn = SelfAttention(dim, heads, causal, dropout, bias)
        self.ln_2 = LayerNorm(dim, eps, bias)
        self.mlp = Mlp(dim, hidden or 4 * dim, dropout, bias, gelu_tanh)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TokenEmbedding(nn.Embedding):
    pass


class PositionEmbedding(nn.Module):
    def __init__(self, positions, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(positions, dim))

    def forward(self, x):
        return x + self.weight[: x.size(1)]


class LmHead(nn.Module):
    """A bias-free projection to the vocabulary; tied: it holds no parameter (build_model ties it)."""

    def __init__(self, dim, vocab, tied):
        super().__init__()
        self.tied = tied
        if not tied:
            self.weight = nn.Parameter(torch.zeros(vocab, dim))
        self.tied_to = None

    def forward(self, x):
        w = self.tied_to.weight if self.tied else self.weight
        return F.linear(x, w)


class PatchEmbedding(nn.Module):
    def __init__(self, channels, dim, patch):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim, channels, patch, patch))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.patch = patch

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, stride=self.patch).flatten(2).transpose(1, 2)


class ClassToken(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1, 1, dim))

    def forward(self, x):
        return torch.cat([self.weight.expand(x.size(0), -1, -1), x], dim=1)


class ClassTokenPool(nn.Module):
    def forward(self, x):
        return x[:, 0]


def _layer(spec):
    t = spec["type"]
    if t == "token_embedding":
        return TokenEmbedding(spec["vocab_size"], spec["dim"])
    if t == "position_embedding":
        return PositionEmbedding(spec["max_positions"], spec["dim"])
    if t == "layernorm":
        return LayerNorm(spec["dim"], spec.get("eps", 1e-5), spec.get("bias", True))
    if t == "self_attention":
        return SelfAttention(spec["dim"], spec["heads"], spec.get("causal", True), spec.get("dropout", 0.0),
                             spec.get("bias", True))
    if t == "mlp":
        return Mlp(spec["dim"], spec.get("hidden", 0) or 4 * spec["dim"], spec.get("dropout", 0.0),
                   spec.get("bias", True), spec.get("gelu_tanh", True))
    if t == "transformer_block":
        return Block(spec["dim"], spec["heads"], spec.get("hidden", 0), spec.get("causal", True),
                     spec.get("dropout", 0.0), spec.get("bias", True), spec.get("gelu_tanh", True),
                     spec.get("eps", 1e-5))
    if t == "lm_head":
        return LmHead(spec["dim"], spec["vocab_size"], spec.get("tied", True))
    if t == "patch_embedding":
        return PatchEmbedding(spec["in_channels"], spec["dim"], spec["patch_size"])
    if t == "class_token":
        return ClassToken(spec["dim"])
    if t == "class_token_pool":
        return ClassTokenPool()
    if t == "conv2d":
        return nn.Conv2d(spec["in_channels"], spec["out_channels"], spec["kernel_size"], stride=spec.get("stride", 1),
                         padding=spec.get("padding", 0), dilation=spec.get("dilation", 1), bias=spec.get("bias", True))
    if t == "linear":
        return nn.Linear(spec["in_features"], spec["out_features"], bias=spec.get("bias", True))
    if t in ("maxpool2d", "avgpool2d"):
        k = spec.get("kernel_size", 2)
        s = spec.get("stride", 0) or k
        p = spec.get("padding", 0)
        return nn.MaxPool2d(k, s, p) if t == "maxpool2d" else nn.AvgPool2d(k, s, p)
    if t == "relu":
        return nn.ReLU()
    if t == "leaky_relu":
        return nn.LeakyReLU(spec.get("negative_slope", 0.01))
    if t == "tanh":
        return nn.Tanh()
    if t == "sigmoid":
        return nn.Sigmoid()
    if t == "gelu":
        return nn.GELU(approximate="tanh" if spec.get("tanh", False) else "none")
    if t == "dropout":
        return nn.Dropout(spec.get("p", 0.5))
    if t == "flatten":
        return nn.Flatten()
    if t == "batchnorm2d":
        return nn.BatchNorm2d(spec["num_features"], eps=spec.get("eps", 1e-5), momentum=spec.get("momentum", 0.1))
    if t == "residual":
        body = nn.Sequential(*[_layer(s) for s in spec["body"]])
        sc = nn.Sequential(*[_layer(s) for s in spec["shortcut"]]) if spec.get("shortcut") else None
        return Residual(body, sc)
    raise ValueError("unknown layer type " + t)


def build_model(spec):
    """torch.nn.Sequential equivalent of a Headroom model spec (dict). (GPT-layout specs load into
    nanoGPT's GPT instead: bench/gpt_interop.py.)"""
    m = nn.Sequential(*[_layer(s) for s in spec["layers"]])
    for layer in m:
        if isinstance(layer, LmHead) and layer.tied:
            object.__setattr__(layer, "tied_to", m[0])  # not a submodule: no second state_dict entry
    return m


_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I32": np.int32, "I64": np.int64, "U8": np.uint8}


def read_safetensors(path):
    """Returns (dict name -> torch.Tensor, metadata dict)."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    meta = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        b, e = info["data_offsets"]
        if info["dtype"] == "BF16":
            raw = np.frombuffer(data[base + b:base + e], dtype=np.uint16).astype(np.uint32) << 16
            arr = raw.view(np.float32)
        else:
            arr = np.frombuffer(data[base + b:base + e], dtype=_DTYPES[info["dtype"]])
        out[name] = torch.from_numpy(arr.copy().reshape(info["shape"]))
    return out, meta


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def find_idx(folder, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(folder, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(folder, stem))


def load_fashion_mnist(folder="/usr/share/datasets/fashion-mnist", mean=0.2860, std=0.3530):
    """(train_x, train_y, test_x, test_y) as torch tensors, normalised like Headroom (and torchvision)."""
    def images(stem):
        x = torch.from_numpy(read_idx(find_idx(folder, stem)).copy()).float().div(255).sub_(mean).div_(std)
        return x.unsqueeze(1)

    def labels(stem):
        return torch.from_numpy(read_idx(find_idx(folder, stem)).astype(np.int64))

    return (images("train-images-idx3-ubyte"), labels("train-labels-idx1-ubyte"),
            images("t10k-images-idx3-ubyte"), labels("t10k-labels-idx1-ubyte"))
