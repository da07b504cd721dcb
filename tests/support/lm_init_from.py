"""--init-from for language models against PyTorch (tests/slow/test_lm_init_from.cpp runs this).

usage:
  lm_init_from.py START.safetensors TEXT SEQ STEPS OUTDIR
      START: a Headroom GPT file; its model_spec metadata gives nanoGPT's model (bench/gpt_interop.py),
      its tensors the initial weights. Trains STEPS AdamW steps (lr 3e-3) in PyTorch on the first 8
      consecutive windows of TEXT's training split (byte tokens), then writes
        OUTDIR/nanogpt.safetensors    model.state_dict(): nanoGPT's names, the tied head twice
        OUTDIR/hf_lmhead.safetensors  as Hugging Face's GPT2LMHeadModel: "transformer." names, Conv1D
                                      weights [in, out], attention-mask buffers, lm_head.weight
        OUTDIR/hf_model.safetensors   as GPT2Model: no prefix, Conv1D [in, out], mask buffers, no head
      and prints {"val_loss": L, "windows": K, "losses": [...]}: L is the mean cross-entropy per token of
      the trained model over TEXT's validation windows as Headroom reads them (core/data/text_data.h: the
      first 90% is for training, cut after the first line break past the mark; validation windows are
      consecutive and non-overlapping, K = (tokens - 1) // SEQ of them, targets shifted by one).
Runs with Debian's python3-torch (/usr/bin/python3)."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from gpt_interop import load, write_safetensors  # noqa: E402

CONV1D = (".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight")


def split(data):
    cut = len(data) * 9 // 10  # ASCII: every byte is a character boundary
    nl = data.find(b"\n", cut)
    if nl != -1 and nl + 1 < len(data):
        cut = nl + 1
    return data[:cut], data[cut:]


def windows(tokens, seq, count):
    x = torch.stack([tokens[k * seq:k * seq + seq] for k in range(count)])
    y = torch.stack([tokens[k * seq + 1:k * seq + seq + 1] for k in range(count)])
    return x, y


def hf(state, t, prefix, head):
    out = {}
    for name, v in state.items():
        if name == "lm_head.weight" and not head:
            continue
        key = name if prefix or not name.startswith("transformer.") else name[len("transformer."):]
        if key.endswith(CONV1D):
            v = v.t().contiguous()
        out[key] = v
        if key.endswith(".ln_1.weight"):
            layer = key[: -len(".ln_1.weight")]
            out[layer + ".attn.bias"] = torch.ones(t, t).tril().view(1, 1, t, t)
            out[layer + ".attn.masked_bias"] = torch.tensor(-1e4)
    return out


def main():
    start, text, seq, steps, outdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    torch.manual_seed(0)
    model, _, meta = load(start)
    spec = json.loads(meta["model_spec"])
    t = next(l for l in spec["layers"] if l["type"] == "position_embedding")["max_positions"]
    train, valid = split(open(text, "rb").read())
    train = torch.tensor(list(train), dtype=torch.long)
    valid = torch.tensor(list(valid), dtype=torch.long)
    x, y = windows(train, seq, 8)
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
    k = (len(valid) - 1) // seq
    vx, vy = windows(valid, seq, k)
    with torch.no_grad():
        logits = model(vx).double()
        val = F.cross_entropy(logits.reshape(-1, logits.size(-1)), vy.reshape(-1)).item()
    state = model.state_dict()
    write_safetensors(os.path.join(outdir, "nanogpt.safetensors"), state, {"format": "pt"})
    write_safetensors(os.path.join(outdir, "hf_lmhead.safetensors"), hf(state, t, True, True), {"format": "pt"})
    write_safetensors(os.path.join(outdir, "hf_model.safetensors"), hf(state, t, False, False), {"format": "pt"})
    print(json.dumps({"val_loss": val, "windows": k, "losses": losses}))


if __name__ == "__main__":
    main()
