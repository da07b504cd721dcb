"""The PyTorch peer of scripts/bench transformer: the same GPT (nanoGPT's model, bench/gpt_interop.py), batch,
sequence length and optimizer as Headroom's transformer_bench, timed the same way (forward, loss, backward,
gradient clipping, AdamW step; the steps after --warmup averaged).

CPU (PyTorch 1.13 here: no scaled_dot_product_attention, so nanoGPT's explicit attention, as nanoGPT
itself falls back to):
  transformer_reference.py --spec SPEC.json --batch 8 --steps 12 --warmup 2 --threads 2 [--lr 1e-3]
GPU (PyTorch 2.x, gpu-check): the issue's reference: GPT-2 124M, bf16 autocast, fused AdamW,
scaled_dot_product_attention(is_causal=True), optionally torch.compile and per-block checkpointing:
  transformer_reference.py --gpu --spec SPEC.json --batch 8 --steps 20 --warmup 5 [--compile] [--checkpoint]
Tokens are random ids (throughput does not depend on them). Prints one JSON object."""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from gpt_interop import GPT, gpt_from_spec  # noqa: E402


def sdpa_forward(self, x):
    """CausalSelfAttention.forward with PyTorch 2's fused attention (nanoGPT's flash path)."""
    B, T, C = x.size()
    q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
    k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
    p = self.attn_dropout.p if self.training else 0.0
    y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
    return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--checkpoint", action="store_true", help="per-block activation checkpointing (GPU)")
    a = ap.parse_args()
    spec = json.load(open(a.spec))
    T = spec["input"][0]
    V = spec["num_classes"]
    torch.manual_seed(1)
    dev = "cuda" if a.gpu else "cpu"
    if not a.gpu:
        torch.set_num_threads(a.threads)
    model = gpt_from_spec(spec).to(dev)
    if a.gpu:
        for blk in model.transformer.h:
            blk.attn.forward = sdpa_forward.__get__(blk.attn)
        if a.checkpoint:
            import torch.utils.checkpoint as ckpt
            for blk in model.transformer.h:
                f = blk.forward
                blk.forward = (lambda f: lambda x: ckpt.checkpoint(f, x, use_reentrant=False))(f)
    # nanoGPT's parameter groups: weight decay on tensors of 2 or more dimensions
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    extra = {"fused": True} if a.gpu else {}
    opt = torch.optim.AdamW(groups, lr=a.lr, betas=(0.9, 0.99), eps=1e-8, **extra)
    step_fn = model
    if a.compile:
        step_fn = torch.compile(model)
    data = torch.randint(0, V, (a.steps, a.batch, T + 1), device=dev)
    times, cpu, losses = [], [], []
    model.train()
    loop_t0 = time.perf_counter()  # the training loop's wall time, every step included
    for s in range(a.steps):
        x, y = data[s, :, :T], data[s, :, 1:]
        if a.gpu:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        c0 = time.process_time()
        if a.gpu:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = step_fn(x)
                loss = F.cross_entropy(logits.view(-1, V).float(), y.reshape(-1))
        else:
            logits = step_fn(x)
            loss = F.cross_entropy(logits.view(-1, V), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if a.gpu:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        losses.append(loss.item())
        print(f"step {s + 1}/{a.steps}: loss {losses[-1]:.4f}, {1000 * times[-1]:.1f} ms", file=sys.stderr)
    loop_seconds = time.perf_counter() - loop_t0
    timed = times[a.warmup:] or times[-1:]
    mean = sum(timed) / len(timed)
    out = {"torch": torch.__version__, "device": dev, "threads": a.threads if not a.gpu else None,
           "params": sum(p.numel() for p in params), "batch": a.batch, "seq": T, "steps": a.steps,
           "timed_steps": len(timed), "step_ms": 1000 * mean, "step_ms_median": 1000 * sorted(timed)[len(timed) // 2],
           "tokens_per_second": a.batch * T / mean,
           "loop_seconds": loop_seconds, "loop_tokens_per_second": a.steps * a.batch * T / loop_seconds, "loss_first": losses[0], "loss_last": losses[-1],
           "compile": a.compile, "checkpoint": a.checkpoint,
           "step_cpu_ms_median": 1000 * sorted(cpu[a.warmup:] or cpu[-1:])[len(cpu[a.warmup:] or cpu[-1:]) // 2]}
    if a.gpu:
        out["peak_bytes"] = torch.cuda.max_memory_allocated()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
