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
# llama.cpp on the same weights, when tests/runtimes/node_modules has node-llama-cpp (scripts/setup installs it;
# LLAMA_CPP=0 leaves it out): the run exported as an f32 GGUF file (`headroom export --gguf --type f32`), decoded
# greedily by bench/generate_llama_cpp.mjs (node-llama-cpp 3.21.1's prebuilt CPU build, THREADS threads, a context
# of the same length, the same one-token prompt and number of new tokens; its wall time from the prompt's
# evaluation to the last token), in the same rounds; the ratio cached / llama.cpp of the medians, and how many of
# its greedy tokens equal Headroom's (a model trained a step or two has near-ties, so they may part). LLAMA_THREADS
# (default THREADS) sets llama.cpp's threads: on a loaded machine its 2 threads wait at every barrier for a core
# (measured here, load 14 on 2 cores: llama-tiny 0.6 tokens/s with 2 threads, 39 with 1), so take figures quiet.
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
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "; simd=""
  for f in avx2 fma avx512f avx512_bf16 amx_bf16; do [[ "$flags" == *" $f "* ]] && simd+="$f "; done
  [[ "$flags" == *" avx512f "* ]] || simd+="(no AVX-512) "
  echo "# CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; flags: $simd; load average before: $(cut -d' ' -f1 /proc/loadavg)"
} | tee "$report"
MODULES="$ROOT/tests/runtimes/node_modules"
use_llama=0
if [[ "${LLAMA_CPP:-1}" != 0 && -d "$MODULES/node-llama-cpp" ]] && command -v node >/dev/null; then use_llama=1
else echo "# llama.cpp left out (LLAMA_CPP=0, or no tests/runtimes/node_modules/node-llama-cpp or node)" | tee -a "$report"; fi
for m in $MODELS; do
  case "$m" in
    llama-tiny) "$H" train --preset llama-tiny --steps "$STEPS" --threads "$THREADS" --out "$work/$m" --no-history --quiet >/dev/null; maxctx=128 ;;
    llama-76m) "$H" train --model-config "$ROOT/bench/models/llama-76m-config.json" --steps 1 --batch 1 --threads "$THREADS" \
                 --out "$work/$m" --no-history --quiet >/dev/null; maxctx=256 ;;
    *) echo "scripts/bench generate: unknown model $m" >&2; exit 2 ;;
  esac
  if ((use_llama)); then
    "$H" export "$work/$m" --gguf "$work/$m.gguf" --type f32 >/dev/null
  fi
  for ctx in $CONTEXTS; do
    ((ctx > maxctx)) && ctx=$maxctx
    n=$((ctx - 1))
    cached=(); full=(); lcpp=(); same=""
    modes=(cache full); ((use_llama)) && modes+=(llama)
    for ((r = 1; r <= ROUNDS; r++)); do
      order=("${modes[@]}")
      if ((r % 2 == 0)); then order=(); for ((i = ${#modes[@]} - 1; i >= 0; --i)); do order+=("${modes[i]}"); done; fi
      for mode in "${order[@]}"; do
        if [[ $mode == llama ]]; then
          node "$ROOT/bench/generate_llama_cpp.mjs" "$MODULES" "$work/$m.gguf" $'\n' "$n" "${LLAMA_THREADS:-$THREADS}" "$ctx" >"$work/llama.json"
          lcpp+=("$(sed -n 's/.*"tokens_per_second":\([0-9.e+-]*\).*/\1/p' "$work/llama.json")")
          continue
        fi
        flag=(); [[ $mode == full ]] && flag=(--no-kv-cache)
        "$H" generate --run "$work/$m" --prompt $'\n' --tokens "$n" --temperature 0 --threads "$THREADS" "${flag[@]}" \
          >"$work/$mode.txt" 2>"$work/$mode.err"
        tps="$(sed -n 's/.*(\([0-9.]*\) tokens\/s.*/\1/p' "$work/$mode.err" | tail -1)"
        if [[ $mode == cache ]]; then cached+=("$tps"); else full+=("$tps"); fi
      done
      cmp -s "$work/cache.txt" "$work/full.txt" || { echo "scripts/bench generate: $m context $ctx: the texts differ" >&2; exit 1; }
    done
    if ((use_llama)); then  # llama.cpp's greedy ids against Headroom's text (a byte vocabulary: id = byte)
      same="$("${BENCH_PYTHON:-python3}" -c '
import json, sys
ids = json.load(open(sys.argv[1]))["ids"]
ours = open(sys.argv[2], "rb").read()[1:]  # headroom generate prints the prompt ("\n") first
k = 0
while k < min(len(ids), len(ours)) and ids[k] == ours[k]: k += 1
print("%d/%d" % (k, len(ids)))' "$work/llama.json" "$work/cache.txt" 2>/dev/null || echo "?")"
    fi
    med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
    mc="$(med "${cached[@]}")"; mf="$(med "${full[@]}")"
    printf '%-10s context %3d: cached %s tokens/s (rounds %s), --no-kv-cache %s (rounds %s): %.2fx\n' \
      "$m" "$ctx" "$mc" "${cached[*]}" "$mf" "${full[*]}" "$(awk -v a="$mc" -v b="$mf" 'BEGIN {print a / b}')" | tee -a "$report"
    if ((use_llama)); then
      ml="$(med "${lcpp[@]}")"
      printf '%-10s context %3d: llama.cpp (f32 GGUF) %.1f tokens/s (rounds %s): Headroom cached / llama.cpp %.2fx; first %s greedy tokens equal\n' \
        "$m" "$ctx" "$ml" "$(printf '%.1f ' "${lcpp[@]}")" "$(awk -v a="$mc" -v b="$ml" 'BEGIN {print a / b}')" "$same" | tee -a "$report"
    fi
  done
done
echo "written: $report"
