#!/usr/bin/env bash
# scripts/bench transformer: language-model training, side by side with PyTorch in one run.
#
# CPU (always): the same GPT (MODEL, default gpt-char: 6 blocks, width 384, T 256), batch, sequence and
#   optimizer (AdamW lr 1e-3, betas 0.9/0.99, weight decay 0.1 on matrices, clipping at 1.0) in Headroom
#   (bench/transformer_bench.cpp, the real trainer on text:fortunes) and in PyTorch (bench/
#   transformer_reference.py: nanoGPT's model, random tokens), THREADS threads each, ROUNDS alternating
#   rounds; tokens/s is the mean step time over the steps after the warm-up. Target: Headroom >= 1.5x.
#   Then Headroom's strategies on the same model: per-block checkpointing (activations cut >= 60% for
#   <= +30% step time), selective attention recompute, bf16 (activations halve).
# GPU (when `headroom devices` lists cuda:0): GPT-2 124M, batch 8, T 1024, bf16, AdamW, Headroom against
#   PyTorch eager and torch.compile, with and without per-block checkpointing (issue 12's targets:
#   <= 20 ms and 5 GB; with checkpointing <= 25 ms and 3.2 GB; issue 20: <= 20 ms with tensor-core
#   attention).
# Environment (from scripts/bench): BENCH_ROOT BENCH_BUILD BENCH_OUT BENCH_PYTHON BENCH_THREADS; MODEL
#   (gpt-char), BATCH (8), SEQ (256), STEPS (8), WARMUP (2), ROUNDS (2), THREADS (default 2 here);
#   GPU_ONLY=1 skips the CPU rows, BENCH_NO_BUILD=1 uses the build as it is (scripts/gpu-check).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
PY="${BENCH_PYTHON:-/usr/bin/python3}"
THREADS="${THREADS:-2}"
MODEL="${MODEL:-gpt-char}"
BATCH="${BATCH:-8}"
SEQ="${SEQ:-256}"
STEPS="${STEPS:-8}"
WARMUP="${WARMUP:-2}"
ROUNDS="${ROUNDS:-2}"
STAMP="$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# BENCH_NO_BUILD=1 (scripts/gpu-check on a packed tree, which has no compiler): the build as it is
if [[ "${BENCH_NO_BUILD:-0}" != 1 ]]; then
  [[ -d "$BUILD" ]] || "$ROOT/scripts/setup"
  echo "building transformer_bench in $BUILD (if needed) ..." >&2
  cmake --build "$BUILD" -j"$THREADS" --target transformer_bench headroom >/dev/null
fi
[[ -x "$BUILD/transformer_bench" ]] || { echo "bench transformer: $BUILD/transformer_bench is missing" >&2; exit 2; }
HB="$BUILD/transformer_bench"
load() { cut -d' ' -f1 /proc/loadavg; }
LOAD_BEFORE="$(load)"
echo "load average (1 min) before: $LOAD_BEFORE on $(nproc) cores" >&2

# the OpenBLAS kernels Headroom picks (core/backend/cpu/blas.cpp); PyTorch gets the same variable
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  if [[ "$flags" == *" avx512f "* && "$flags" == *" avx512bw "* && "$flags" == *" avx512vl "* ]]; then export OPENBLAS_CORETYPE=SkylakeX
  elif [[ "$flags" == *" avx2 "* && "$flags" == *" fma "* ]]; then export OPENBLAS_CORETYPE=Haswell; fi
fi
export OMP_NUM_THREADS="$THREADS"
# one OpenBLAS thread in both (Headroom sets it itself): OpenBLAS's own pool on top of PyTorch's OpenMP threads
# oversubscribes the cores and halves the peer (docs/benchmarks.md, scripts/bench cpu)
export OPENBLAS_NUM_THREADS=1

