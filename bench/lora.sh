#!/usr/bin/env bash
# scripts/bench lora: LoRA (--lora R) against full training, Headroom beside PyTorch (Debian's python3-torch,
# CPU) doing the same by hand (a frozen nn.Linear plus A and B with requires_grad, PEFT's initialisation):
# mlp (784-256-128-10) on synthetic 28x28 images, batch 64, Adam, STEPS steps, THREADS threads, alternating
# rounds (ROUNDS, default 3). Reported: training samples/s (Headroom: run.json final.samples_per_second, the
# training loop's own clock; PyTorch: the loop timed the same way after 10 warm-up steps), their medians and
# ratios, and the bytes of parameters + gradients + optimizer state (Headroom: the ledger's peaks; PyTorch:
# the tensors' sizes).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
STEPS="${STEPS:-300}"
ROUNDS="${ROUNDS:-3}"
RANK="${RANK:-8}"
THREADS="${THREADS:-1}"  # 1: with 2 threads PyTorch 1.13 swung from 4 k to 66 k samples/s between 50-step chunks here
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY="$(command -v python3)"
mkdir -p "$OUT"
cmake --build "$BUILD" -j"${BENCH_THREADS:-2}" --target headroom-cli >/dev/null 2>&1 || cmake --build "$BUILD" -j2 >/dev/null
H="$BUILD/headroom"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
results="$work/rows.jsonl"
torch_run() {  # $1: lora rank (0: full)
  OMP_NUM_THREADS="$THREADS" "$PY" - "$1" "$STEPS" "$THREADS" <<'PYEOF'
import json, math, sys, time
import torch
r, steps, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
torch.set_num_threads(threads)
torch.manual_seed(1)
class LoraLinear(torch.nn.Module):
    def __init__(self, i, o, r):
        super().__init__()
        self.base = torch.nn.Linear(i, o)
        self.r = r
        if r:
            self.base.weight.requires_grad_(False); self.base.bias.requires_grad_(False)
            self.A = torch.nn.Parameter(torch.empty(r, i).uniform_(-1 / math.sqrt(i), 1 / math.sqrt(i)))
            self.B = torch.nn.Parameter(torch.zeros(o, r))
    def forward(self, x):
        y = self.base(x)
        return y + (x @ self.A.t()) @ self.B.t() if self.r else y
model = torch.nn.Sequential(torch.nn.Flatten(), LoraLinear(784, 256, r), torch.nn.ReLU(), LoraLinear(256, 128, r),
                            torch.nn.ReLU(), LoraLinear(128, 10, r))
params = [p for p in model.parameters() if p.requires_grad]
opt = torch.optim.Adam(params, lr=1e-3)
x = torch.randn(64, 1, 28, 28); y = torch.randint(0, 10, (64,))
def step():
    opt.zero_grad(set_to_none=False)
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
for _ in range(10): step()
t0 = time.perf_counter()
for _ in range(steps): step()
dt = time.perf_counter() - t0
state = sum(v.numel() * v.element_size() for s in opt.state.values() for v in s.values() if torch.is_tensor(v) and v.dim() > 0)
allp = sum(p.numel() * p.element_size() for p in model.parameters())
grads = sum(p.grad.numel() * p.grad.element_size() for p in params)
print(json.dumps({"who": "pytorch", "rank": r, "samples_per_second": steps * 64 / dt,
                  "parameters": allp, "gradients": grads, "optimizer_state": state}))
PYEOF
}
headroom_run() {  # $1: lora rank (0: full)
  local out="$work/h$1-$RANDOM"
  local flags=(train --preset mlp --data synthetic --train-limit 4096 --test-limit 64 --batch 64 --steps "$STEPS"
               --optimizer adam --lr 0.001 --threads "$THREADS" --no-history --quiet --out "$out")
  if [[ "$1" -gt 0 ]]; then flags+=(--lora "$1"); fi
  "$H" "${flags[@]}" >/dev/null
  "$PY" - "$out/run.json" "$1" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1])); p = j["memory"]["measured"]["peak"]
print(json.dumps({"who": "headroom", "rank": int(sys.argv[2]), "samples_per_second": j["final"]["samples_per_second"],
                  "parameters": p["parameters"], "gradients": p["gradients"], "optimizer_state": p["optimizer_state"]}))
PYEOF
}
echo "load average before: $(cut -d' ' -f1 /proc/loadavg) on $(nproc --all) cores" >&2
for round in $(seq 1 "$ROUNDS"); do
  for rank in 0 "$RANK"; do
    echo "lora: round $round, rank $rank ..." >&2
    headroom_run "$rank" >>"$results"
    torch_run "$rank" >>"$results"
  done
done
"$PY" - "$results" "$OUT" "$STEPS" "$THREADS" <<'PYEOF'
import json, statistics, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, steps, threads = sys.argv[2], sys.argv[3], sys.argv[4]
lines = [f"LoRA against full training: mlp, batch 64, Adam, {steps} steps, {threads} threads, CPU", "",
         "| program | training | samples/s, every round | median | parameters | gradients | optimizer state |",
         "|---|---|---|---|---|---|---|"]
med = {}
for who in ("headroom", "pytorch"):
    for rank in sorted({r["rank"] for r in rows}):
        rs = [r for r in rows if r["who"] == who and r["rank"] == rank]
        m = statistics.median(r["samples_per_second"] for r in rs)
        med[(who, rank)] = m
        kib = lambda b: f"{b / 1024:.1f} KiB"
        lines.append(f"| {who} | {'LoRA rank %d' % rank if rank else 'full'} | "
                     + " / ".join(f"{r['samples_per_second']:.0f}" for r in rs)
                     + f" | {m:.0f} | {kib(rs[0]['parameters'])} | {kib(rs[0]['gradients'])} | {kib(rs[0]['optimizer_state'])} |")
ranks = sorted({r["rank"] for r in rows})
lines.append("")
for rank in ranks:
    lines.append(f"Headroom / PyTorch, {'LoRA' if rank else 'full'}: {med[('headroom', rank)] / med[('pytorch', rank)]:.2f}x")
text = "\n".join(lines) + "\n"
print(text)
stamp = time.strftime("%Y%m%d-%H%M%S")
for name in (f"lora-{stamp}", "lora-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump(rows, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
