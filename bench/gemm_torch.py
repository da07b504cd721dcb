"""PyTorch's side of scripts/bench cpu's GEMM rate (bench/gemm_bench.cpp is Headroom's): C = A @ B with A, B
n x n, f32 and bf16 (torch.matmul on bf16 tensors: oneDNN's bf16 matmul where the CPU has it, else PyTorch's
fallback), one untimed call, then --repeat timed calls (fewer once 20 s are spent); GFLOP/s = 2 n^3 / seconds, best and median. Prints
one JSON object.

usage: gemm_torch.py [--n 2048] [--threads 2] [--repeat 5]"""
import argparse
import json
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    out = {"peer": "pytorch", "torch": torch.__version__, "n": a.n, "threads": a.threads,
           "mkldnn_bf16": bool(getattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: False)())}
    flop = 2.0 * a.n ** 3
    for name, dt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        x = torch.rand(a.n, a.n).mul_(2).sub_(1).to(dt)
        y = torch.rand(a.n, a.n).mul_(2).sub_(1).to(dt)
        s, spent = [], 0.0
        for r in range(a.repeat + 1):
            t0 = time.perf_counter()
            torch.matmul(x, y)
            dt_s = time.perf_counter() - t0
            spent += dt_s
            if r:
                s.append(dt_s)
                if spent > 20:  # a slow path (bf16 without the CPU's bf16 instructions: ~10 s a call): enough
                    break
        s.sort()
        out[name] = {"best_gflops": flop / s[0] / 1e9, "median_gflops": flop / s[len(s) // 2] / 1e9, "seconds": s}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
