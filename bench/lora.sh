#!/usr/bin/env bash
# scripts/bench lora: LoRA (--lora R) against full training, Headroom beside PyTorch (Debian's python3-torch,
# CPU) doing the same by hand (frozen nn.Linear layers plus A and B with requires_grad, PEFT's initialisation),
# THREADS threads, alternating rounds (ROUNDS, default 3), for each model of MODELS (default both):
#   mlp:      784-256-128-10 on synthetic 28x28 images, batch 64, Adam lr 1e-3, STEPS steps (300); adapters on
#             the three linear layers;
#   gpt-tiny: 2 blocks of width 128, 128 tokens, byte vocabulary (nanoGPT's model in PyTorch, bench/gpt_interop.py),
#             batch 16, AdamW (weight decay 0.1 on matrices) with the gradient norm clipped at 1, GPT_STEPS steps
#             (60); adapters on each block's c_attn, attn.c_proj, c_fc and mlp.c_proj, the tied embedding frozen.
# Each model runs three ways: full training, LoRA, and QLoRA (LoRA on a base quantised to QBITS bits, default 4:
# Headroom --quantize-base int4; PyTorch keeps the same packed codes and scales as buffers and dequantises each
# adapted weight in forward, autograd keeping it for backward, as a CPU QLoRA by hand must).
# Reported: training samples/s (Headroom: run.json final.samples_per_second, the training loop's own clock;
# PyTorch: the loop timed the same way after 10 warm-up steps), their medians and ratios, and the bytes of
# parameters + gradients + optimizer state (Headroom: the ledger's peaks; PyTorch: the tensors' sizes).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
STEPS="${STEPS:-300}"
GPT_STEPS="${GPT_STEPS:-60}"
MODELS="${MODELS:-mlp gpt-tiny}"
ROUNDS="${ROUNDS:-3}"
RANK="${RANK:-8}"
QBITS="${QBITS:-4}"
THREADS="${THREADS:-1}"  # 1: with 2 threads PyTorch 1.13 swung from 4 k to 66 k samples/s between 50-step chunks here
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY="$(command -v python3)"
mkdir -p "$OUT"
cmake --build "$BUILD" -j"${BENCH_THREADS:-2}" --target headroom-cli transformer_bench >/dev/null 2>&1 ||
  cmake --build "$BUILD" -j2 >/dev/null