results="$work/results.jsonl"
hb() {  # tag, args...: one Headroom run appended to the results
  local tag="$1"; shift
  echo "headroom $tag ..." >&2
  if "$HB" --preset "$MODEL" --batch "$BATCH" --seq "$SEQ" --steps "$STEPS" --warmup "$WARMUP" --threads "$THREADS" "$@" \
       >"$work/h.json" 2>"$work/h.log"; then
    "$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); r['side']='headroom'; r['tag']=sys.argv[2]; print(json.dumps(r))" \
      "$work/h.json" "$tag" >>"$results"
  else
    echo "headroom $tag failed: $(tail -1 "$work/h.json" "$work/h.log" | tail -1)" >&2
    "$PY" -c "import json,sys; print(json.dumps({'side':'headroom','tag':sys.argv[1],'error':open(sys.argv[2]).read().strip()[-300:]}))" \
      "$tag" "$work/h.json" >>"$results"
  fi
}
"$HB" --preset "$MODEL" --seq "$SEQ" --print-spec >"$work/spec.json"
torch_ok=1
"$PY" -c "import torch" 2>/dev/null || torch_ok=0
[[ $torch_ok == 1 ]] || echo "warning: $PY cannot import torch (Debian: python3-torch); PyTorch rows left empty" >&2

# GPU_ONLY=1 (scripts/gpu-check): the GPU rows only
cpu_rounds=$ROUNDS
[[ "${GPU_ONLY:-0}" == 1 ]] && cpu_rounds=0
for ((r = 1; r <= cpu_rounds; ++r)); do
  echo "round $r/$ROUNDS" >&2
  hb "fp32" --precision fp32
  if [[ $torch_ok == 1 ]]; then
    echo "pytorch fp32 ..." >&2
    "$PY" "$ROOT/bench/transformer_reference.py" --spec "$work/spec.json" --batch "$BATCH" --steps "$STEPS" \
      --warmup "$WARMUP" --threads "$THREADS" 2>"$work/t.log" \
      | "$PY" -c "import json,sys; r=json.loads(sys.stdin.read()); r['side']='pytorch'; r['tag']='fp32'; print(json.dumps(r))" >>"$results" \
      || echo "pytorch failed: $(tail -1 "$work/t.log")" >&2
  fi
  hb "checkpoint-all" --checkpoint all
  hb "attention" --checkpoint attention
  hb "bf16" --precision bf16
done

gpu=0
if "$BUILD/headroom" devices 2>/dev/null | grep -q '^cuda:0'; then gpu=1; fi
if [[ $gpu == 0 && "${GPU_ONLY:-0}" == 1 ]]; then
  echo "bench transformer: GPU_ONLY=1 but \`headroom devices\` lists no cuda:0: $("$BUILD/headroom" devices 2>&1 | grep -m1 '^cuda')" >&2
  exit 2
fi
if [[ $gpu == 1 ]]; then
  # the GPU peer: the first python3 whose PyTorch has CUDA (HEADROOM_TORCH_PYTHON, python3 on PATH, then
  # /usr/bin/python3: Debian's PyTorch is CPU only)
  GPU_PY=""
  for p in "${HEADROOM_TORCH_PYTHON:-}" "$(command -v python3 2>/dev/null)" /usr/bin/python3; do
    [[ -n "$p" && -x "$p" ]] || continue
    if timeout 60 "$p" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" >/dev/null 2>&1; then GPU_PY="$p"; break; fi
  done
  [[ -n "$GPU_PY" ]] || echo "warning: no python3 here has PyTorch with CUDA; the GPU PyTorch rows stay empty" >&2
  "$HB" --preset gpt2-124m --seq 1024 --print-spec >"$work/gpt2.json"
  for ck in none all; do
    tag="gpu gpt2-124m bf16 checkpoint=$ck"
    echo "headroom $tag ..." >&2
    if "$HB" --preset gpt2-124m --batch 8 --seq 1024 --steps 25 --warmup 5 --device cuda:0 --precision bf16 \
         --checkpoint "$ck" >"$work/h.json" 2>"$work/h.log"; then
      "$PY" -c "import json,sys; r=json.load(open(sys.argv[1])); r['side']='headroom'; r['tag']=sys.argv[2]; print(json.dumps(r))" \
        "$work/h.json" "$tag" >>"$results"
    else
      "$PY" -c "import json,sys; print(json.dumps({'side':'headroom','tag':sys.argv[1],'error':open(sys.argv[2]).read().strip()[-300:]}))" \
        "$tag" "$work/h.json" >>"$results"
    fi
    for comp in "" "--compile"; do
      extra=(); [[ $ck == all ]] && extra+=(--checkpoint)
      [[ -n "$comp" ]] && extra+=("$comp")
      [[ -n "$GPU_PY" ]] || continue
      "$GPU_PY" "$ROOT/bench/transformer_reference.py" --gpu --spec "$work/gpt2.json" --batch 8 --steps 25 --warmup 5 \
        "${extra[@]}" 2>"$work/t.log" \
        | "$PY" -c "import json,sys; r=json.loads(sys.stdin.read()); r['side']='pytorch'; r['tag']=sys.argv[1]; print(json.dumps(r))" \
          "$tag${comp:+ compiled}" >>"$results" || echo "pytorch $tag $comp failed: $(tail -1 "$work/t.log")" >&2
    done
  done
