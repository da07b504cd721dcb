"""Helpers shared by the PyTorch peer scripts: build the torch.nn equivalent of a Headroom model spec
(same state_dict names and layouts), read safetensors without the safetensors package, read IDX data.
Runs with Debian's python3-torch (/usr/bin/python3)."""
import gzip
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn


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


def _layer(spec):
    t = spec["type"]
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
        return nn.GELU()
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
    """torch.nn.Sequential equivalent of a Headroom model spec (dict)."""
    return nn.Sequential(*[_layer(s) for s in spec["layers"]])


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
