#!/usr/bin/env bash
# scripts/bench lora: LoRA (--lora R) against full training, Headroom beside PyTorch (Debian's python3-torch,
# CPU) doing the same by hand (frozen nn.Linear layers plus A and B with requires_grad, PEFT's initialisation),
# THREADS threads, alternating rounds (ROUNDS, default 3), for each model of MODELS (default both):
#   mlp:      784-256-128-10 on synthetic 28x28 images, batch 64, Adam lr 1e-3, STEPS steps (300); adapters on
#             the three linear layers;
#   gpt-tiny: 2 blocks of width 128, 128 tokens, byte vocabulary (nanoGPT's model in PyTorch, bench/gpt_interop.py),
#             batch 16, AdamW (weight decay 0.1 on matrices) with the gradient norm clipped at 1, GPT_STEPS steps
#             (60); adapters on each block's c_attn, attn.c_proj, c_fc and mlp.c_proj, the tied embedding frozen.
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
torch_run() {  # $1: model, $2: lora rank (0: full)
  local steps="$STEPS"; [[ "$1" == gpt-tiny ]] && steps="$GPT_STEPS"
  OMP_NUM_THREADS="$THREADS" "$PY" - "$1" "$2" "$steps" "$THREADS" "$work/gpt-tiny.json" "$ROOT/bench" <<'PYEOF'
import json, math, sys, time
import torch
which, r, steps, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
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
if which == "mlp":
    L = lambda i, o: LoraLinear(torch.nn.Linear(i, o), r) if r else torch.nn.Linear(i, o)
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
            blk.attn.c_attn, blk.attn.c_proj = LoraLinear(blk.attn.c_attn, r), LoraLinear(blk.attn.c_proj, r)
            blk.mlp.c_fc, blk.mlp.c_proj = LoraLinear(blk.mlp.c_fc, r), LoraLinear(blk.mlp.c_proj, r)
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
for p in model.parameters(): seen[p.data_ptr()] = p.numel() * p.element_size()  # a tied weight once
grads = sum(p.grad.numel() * p.grad.element_size() for p in params)
print(json.dumps({"who": "pytorch", "model": which, "rank": r, "samples_per_second": steps * batch / dt,
                  "parameters": sum(seen.values()), "gradients": grads, "optimizer_state": state}))
PYEOF
}
headroom_run() {  # $1: model, $2: lora rank (0: full)
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
  "$H" "${flags[@]}" >/dev/null
  "$PY" - "$out/run.json" "$1" "$2" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1])); p = j["memory"]["measured"]["peak"]
print(json.dumps({"who": "headroom", "model": sys.argv[2], "rank": int(sys.argv[3]),
                  "samples_per_second": j["final"]["samples_per_second"],
                  "parameters": p["parameters"], "gradients": p["gradients"], "optimizer_state": p["optimizer_state"]}))
PYEOF
}
echo "load average before: $(cut -d' ' -f1 /proc/loadavg) on $(nproc --all) cores" >&2
for round in $(seq 1 "$ROUNDS"); do
  for model in $MODELS; do
    for rank in 0 "$RANK"; do
      echo "lora: round $round, $model, rank $rank ..." >&2
      headroom_run "$model" "$rank" >>"$results"
      torch_run "$model" "$rank" >>"$results"
    done
  done
done
"$PY" - "$results" "$OUT" "$STEPS" "$THREADS" "$GPT_STEPS" <<'PYEOF'
import json, statistics, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, steps, threads, gpt_steps = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
what = {"mlp": f"mlp, synthetic images, batch 64, Adam, {steps} steps",
        "gpt-tiny": f"gpt-tiny, 16 x 128 tokens, AdamW + clipping, {gpt_steps} steps"}
lines = [f"LoRA against full training, {threads} thread(s), CPU", ""]
kib = lambda b: f"{b / 1024:.1f} KiB"
for model in dict.fromkeys(r["model"] for r in rows):
    lines += [f"{what[model]}:", "",
              "| program | training | samples/s, every round | median | parameters | gradients | optimizer state |",
              "|---|---|---|---|---|---|---|"]
    med = {}
    ranks = sorted({r["rank"] for r in rows if r["model"] == model})
    for who in ("headroom", "pytorch"):
        for rank in ranks:
            rs = [r for r in rows if r["model"] == model and r["who"] == who and r["rank"] == rank]
            m = statistics.median(r["samples_per_second"] for r in rs)
            med[(who, rank)] = m
            lines.append(f"| {who} | {'LoRA rank %d' % rank if rank else 'full'} | "
                         + " / ".join(f"{r['samples_per_second']:.1f}" for r in rs)
                         + f" | {m:.1f} | {kib(rs[0]['parameters'])} | {kib(rs[0]['gradients'])} | {kib(rs[0]['optimizer_state'])} |")
    lines.append("")
    for rank in ranks:
        lines.append(f"Headroom / PyTorch, {model}, {'LoRA' if rank else 'full'}: "
                     f"{med[('headroom', rank)] / med[('pytorch', rank)]:.2f}x")
    lines.append("")
text = "\n".join(lines) + "\n"
print(text)
stamp = time.strftime("%Y%m%d-%H%M%S")
for name in (f"lora-{stamp}", "lora-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump(rows, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