fi

"$PY" - "$results" "$OUT" "$STAMP" "$THREADS" "$MODEL" "$BATCH" "$SEQ" "$LOAD_BEFORE" "$(load)" "$gpu" <<'PYEOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, stamp, threads, model, batch, seq, lb, la, gpu = sys.argv[2:11]
def pick(side, tag): return [r for r in rows if r["side"] == side and r["tag"] == tag and "error" not in r]
def med(rs, k): return statistics.median(r[k] for r in rs) if rs else None
def mib(b): return f"{b / 1048576:.1f} MiB" if b is not None else "-"
lines = [f"# scripts/bench transformer ({stamp})", "",
         f"CPU, {threads} threads, {model} (T {seq}), batch {batch}, AdamW; load average {lb} before, {la} after "
         f"(medians over the rounds; a busy machine makes absolute numbers noisy, the ratios less so).", ""]
h, t = pick("headroom", "fp32"), pick("pytorch", "fp32")
ht, tt = med(h, "tokens_per_second"), med(t, "tokens_per_second")
lines += ["| side | tokens/s | step | rounds |", "|---|---|---|---|"]
if ht: lines.append(f"| Headroom | {ht:.0f} | {med(h, 'step_ms'):.1f} ms | {len(h)} |")
if tt: lines.append(f"| PyTorch {t[0]['torch']} | {tt:.0f} | {med(t, 'step_ms'):.1f} ms | {len(t)} |")
ratio = ht / tt if ht and tt else None
lines += ["", f"Headroom / PyTorch: **{ratio:.2f}x** (target >= 1.5x)" if ratio else "Headroom / PyTorch: -", ""]
lines += ["| Headroom strategy | activations | vs fp32 | step | vs fp32 |", "|---|---|---|---|---|"]
base = h
for tag in ("fp32", "checkpoint-all", "attention", "bf16"):
    rs = pick("headroom", tag)
    if not rs or not base: continue
    a, s = med(rs, "activations"), med(rs, "step_ms")
    lines.append(f"| {tag} | {mib(a)} | {a / med(base, 'activations'):.2f}x | {s:.1f} ms | {s / med(base, 'step_ms'):.2f}x |")
ck = pick("headroom", "checkpoint-all"); bf = pick("headroom", "bf16")
if ck and base:
    cut = 1 - med(ck, "activations") / med(base, "activations"); slow = med(ck, "step_ms") / med(base, "step_ms") - 1
    lines += ["", f"per-block checkpointing: activations -{100 * cut:.0f}% (target >= 60%) for {100 * slow:+.0f}% step time (target <= +30%)"]
if bf and base:
    lines.append(f"bf16: activations x{med(bf, 'activations') / med(base, 'activations'):.2f} (target 0.5)")
if gpu == "1":
    lines += ["", "GPU: GPT-2 124M, batch 8, T 1024, bf16, AdamW (issue 12: <= 20 ms and 5 GB; with checkpointing <= 25 ms and 3.2 GB)", "",
              "| side | run | step | peak memory |", "|---|---|---|---|"]
    for r in rows:
        if not r["tag"].startswith("gpu"): continue
        if "error" in r: lines.append(f"| {r['side']} | {r['tag']} | {r['error'][:120]} | - |"); continue
        peak = r.get("peak_bytes") or r.get("peak_total")
        lines.append(f"| {r['side']} | {r['tag']} | {r['step_ms']:.1f} ms | {peak / 1e9:.2f} GB |")
else:
    lines += ["", "GPU: skipped (no CUDA device)."]
text = "\n".join(lines) + "\n"
print(text)
for name in (f"transformer-{stamp}", "transformer-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump({"rows": rows, "ratio": ratio}, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
