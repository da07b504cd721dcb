"""The PyTorch peer of the LLaMA family in scripts/bench cpu (llama-tiny): the same model as Headroom's spec
(token_embedding, llama_block x L, rmsnorm, lm_head), written as transformers' modeling_llama.py computes it
(LlamaRMSNorm, LlamaRotaryEmbedding with rotate_half, repeat_kv for grouped-query attention, SwiGLU MLP)
in plain PyTorch 1.13 eager ops (no scaled_dot_product_attention in 1.13: the explicit causal softmax, as
transformers' eager attention), the same batch, sequence length and optimizer as transformer_bench
(AdamW (0.9, 0.99), weight decay 0.1 on matrices, gradient norm clipped to 1), timed the same way.
  llama_reference.py --spec SPEC.json --batch 16 --steps 30 --warmup 2 --threads 2
On a GPU (scripts/gpu-check's bench row beside Headroom's on cuda:0): --gpu (f32, as Headroom's fp32 row; --bf16:
bf16 autocast), timed between torch.cuda.synchronize() calls, with the peak of torch.cuda.max_memory_allocated().
Tokens are random ids (throughput does not depend on them). Prints one JSON object like transformer_reference.py."""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(nn.Module):
    def __init__(self, l):
        super().__init__()
        C, H = l["dim"], l["heads"]
        self.H = H
        self.KV = l.get("kv_heads", 0) or H
        self.D = l.get("head_dim", 0) or C // H
        F_ = l["hidden"]
        bias = l.get("qkv_bias", False)
        self.input_layernorm = RMSNorm(C, l.get("norm_eps", 1e-5))
        self.post_attention_layernorm = RMSNorm(C, l.get("norm_eps", 1e-5))
        self.q_proj = nn.Linear(C, self.H * self.D, bias=bias)
        self.k_proj = nn.Linear(C, self.KV * self.D, bias=bias)
        self.v_proj = nn.Linear(C, self.KV * self.D, bias=bias)
        self.o_proj = nn.Linear(self.H * self.D, C, bias=False)
        self.gate_proj = nn.Linear(C, F_, bias=False)
        self.up_proj = nn.Linear(C, F_, bias=False)
        self.down_proj = nn.Linear(F_, C, bias=False)
        theta = l.get("rope_theta", 10000.0)
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, self.D, 2).float() / self.D)), persistent=False)

    def forward(self, x, mask):
        B, T, C = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(B, T, self.H, self.D).transpose(1, 2)
        k = self.k_proj(h).view(B, T, self.KV, self.D).transpose(1, 2)
        v = self.v_proj(h).view(B, T, self.KV, self.D).transpose(1, 2)
        freqs = torch.arange(T, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        g = self.H // self.KV
        k = k[:, :, None].expand(B, self.KV, g, T, self.D).reshape(B, self.H, T, self.D)  # repeat_kv
        v = v[:, :, None].expand(B, self.KV, g, T, self.D).reshape(B, self.H, T, self.D)
        att = (q @ k.transpose(2, 3)) / math.sqrt(self.D) + mask
        att = torch.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, self.H * self.D)
        x = x + self.o_proj(y)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(nn.Module):
    def __init__(self, spec):
        super().__init__()
        L = spec["layers"]
        self.embed_tokens = nn.Embedding(L[0]["vocab_size"], L[0]["dim"])
        self.layers = nn.ModuleList([Block(l) for l in L if l["type"] == "llama_block"])
        norm = [l for l in L if l["type"] == "rmsnorm"][0]
        self.norm = RMSNorm(norm["dim"], norm.get("eps", 1e-5))
        head = L[-1]
        self.lm_head = nn.Linear(head["dim"], head["vocab_size"], bias=False)
        if head.get("tied", False):
            self.lm_head.weight = self.embed_tokens.weight
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids):
        T = ids.shape[1]
        mask = torch.full((T, T), float("-inf")).triu(1)
        x = self.embed_tokens(ids)
        for b in self.layers:
            x = b(x, mask)
        return self.lm_head(self.norm(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast (with --gpu)")
    a = ap.parse_args()
    spec = json.load(open(a.spec))
    T, V = spec["input"][0], spec["num_classes"]
    torch.manual_seed(1)
    dev = "cuda" if a.gpu else "cpu"
    if a.gpu and not torch.cuda.is_available():
        print(json.dumps({"error": "--gpu: this PyTorch (%s) has no CUDA device" % torch.__version__}))
        sys.exit(1)
    if not a.gpu:
        torch.set_num_threads(a.threads)
    model = Llama(spec).to(dev)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.99), eps=1e-8)
    data = torch.randint(0, V, (a.steps, a.batch, T + 1)).to(dev)
    times, cpu, losses = [], [], []
    model.train()
    loop_t0 = time.perf_counter()
    for s in range(a.steps):
        x, y = data[s, :, :T], data[s, :, 1:]
        if a.gpu:
            torch.cuda.synchronize()
        t0, c0 = time.perf_counter(), time.process_time()
        with torch.autocast(dev, dtype=torch.bfloat16, enabled=a.gpu and a.bf16):
            loss = F.cross_entropy(model(x).view(-1, V).float(), y.reshape(-1))
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
    tc = cpu[a.warmup:] or cpu[-1:]
    out = {"torch": torch.__version__, "device": dev, "threads": None if a.gpu else a.threads,
           "params": sum(p.numel() for p in params), "batch": a.batch, "seq": T, "steps": a.steps,
           "timed_steps": len(timed), "step_ms": 1000 * mean,
           "step_ms_median": 1000 * sorted(timed)[len(timed) // 2], "tokens_per_second": a.batch * T / mean,
           "loop_seconds": loop_seconds, "loop_tokens_per_second": a.steps * a.batch * T / loop_seconds,
           "loss_first": losses[0], "loss_last": losses[-1], "compile": False, "checkpoint": False,
           "step_cpu_ms_median": 1000 * sorted(tc)[len(tc) // 2], "precision": "bf16" if a.gpu and a.bf16 else "fp32"}
    if a.gpu:
        out["peak_bytes"] = torch.cuda.max_memory_allocated()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
