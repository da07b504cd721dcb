#!/usr/bin/env bash
# scripts/bench gpu: Headroom and PyTorch side by side on the same GPU (docs/benchmarks.md, issue 11).
# Same model spec, batch and optimizer (SGD lr 0.01 momentum 0.9, fp32), random data uploaded every
# step; ms/step from CUDA events; peak memory (ours: the ledger's peak and peak plus the allocator's
# reserve; PyTorch's max_memory_allocated / max_memory_reserved; both also as the device's used memory);
# eager and with the step captured as a CUDA graph; cases seed-cnn batch 64 and 1024, resnet-mini 256.
# Then `headroom train` itself on each case (the product's loop, timed over the whole run from run.json:
# the step on the device, a CUDA graph where it can), beside the harness rows.
# Results: a table on stdout and $BENCH_OUT/gpu-<time>.json/.md (plus gpu-latest.*).
#
# The PyTorch peer is the first python3 that imports torch: $HEADROOM_TORCH_PYTHON, then python3 on
# PATH, then /usr/bin/python3 (it must have CUDA; without, the PyTorch columns stay empty and say why).
# Without a GPU this fails at once with the reason (exit 2). Every run is under a timeout: nothing hangs.
# Environment: STEPS (default 200), WARMUP (20), CASES ("seed-cnn:64 seed-cnn:1024 resnet-mini:256"),
#   RUN_TIMEOUT (seconds per run, default 180), BENCH_BUILD/BENCH_OUT/BENCH_ROOT (scripts/bench sets them).
set -uo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-${HEADROOM_BUILD_DIR:-$ROOT/build}}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
STEPS="${STEPS:-200}"
WARMUP="${WARMUP:-20}"
CASES="${CASES:-seed-cnn:64 seed-cnn:1024 resnet-mini:256}"
RUN_TIMEOUT="${RUN_TIMEOUT:-180}"
STAMP="$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
bin="$BUILD/headroom_gpu_bench"
die() { echo "bench gpu: $*" >&2; exit 2; }

[[ -x "$bin" ]] || die "$bin is missing: it is built with the CUDA toolkit (cmake --build $BUILD --target headroom_gpu_bench)"
# a GPU at all? (fails fast with the loader's reason: no module, libraries, driver or device)
probe="$(mktemp)"
if ! timeout 120 "$bin" --preset seed-cnn --batch 8 --steps 1 --warmup 1 >"$probe" 2>&1; then
  reason="$(cat "$probe")"; rm -f "$probe"
  die "no GPU run possible: ${reason:-headroom_gpu_bench failed or timed out}"
fi
rm -f "$probe"

peer=""
for p in "${HEADROOM_TORCH_PYTHON:-}" "$(command -v python3 2>/dev/null)" /usr/bin/python3; do
  [[ -n "$p" && -x "$p" ]] || continue
  if timeout 60 "$p" -c "import torch" >/dev/null 2>&1; then peer="$p"; break; fi
done
report_py="$(command -v python3 || echo /usr/bin/python3)"
if [[ -n "$peer" ]]; then
  echo "PyTorch peer: $peer ($("$peer" -c 'import torch; print(torch.__version__, "cuda", torch.cuda.is_available())' 2>/dev/null))" >&2
else
  echo "warning: no python3 here imports torch; the PyTorch columns stay empty" >&2
fi

