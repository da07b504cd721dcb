#!/usr/bin/env bash
# scripts/bench generate: `headroom generate` with the key/value cache against --no-kv-cache (every token
# re-runs the whole window: the path before the cache), greedy, THREADS threads (default 2), alternating
# rounds (ROUNDS, default 3), at contexts CONTEXTS (default "64 256": a one-token prompt, then context - 1
# new tokens), for each model:
#   llama-tiny: the preset (2 blocks of width 128, 4 heads / 2 key-value heads, 128 tokens; contexts above
#               128 are cut to 128), trained STEPS steps (default 20) on its own text;
#   llama-76m:  bench/models/llama-76m-config.json (12 blocks, width 768, 12 heads / 4 key-value heads,
#               SwiGLU 2048, byte vocabulary, 256 positions), trained 1 step (its tokens/s do not depend on
#               the weights).
# Reported per round: tokens/s from `headroom generate`'s own line (the generation's wall time, prompt
# included), and the ratio cached / uncached of the medians. The two paths give the same tokens (checked
# here on every run: the texts must be equal).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
ROUNDS="${ROUNDS:-3}"
STEPS="${STEPS:-20}"
THREADS="${THREADS:-2}"
CONTEXTS="${CONTEXTS:-64 256}"
MODELS="${MODELS:-llama-tiny llama-76m}"
mkdir -p "$OUT"
# HEADROOM: a headroom binary to use as it is (default: build/headroom, built first)
if [[ -n "${HEADROOM:-}" ]]; then H="$HEADROOM"; else
  cmake --build "$BUILD" -j"${BENCH_THREADS:-2}" --target headroom >/dev/null
  H="$BUILD/headroom"
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
report="$OUT/generate-$(date +%Y%m%d-%H%M%S).txt"
{
  echo "# headroom generate: key/value cache vs --no-kv-cache ($THREADS threads, $ROUNDS rounds)"
  echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
} | tee "$report"
for m in $MODELS; do
  case "$m" in
    llama-tiny) "$H" train --preset llama-tiny --steps "$STEPS" --threads "$THREADS" --out "$work/$m" --no-history --quiet >/dev/null; maxctx=128 ;;
    llama-76m) "$H" train --model-config "$ROOT/bench/models/llama-76m-config.json" --steps 1 --batch 1 --threads "$THREADS" \
                 --out "$work/$m" --no-history --quiet >/dev/null; maxctx=256 ;;
    *) echo "scripts/bench generate: unknown model $m" >&2; exit 2 ;;
  esac
  for ctx in $CONTEXTS; do
    ((ctx > maxctx)) && ctx=$maxctx
    n=$((ctx - 1))
    cached=(); full=()
    for ((r = 1; r <= ROUNDS; r++)); do
      for mode in cache full; do
        flag=(); [[ $mode == full ]] && flag=(--no-kv-cache)
        "$H" generate --run "$work/$m" --prompt $'\n' --tokens "$n" --temperature 0 --threads "$THREADS" "${flag[@]}" \
          >"$work/$mode.txt" 2>"$work/$mode.err"
        tps="$(sed -n 's/.*(\([0-9.]*\) tokens\/s.*/\1/p' "$work/$mode.err" | tail -1)"
        if [[ $mode == cache ]]; then cached+=("$tps"); else full+=("$tps"); fi
      done
      cmp -s "$work/cache.txt" "$work/full.txt" || { echo "scripts/bench generate: $m context $ctx: the texts differ" >&2; exit 1; }
    done
    med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    mc="$(med "${cached[@]}")"; mf="$(med "${full[@]}")"
    printf '%-10s context %3d: cached %s tokens/s (rounds %s), --no-kv-cache %s (rounds %s): %.2fx\n' \
      "$m" "$ctx" "$mc" "${cached[*]}" "$mf" "${full[*]}" "$(awk -v a="$mc" -v b="$mf" 'BEGIN {print a / b}')" | tee -a "$report"
  done
done
echo "written: $report"
