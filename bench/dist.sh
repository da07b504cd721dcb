#!/usr/bin/env bash
# scripts/bench dist: 1 vs 2 CPU ranks (1 thread each, Open MPI on loopback) for seed-cnn and resnet-mini,
# every sharding stage, the same global batch: steps/s, samples/s, per-rank peak memory (the ledger),
# the share of the step each rank spent blocked on communication, payload per step. Driven by
# headroom_dist_bench (bench/dist_bench.cpp) through TrainingState until `headroom train --ranks N` exists.
# Environment (from scripts/bench): BENCH_ROOT BENCH_BUILD BENCH_OUT; STEPS (default 20), BATCH (64),
# MODELS ("seed-cnn resnet-mini"), STAGES ("dp zero1 zero2 zero3 tp-head pipeline"; tp-head: the last layer's
# columns split over the ranks, the body whole on each, every rank on the whole batch; pipeline: the layers in
# one stage per rank, 8 micro-batches a step in the 1F1B order; its 1-rank row is one process with those 8;
# zero3-offload: zero3 with parameters, gradients and the optimizer in host memory, --offload-params).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
STEPS="${STEPS:-20}"
BATCH="${BATCH:-64}"
MODELS="${MODELS:-seed-cnn resnet-mini}"
STAGES="${STAGES:-dp zero1 zero2 zero3 zero3-offload tp-head pipeline}"
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY="$(command -v python3)"
mkdir -p "$OUT"
command -v mpirun >/dev/null || { echo "dist: mpirun not found (Debian: openmpi-bin)" >&2; exit 2; }
echo "building headroom_dist_bench in $BUILD (if needed) ..." >&2
cmake --build "$BUILD" -j"${BENCH_THREADS:-2}" --target headroom_dist_bench >/dev/null
BIN="$BUILD/headroom_dist_bench"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe --bind-to none --timeout 600
        --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
export OMP_NUM_THREADS=1
load_before="$(cut -d' ' -f1 /proc/loadavg)"
echo "load average (1 min) before: $load_before on $(nproc --all) cores" >&2
results="$(mktemp)"; trap 'rm -f "$results"' EXIT
for model in $MODELS; do
  # one process without a communicator: the baseline
  echo "dist: $model, 1 rank, no sharding ..." >&2
  "$BIN" train --preset "$model" --stage none --batch "$BATCH" --steps "$STEPS" --threads 1 >>"$results"
  for stage in $STAGES; do
    for np in 1 2; do  # alternate 1 and 2 ranks within the same minute
      echo "dist: $model, $np rank(s), $stage ..." >&2
      "${MPIRUN[@]}" -np "$np" "$BIN" train --preset "$model" --stage "$stage" --batch "$BATCH" --steps "$STEPS" \
        --threads 1 >>"$results"
    done
  done
done
# a language model whose head is most of it (gpt-tiny, untied, 8192 tokens, 64 per window, batch 16): where a
# split head pays
if [[ " $STAGES " == *" tp-head "* && -z "${NO_LM:-}" ]]; then
  for stage in none tp-head; do
    for np in 1 2; do
      [[ "$stage" == none && "$np" == 2 ]] && continue
      echo "dist: gpt-tiny (untied, vocabulary 8192), $np rank(s), $stage ..." >&2
      "${MPIRUN[@]}" -np "$np" "$BIN" train --preset gpt-tiny --vocab 8192 --seq 64 --stage "$stage" --batch 16 \
        --steps "$STEPS" --threads 1 --optimizer adamw >>"$results"
    done
  done
fi
# the same language model on one process with its parameters in host memory: what the device keeps
if [[ " $STAGES " == *" zero3-offload "* && -z "${NO_LM:-}" ]]; then
  lm_stages="zero3 zero3-offload"
  [[ " $STAGES " == *" tp-head "* ]] || lm_stages="none $lm_stages"  # (the baseline row, else the tp-head loop's)
  for stage in $lm_stages; do
    echo "dist: gpt-tiny (untied, vocabulary 8192), 1 rank, $stage ..." >&2
    "${MPIRUN[@]}" -np 1 "$BIN" train --preset gpt-tiny --vocab 8192 --seq 64 --stage "$stage" --batch 16 \
      --steps "$STEPS" --threads 1 --optimizer adamw >>"$results"
  done
fi
load_after="$(cut -d' ' -f1 /proc/loadavg)"
"$PY" - "$results" "$OUT" "$load_before" "$load_after" "$(nproc --all)" <<'PYEOF'
import json, sys, time
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out, lb, la, cores = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def mib(b): return b / 1048576
lines = [f"Sharding on CPU ranks (1 thread each, Open MPI over loopback), global batch {rows[0]['batch']} (gpt-tiny: 16 windows of 64 tokens), Adam, "
         f"{rows[0]['steps']} steps; load average {lb} before, {la} after, {cores} cores", "",
         "| model | stage | ranks | steps/s | vs 1 process | peak memory per rank | host per rank | communication share | payload per step | host<->device per step |",
         "|---|---|---|---|---|---|---|---|---|---|"]
for model in dict.fromkeys(r["model"] for r in rows):
    rs = [r for r in rows if r["model"] == model]
    base = next(r for r in rs if r["stage"] == "none")
    for r in rs:
        peaks = " / ".join(f"{mib(p):.2f}" for p in r["peak_bytes_per_rank"]) + " MiB"
        share = " / ".join(f"{100 * s:.0f}%" for s in r["comm_wait_share_per_rank"])
        host = " / ".join(f"{mib(p):.2f}" for p in r.get("host_peak_bytes_per_rank", [0])) + " MiB"
        lines.append(f"| {model} | {r['stage']} | {r['ranks']} | {r['steps_per_second']:.1f} | "
                     f"{r['steps_per_second'] / base['steps_per_second']:.2f}x | {peaks} | {host} | {share} | "
                     f"{mib(r['comm_payload_bytes_per_step']):.2f} MiB | {mib(r.get('offload_bytes_per_step', 0)):.2f} MiB |")
lines += ["", "communication share: the part of the step a rank's host spent blocked waiting for a collective",
          "(MPI advances the non-blocking collectives inside MPI calls, at unit boundaries and in the waits)."]
text = "\n".join(lines) + "\n"
print(text)
stamp = time.strftime("%Y%m%d-%H%M%S")
for name in (f"dist-{stamp}", "dist-latest"):
    open(f"{out}/{name}.md", "w").write(text)
    json.dump({"load_before": lb, "load_after": la, "rows": rows}, open(f"{out}/{name}.json", "w"), indent=1)
PYEOF