H="$BUILD/headroom"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
results="$work/rows.jsonl"
"$BUILD/transformer_bench" --preset gpt-tiny --seq 128 --print-spec >"$work/gpt-tiny.json"
torch_run() {  # $1: model, $2: lora rank (0: full), $3: base bits (0: f32)
  local steps="$STEPS"; [[ "$1" == gpt-tiny ]] && steps="$GPT_STEPS"
  OMP_NUM_THREADS="$THREADS" "$PY" - "$1" "$2" "$steps" "$THREADS" "$work/gpt-tiny.json" "$ROOT/bench" "$3" <<'PYEOF'
import json, math, sys, time
import torch
which, r, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
bits = int(sys.argv[7])
sys.path.insert(0, sys.argv[6])
torch.set_num_threads(threads)
torch.manual_seed(1)
class LoraLinear(torch.nn.Module):
    """A frozen nn.Linear plus rank-r adapters A (r, in) and B (out, r), y = base(x) + (alpha/r) x A^T B^T (alpha = r)."""
    def __init__(self, base, r):
        super().__init__()
        self.base, self.r = base, r
        i, o = base.in_features, base.out_features
        for p in base.parameters(): p.requires_grad_(False)
        self.A = torch.nn.Parameter(torch.empty(r, i).uniform_(-1 / math.sqrt(i), 1 / math.sqrt(i)))
        self.B = torch.nn.Parameter(torch.zeros(o, r))
    def forward(self, x):
        return self.base(x) + (x @ self.A.t()) @ self.B.t()
class QLoraLinear(LoraLinear):
    """LoraLinear on a quantised base (Headroom's format: absmax, a scale per row for int8, per 64 values for
    int4, two int4 codes a byte): codes and scales are buffers, the weight is dequantised at each forward."""
    def __init__(self, base, r, bits):
        super().__init__(base, r)
        w = base.weight.detach()
        o, i = w.shape
        g = i if bits == 8 else 64
        ng, qmax = (i + g - 1) // g, 127.0 if bits == 8 else 7.0
        wp = torch.nn.functional.pad(w, (0, ng * g - i)).reshape(o, ng, g)
        s = wp.abs().amax(dim=2) / qmax
        q = torch.where(s[..., None] == 0, torch.zeros_like(wp), torch.clamp(torch.round(wp / s[..., None]), -qmax, qmax))
        q = q.reshape(o, ng * g)[:, :i]
        if bits == 8:
            codes = q.to(torch.int8)
        else:
            c = (q + 8).to(torch.uint8).flatten()
            if c.numel() % 2: c = torch.cat([c, torch.zeros(1, dtype=torch.uint8)])
            codes = c[0::2] | (c[1::2] << 4)
        self.bits, self.o, self.i, self.g = bits, o, i, g
        self.register_buffer("codes", codes)
        self.register_buffer("scales", s.contiguous())
        self.bias = base.bias
        self.base = None  # the f32 weight is gone
    def weight(self):
        if self.bits == 8:
            q = self.codes.float()
        else:
            q = torch.stack([self.codes & 15, self.codes >> 4], 1).flatten()[: self.o * self.i].float().reshape(self.o, self.i) - 8
        return q * self.scales.repeat_interleave(self.g, dim=1)[:, : self.i]
    def forward(self, x):
        return torch.nn.functional.linear(x, self.weight(), self.bias) + (x @ self.A.t()) @ self.B.t()
def adapt(lin):
    return QLoraLinear(lin, r, bits) if bits else LoraLinear(lin, r)
if which == "mlp":
    L = lambda i, o: adapt(torch.nn.Linear(i, o)) if r else torch.nn.Linear(i, o)
    model = torch.nn.Sequential(torch.nn.Flatten(), L(784, 256), torch.nn.ReLU(), L(256, 128), torch.nn.ReLU(), L(128, 10))
    batch, x, y = 64, torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))
    loss_of = lambda: torch.nn.functional.cross_entropy(model(x), y)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=1e-3)
    clip = None
else:
    from gpt_interop import gpt_from_spec
    spec = json.load(open(sys.argv[5]))
    model = gpt_from_spec(spec)
    if r:
        for p in model.parameters(): p.requires_grad_(False)  # the tied embedding, the layer norms, the biases
        for blk in model.transformer.h:
            blk.attn.c_attn, blk.attn.c_proj = adapt(blk.attn.c_attn), adapt(blk.attn.c_proj)
            blk.mlp.c_fc, blk.mlp.c_proj = adapt(blk.mlp.c_fc), adapt(blk.mlp.c_proj)
    T, V, batch = spec["input"][0], spec["num_classes"], 16
    data = torch.randint(0, V, (batch, T + 1))
    loss_of = lambda: torch.nn.functional.cross_entropy(model(data[:, :T]).reshape(-1, V), data[:, 1:].reshape(-1))
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99), eps=1e-8)
    clip = 1.0
model.train()
def step():
    opt.zero_grad(set_to_none=False)
    loss_of().backward()
    if clip: torch.nn.utils.clip_grad_norm_(params, clip)
    opt.step()
for _ in range(10): step()
t0 = time.perf_counter()
for _ in range(steps): step()
dt = time.perf_counter() - t0
state = sum(v.numel() * v.element_size() for s in opt.state.values() for v in s.values() if torch.is_tensor(v) and v.dim() > 0)
seen = {}
for p in list(model.parameters()) + list(model.buffers()):  # a tied weight once; QLoRA's codes and scales
    if p.dim() > 0 and p.dtype != torch.bool: seen[p.data_ptr()] = p.numel() * p.element_size()
for name, b in model.named_buffers():  # nanoGPT's causal mask is not a parameter
    if name.endswith("attn.bias"): seen.pop(b.data_ptr(), None)
grads = sum(p.grad.numel() * p.grad.element_size() for p in params)
print(json.dumps({"who": "pytorch", "model": which, "rank": r, "bits": bits, "samples_per_second": steps * batch / dt,
                  "parameters": sum(seen.values()), "gradients": grads, "optimizer_state": state}))
