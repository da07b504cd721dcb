"""The --prune/--quantize what-if of a language model, done by PyTorch (tests/slow/test_lm_init_from.cpp runs this).

usage:
  lm_what_if.py WEIGHTS TEXT SEQ PRUNE:BITS [PRUNE:BITS ...]
      WEIGHTS: a Headroom GPT file (its model_spec metadata gives nanoGPT's model, bench/gpt_interop.py).
      For each PRUNE:BITS (e.g. 0.5:4, 0:8) a fresh copy of the model is pruned with PyTorch's own
      torch.nn.utils.prune.l1_unstructured (round(PRUNE x n) values of smallest magnitude set to zero, per
      tensor) and quantised (symmetric absmax, round half to even: int8 a scale per row, int4 a scale per 64
      values of a row; BITS 0: none), on every parameter with two or more dimensions (the tied embedding
      and head once), then scored on TEXT's validation windows as Headroom reads them (every window, byte
      tokens: lm_init_from.py's split and windows).
      Prints {"before": {"loss": L, "accuracy": A}, "0.5:4": {...}, ..., "tokens": N}: the mean cross-entropy
      per token and the share of next tokens predicted (argmax).
Runs with Debian's python3-torch (/usr/bin/python3)."""
import json
import os
import sys

import torch
import torch.nn.functional as F
import torch.nn.utils.prune as prune

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gpt_interop import load  # noqa: E402
from lm_init_from import split, windows  # noqa: E402


def quantize(w, bits, group=64):
    rows = w.reshape(w.shape[0], -1)
    qmax = 127.0 if bits == 8 else 7.0
    g = rows.shape[1] if bits == 8 else group
    out = torch.empty_like(rows)
    for c0 in range(0, rows.shape[1], g):
        blk = rows[:, c0:c0 + g]
        s = blk.abs().amax(dim=1, keepdim=True) / qmax
        q = torch.where(s > 0, torch.round(blk / torch.where(s > 0, s, torch.ones_like(s))).clamp(-qmax, qmax),
                        torch.zeros_like(blk))
        out[:, c0:c0 + g] = q * s
    return out.reshape(w.shape)


def transform(model, amount, bits):
    seen = set()
    with torch.no_grad():
        for module in list(model.modules()):
            for name, p in list(module.named_parameters(recurse=False)):
                if p.dim() < 2 or id(p) in seen:
                    continue
                seen.add(id(p))
                if amount > 0:
                    prune.l1_unstructured(module, name, amount=amount)
                    prune.remove(module, name)
                    p = getattr(module, name)
                if bits:
                    p.copy_(quantize(p, bits))
    return len(seen)


def score(model, vx, vy):
    model.eval()
    with torch.no_grad():
        logits = model(vx).double()
        flat = logits.reshape(-1, logits.size(-1))
        loss = F.cross_entropy(flat, vy.reshape(-1)).item()
        accuracy = (flat.argmax(1) == vy.reshape(-1)).double().mean().item()
    return {"loss": loss, "accuracy": accuracy}


def main():
    path, text, seq = sys.argv[1], sys.argv[2], int(sys.argv[3])
    _, valid = split(open(text, "rb").read())
    valid = torch.tensor(list(valid), dtype=torch.long)
    vx, vy = windows(valid, seq, (len(valid) - 1) // seq)
    model, _, _ = load(path)
    out = {"before": score(model, vx, vy), "tokens": vy.numel()}
    for combo in sys.argv[4:]:
        amount, bits = combo.split(":")
        model, _, _ = load(path)
        out[combo] = score(model, vx, vy) if transform(model, float(amount), int(bits)) else None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
