#!/usr/bin/env bash
# scripts/bench gguf: GGUF export of llama-3.2-1b-shaped random bf16 weights (2.5 GB, written once into
# WORK, default bench/out/gguf-work) as f16 and q8_0: export time, file size, peak RssAnon (bench/gguf_bench.py).
# Not a CI test: about 8 GB of disk while it runs (the weights, one GGUF at a time).
set -euo pipefail
ROOT="${BENCH_ROOT:-$(cd "$(dirname "$0")/.." && pwd -P)}"
BUILD="${BENCH_BUILD:-$ROOT/build}"
OUT="${BENCH_OUT:-$ROOT/bench/out}"
WORK="${WORK:-$OUT/gguf-work}"
PY=/usr/bin/python3
[[ -x "$PY" ]] || PY="$(command -v python3)"
mkdir -p "$OUT"
cmake --build "$BUILD" -j"${BENCH_THREADS:-2}" --target headroom >/dev/null
STAMP="$(date +%Y%m%d-%H%M%S)"
"$PY" "$ROOT/bench/gguf_bench.py" "$BUILD/headroom" "$WORK" "$OUT/gguf-$STAMP.json"
cp "$OUT/gguf-$STAMP.json" "$OUT/gguf-latest.json"