PYEOF
}
headroom_run() {  # $1: model, $2: lora rank (0: full), $3: base bits (0: not quantised)
  local out="$work/h$1-$2-$RANDOM" flags
  if [[ "$1" == mlp ]]; then
    flags=(train --preset mlp --data synthetic --train-limit 4096 --test-limit 64 --batch 64 --steps "$STEPS"
           --optimizer adam --lr 0.001)
  else
    flags=(train --preset gpt-tiny --data text:fortunes --eval-tokens 4096 --batch 16 --steps "$GPT_STEPS"
           --optimizer adamw --lr 0.001 --weight-decay 0.1 --grad-clip 1 --warmup 0)
  fi
  flags+=(--threads "$THREADS" --no-history --quiet --out "$out")
  if [[ "$2" -gt 0 ]]; then flags+=(--lora "$2"); fi
  if [[ "$3" -gt 0 ]]; then flags+=(--quantize-base "int$3"); fi
  "$H" "${flags[@]}" >/dev/null
  "$PY" - "$out/run.json" "$1" "$2" "$3" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1])); p = j["memory"]["measured"]["peak"]
print(json.dumps({"who": "headroom", "model": sys.argv[2], "rank": int(sys.argv[3]), "bits": int(sys.argv[4]),
                  "samples_per_second": j["final"]["samples_per_second"],
                  "parameters": p["parameters"], "gradients": p["gradients"], "optimizer_state": p["optimizer_state"]}))
PYEOF
}
echo "load average before: $(cut -d' ' -f1 /proc/loadavg) on $(nproc --all) cores" >&2
for round in $(seq 1 "$ROUNDS"); do
  for model in $MODELS; do
    for mode in "0 0" "$RANK 0" "$RANK $QBITS"; do
      set -- $mode
      echo "lora: round $round, $model, rank $1, base bits $2 ..." >&2
      headroom_run "$model" "$1" "$2" >>"$results"
      torch_run "$model" "$1" "$2" >>"$results"
    done
  done
done
"$PY" - "$results" "$OUT" "$STEPS" "$THREADS" "$GPT_STEPS" <<'PYEOF'
import json, statistics, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, steps, threads, gpt_steps = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
what = {"mlp": f"mlp, synthetic images, batch 64, Adam, {steps} steps",
        "gpt-tiny": f"gpt-tiny, 16 x 128 tokens, AdamW + clipping, {gpt_steps} steps"}
lines = [f"LoRA and QLoRA against full training, {threads} thread(s), CPU", ""]
kib = lambda b: f"{b / 1024:.1f} KiB"
for model in dict.fromkeys(r["model"] for r in rows):
    lines += [f"{what[model]}:", "",
              "| program | training | samples/s, every round | median | parameters | gradients | optimizer state |",
              "|---|---|---|---|---|---|---|"]
    med = {}
    modes = sorted({(r["rank"], r.get("bits", 0)) for r in rows if r["model"] == model})
    name = lambda rank, bits: (f"QLoRA rank {rank}, int{bits} base" if bits else f"LoRA rank {rank}") if rank else "full"
    for who in ("headroom", "pytorch"):
        for mode in modes:
            rs = [r for r in rows if r["model"] == model and r["who"] == who and (r["rank"], r.get("bits", 0)) == mode]
            m = statistics.median(r["samples_per_second"] for r in rs)
            med[(who, mode)] = m
            lines.append(f"| {who} | {name(*mode)} | "
                         + " / ".join(f"{r['samples_per_second']:.1f}" for r in rs)
                         + f" | {m:.1f} | {kib(rs[0]['parameters'])} | {kib(rs[0]['gradients'])} | {kib(rs[0]['optimizer_state'])} |")
    lines.append("")
    for mode in modes:
        lines.append(f"Headroom / PyTorch, {model}, {name(*mode)}: "
                     f"{med[('headroom', mode)] / med[('pytorch', mode)]:.2f}x")
    lines.append("")
text = "\n".join(lines) + "\n"
print(text)
stamp = time.strftime("%Y%m%d-%H%M%S")
for name in (f"lora-{stamp}", "lora-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump(rows, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
