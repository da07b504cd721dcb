#!/usr/bin/env bash
# scripts/bench strategies: each memory strategy's peak memory and step time relative to the fp32
# baseline, for resnet-mini and bench/models/resnet-deep.json (activations dominate), on the CPU and on
# the GPU when one is present. Peak memory is the ledger's measured peak (run.json), step time comes
# from the training throughput (run.json final.images_per_second).
# Environment (from scripts/bench): BENCH_ROOT BENCH_BUILD BENCH_OUT BENCH_THREADS; STEPS (default 12),
# BATCH (default 64).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
THREADS="${BENCH_THREADS:-$(nproc)}"
STEPS="${STEPS:-12}"
BATCH="${BATCH:-64}"
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY="$(command -v python3)"
mkdir -p "$OUT"
[[ -x "$BUILD/headroom" ]] || "$ROOT/scripts/setup"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

devices=(cpu)
if "$BUILD/headroom" devices 2>/dev/null | grep -q '^cuda:0'; then devices+=(cuda:0); fi

declare -A STRAT=(
  [fp32]=""
  [bf16]="--precision bf16"
  [checkpoint-all]="--checkpoint all"
  [accumulate-4]="--accumulate 4"
  [offload]="--offload-optimizer"
  [combined]="--precision bf16 --checkpoint all --accumulate 4 --offload-optimizer"
)
ORDER=(fp32 bf16 checkpoint-all accumulate-4 offload combined)
results="$work/results.jsonl"
for dev in "${devices[@]}"; do
  for model in preset:resnet-mini file:"$ROOT/bench/models/resnet-deep.json"; do
    if [[ $model == preset:* ]]; then margs=(--preset "${model#preset:}"); mname="${model#preset:}";
    else margs=(--model "${model#file:}"); mname="resnet-deep"; fi
    for s in "${ORDER[@]}"; do
      dir="$work/$dev-$mname-$s"
      # shellcheck disable=SC2086
      if ! "$BUILD/headroom" train "${margs[@]}" --data synthetic --steps "$STEPS" --batch "$BATCH" \
           --optimizer adam --device "$dev" --threads "$THREADS" --no-history --quiet --out "$dir" ${STRAT[$s]} \
           >"$dir.log" 2>&1; then
        echo "strategies: $dev $mname $s failed: $(tail -1 "$dir.log")" >&2; continue
      fi
      "$PY" - "$dir/run.json" "$dev" "$mname" "$s" "$BATCH" >>"$results" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"]["measured"]
ips = r["final"]["images_per_second"] or 0
print(json.dumps({"device": sys.argv[2], "model": sys.argv[3], "strategy": sys.argv[4],
                  "peak": m["peak_total"], "activations": m["peak"]["activations"],
                  "predicted": (r["memory"].get("predicted") or {}).get("device_total"),
                  "step_ms": 1000.0 * int(sys.argv[5]) / ips if ips else None}))
PYEOF
    done
  done
done
"$PY" - "$results" "$OUT" "$STEPS" "$BATCH" "$THREADS" <<'PYEOF'
import json, sys, time
rows = [json.loads(l) for l in open(sys.argv[1])]
out, steps, batch, threads = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def mib(b): return b / 1048576
lines = [f"Memory strategies, batch {batch}, Adam, {steps} steps of synthetic 28x28 data, {threads} threads",
         "", "| device | model | strategy | peak memory | vs fp32 | activations | vs fp32 | step time | vs fp32 |",
         "|---|---|---|---|---|---|---|---|---|"]
for dev in dict.fromkeys(r["device"] for r in rows):
    for model in dict.fromkeys(r["model"] for r in rows if r["device"] == dev):
        rs = [r for r in rows if r["device"] == dev and r["model"] == model]
        base = next((r for r in rs if r["strategy"] == "fp32"), None)
        for r in rs:
            def rel(k, inv=False):
                if not base or not base[k] or not r[k]: return "-"
                return f"{r[k] / base[k]:.2f}x"
            lines.append(f"| {dev} | {model} | {r['strategy']} | {mib(r['peak']):.1f} MiB | {rel('peak')} | "
                         f"{mib(r['activations']):.1f} MiB | {rel('activations')} | "
                         f"{r['step_ms']:.1f} ms | {rel('step_ms')} |" if r["step_ms"] else "")
text = "\n".join(lines) + "\n"
print(text)
stamp = time.strftime("%Y%m%d-%H%M%S")
for name in (f"strategies-{stamp}", "strategies-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump(rows, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