dir="$OUT/gpu-$STAMP"
mkdir -p "$dir"
: >"$dir/runs.jsonl"
for case in $CASES; do
  preset="${case%%:*}"; batch="${case##*:}"
  "$bin" --preset "$preset" --dump-spec "$dir/$preset.json" || die "could not write the $preset spec"
  for graphs in 0 1; do
    gflag=(); [[ $graphs == 1 ]] && gflag=(--graphs)
    echo "$preset batch $batch graphs $graphs: Headroom ..." >&2
    if ! timeout "$RUN_TIMEOUT" "$bin" --preset "$preset" --batch "$batch" --steps "$STEPS" --warmup "$WARMUP" \
        "${gflag[@]}" >>"$dir/runs.jsonl" 2>"$dir/err.txt"; then
      echo "{\"impl\": \"headroom\", \"preset\": \"$preset\", \"batch\": $batch, \"graphs\": $([[ $graphs == 1 ]] && echo true || echo false), \"error\": $("$report_py" -c 'import json,sys; print(json.dumps(sys.stdin.read()[-400:] or "failed or timed out"))' <"$dir/err.txt")}" >>"$dir/runs.jsonl"
    fi
    if [[ -n "$peer" ]]; then
      echo "$preset batch $batch graphs $graphs: PyTorch ..." >&2
      if ! timeout "$RUN_TIMEOUT" "$peer" "$ROOT/bench/gpu_torch.py" --spec "$dir/$preset.json" --batch "$batch" \
          --steps "$STEPS" --warmup "$WARMUP" "${gflag[@]}" 2>"$dir/err.txt" | sed "s/^{/{\"preset\": \"$preset\", /" >>"$dir/runs.jsonl" \
          || ! tail -1 "$dir/runs.jsonl" | grep -q '"impl": "pytorch"'; then
        echo "{\"impl\": \"pytorch\", \"preset\": \"$preset\", \"batch\": $batch, \"graphs\": $([[ $graphs == 1 ]] && echo true || echo false), \"error\": $("$report_py" -c 'import json,sys; print(json.dumps(sys.stdin.read()[-400:] or "failed or timed out"))' <"$dir/err.txt")}" >>"$dir/runs.jsonl"
      fi
    fi
  done
  # the product itself: `headroom train` on the same model and batch (random data, the same SGD), its whole
  # training loop's wall time per step from run.json (the step on the device, CUDA graph when it can)
  echo "$preset batch $batch: headroom train ..." >&2
  tdir="$(mktemp -d)"
  if timeout "$RUN_TIMEOUT" "$BUILD/headroom" train --preset "$preset" --data synthetic --batch "$batch" \
      --steps $((STEPS + WARMUP)) --optimizer sgd --lr 0.01 --momentum 0.9 --device cuda:0 --no-history \
      --out "$tdir/run" >"$dir/err.txt" 2>&1; then
    "$report_py" - "$tdir/run/run.json" "$preset" "$batch" >>"$dir/runs.jsonl" <<'PY' || echo "{\"impl\": \"headroom-train\", \"preset\": \"$preset\", \"batch\": $batch, \"graphs\": false, \"error\": \"run.json unreadable\"}" >>"$dir/runs.jsonl"
import json, sys
r = json.load(open(sys.argv[1]))
f = r.get("final", {})
ips = f.get("images_per_second") or 0
batch = int(sys.argv[3])
print(json.dumps({"impl": "headroom-train", "preset": sys.argv[2], "batch": batch, "graphs": False,
                  "ms_per_step": 1000.0 * batch / ips if ips else None,
                  "peak_ledger_bytes": ((r.get("memory") or {}).get("measured") or {}).get("peak_total"),
                  "device": r.get("device")}))
PY
  else
    echo "{\"impl\": \"headroom-train\", \"preset\": \"$preset\", \"batch\": $batch, \"graphs\": false, \"error\": $("$report_py" -c 'import json,sys; print(json.dumps(sys.stdin.read()[-400:] or "failed or timed out"))' <"$dir/err.txt")}" >>"$dir/runs.jsonl"
  fi
  rm -rf "$tdir"
done
rm -f "$dir/err.txt"
"$report_py" "$ROOT/bench/gpu_report.py" "$dir/runs.jsonl" "$OUT/gpu-$STAMP" --steps "$STEPS"
cp "$OUT/gpu-$STAMP.json" "$OUT/gpu-latest.json"
cp "$OUT/gpu-$STAMP.md" "$OUT/gpu-latest.md"
