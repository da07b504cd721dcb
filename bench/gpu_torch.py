"""PyTorch's side of `scripts/bench gpu` (bench/gpu.sh): the same model spec (headroom_torch.build_model),
batch and optimizer as headroom_gpu_bench, trained on random data uploaded from pinned memory every step,
eager or with the whole step captured as a CUDA graph (PyTorch's "whole network capture"). Prints one JSON
object: ms/step from CUDA events, max_memory_allocated / max_memory_reserved, the device's used memory.
Exit 2 when torch has no CUDA device."""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headroom_torch import build_model  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--graphs", action="store_true")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("gpu_torch.py: torch %s has no CUDA device" % torch.__version__, file=sys.stderr)
        return 2
    torch.manual_seed(1)
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    with open(a.spec) as f:
        spec = json.load(f)
    dev = torch.device("cuda")
    model = build_model(spec).to(dev).train()
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    elif a.optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=a.lr, capturable=a.graphs)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, capturable=a.graphs)
    shape = [a.batch] + list(spec["input"])
    classes = spec["num_classes"]
    xs = [torch.randn(shape).pin_memory() for _ in range(4)]
    ys = [torch.randint(0, classes, (a.batch,)).pin_memory() for _ in range(4)]
    sx = torch.empty(shape, device=dev)
    sy = torch.empty((a.batch,), dtype=torch.long, device=dev)
    lowp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(a.precision)
    scaler = torch.cuda.amp.GradScaler() if a.precision == "fp16" and not a.graphs else None

    def compute():
        if lowp is not None:
            with torch.autocast("cuda", dtype=lowp, cache_enabled=False):
                loss = F.cross_entropy(model(sx), sy)
        else:
            loss = F.cross_entropy(model(sx), sy)
        if scaler:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return loss

    def upload(k):
        sx.copy_(xs[k % 4], non_blocking=True)
        sy.copy_(ys[k % 4], non_blocking=True)

    graph, static_loss = None, None
    if a.graphs:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for k in range(3):
                upload(k)
                opt.zero_grad(set_to_none=True)
                compute()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            static_loss = compute()

    losses = []

    def step(k):
        upload(k)
        if graph is not None:
            graph.replay()
            losses.append(static_loss.detach().clone())
        else:
            opt.zero_grad(set_to_none=True)
            losses.append(compute().detach())

    for k in range(a.warmup):
        step(k)
    torch.cuda.synchronize()
    losses.clear()
    torch.cuda.reset_peak_memory_stats()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for k in range(a.steps):
        step(a.warmup + k)
    end.record()
    end.synchronize()
    free_b, total_b = torch.cuda.mem_get_info()
    print(json.dumps({
        "impl": "pytorch",
        "torch": torch.__version__,
        "batch": a.batch,
        "precision": a.precision,
        "optimizer": a.optimizer,
        "graphs": a.graphs,
        "steps": a.steps,
        "ms_per_step": start.elapsed_time(end) / a.steps,
        "max_memory_allocated_bytes": torch.cuda.max_memory_allocated(),
        "max_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
        "device_used_bytes": total_b - free_b,
        "device_total_bytes": total_b,
        "device": torch.cuda.get_device_name(0),
        "loss_first": float(losses[0]) if losses else 0.0,
        "loss_last": float(losses[-1]) if losses else 0.0,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
