"""PyTorch peer of `headroom train` for scripts/bench cpu: trains the torch.nn equivalent of a Headroom
model spec on Fashion-MNIST with the same data, normalisation, batch, optimizer and thread count, and
times the training loop the way Headroom's bench does: loop_seconds, the loop's wall time from its first
batch to its last step (batch assembly, the steps, the loss and accuracy read back; data loading and
evaluation outside it), and each step's upload + forward + loss + backward + optimizer step.

usage: /usr/bin/python3 bench/torch_reference.py --spec SPEC.json [--data DIR] [--epochs 2] [--batch 64]
       [--lr 0.01] [--momentum 0.5] [--threads T] [--seed 1] [--out RESULT.json]
Prints one JSON object (and writes it to --out): images_per_second, test_accuracy, per-epoch figures.
Runs with Debian's python3-torch (/usr/bin/python3)."""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headroom_torch import build_model, load_fashion_mnist  # noqa: E402


def evaluate(model, x, y, batch):
    model.eval()
    correct, loss_sum = 0, 0.0
    with torch.no_grad():
        for i in range(0, x.shape[0], batch):
            logits = model(x[i:i + batch])
            loss_sum += float(F.cross_entropy(logits, y[i:i + batch], reduction="sum"))
            correct += int((logits.argmax(1) == y[i:i + batch]).sum())
    model.train()
    return correct / x.shape[0], loss_sum / x.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True, help="model spec JSON (headroom presets --json NAME)")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--steps", type=int, default=0, help="stop after this many steps (0: run all epochs)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--momentum", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--test-limit", type=int, default=0, help="evaluate on the first N test images (0: all)")
    ap.add_argument("--train-limit", type=int, default=0, help="train on the first N training images (0: all)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    with open(a.spec) as f:
        spec = json.load(f)
    smoothing = float(spec.get("loss", {}).get("label_smoothing", 0.0))
    if spec.get("loss", {}).get("type", "cross_entropy") != "cross_entropy":
        raise SystemExit("torch_reference.py: only cross_entropy models are supported")
    model = build_model(spec)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)

    t_load = time.perf_counter()
    train_x, train_y, test_x, test_y = load_fashion_mnist(a.data)  # normalised (x/255 - 0.2860) / 0.3530
    if a.test_limit:
        test_x, test_y = test_x[:a.test_limit], test_y[:a.test_limit]
    if a.train_limit:
        train_x, train_y = train_x[:a.train_limit], train_y[:a.train_limit]
    load_seconds = time.perf_counter() - t_load
    n = train_x.shape[0]
    gen = torch.Generator().manual_seed(a.seed)

    # Warm-up outside the timer is NOT done: Headroom times its first step too.
    epochs, train_seconds, samples, step, step_ms, step_cpu_ms = [], 0.0, 0, 0, [], []
    loop_seconds = 0.0
    for epoch in range(1, a.epochs + 1):
        if a.steps and step >= a.steps:
            break
        perm = torch.randperm(n, generator=gen)
        epoch_seconds, seen, loss_sum, correct = 0.0, 0, 0.0, 0
        loop_t0 = time.perf_counter()  # the training loop's wall time: batches, steps and bookkeeping
        for i in range(0, n, a.batch):  # no drop_last, like Headroom's loader
            if a.steps and step >= a.steps:
                break
            step += 1
            idx = perm[i:i + a.batch]
            xb, yb = train_x[idx], train_y[idx]  # batch assembly: the data loader's job, not timed
            t0 = time.perf_counter()
            c0 = time.process_time()
            opt.zero_grad(set_to_none=False)
            logits = model(xb)
            loss = F.cross_entropy(logits, yb, label_smoothing=smoothing)
            loss.backward()
            opt.step()
            dt = time.perf_counter() - t0
            step_ms.append(1000.0 * dt)
            step_cpu_ms.append(1000.0 * (time.process_time() - c0))
            epoch_seconds += dt
            seen += xb.shape[0]
            loss_sum += float(loss) * xb.shape[0]
            correct += int((logits.detach().argmax(1) == yb).sum())
        loop_seconds += time.perf_counter() - loop_t0
        train_seconds += epoch_seconds
        samples += seen
        test_acc, test_loss = evaluate(model, test_x, test_y, 1000)
        epochs.append({"epoch": epoch, "train_loss": loss_sum / seen, "train_accuracy": correct / seen,
                       "test_loss": test_loss, "test_accuracy": test_acc,
                       "images_per_second": seen / epoch_seconds, "train_seconds": epoch_seconds})
        print("epoch %d: train_loss=%.4f test_accuracy=%.4f images/s=%.0f" %
              (epoch, loss_sum / seen, test_acc, seen / epoch_seconds), file=sys.stderr)

    result = {
        "peer": "pytorch",
        "torch_version": torch.__version__,
        "threads": torch.get_num_threads(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", ""),
        "mkldnn": torch.backends.mkldnn.is_available(),
        "batch": a.batch, "lr": a.lr, "momentum": a.momentum, "epochs": a.epochs,
        "data_load_seconds": load_seconds,
        "train_seconds": train_seconds,
        "images_per_second": samples / train_seconds,
        "loop_seconds": loop_seconds,
        "loop_samples": samples,
        "loop_images_per_second": samples / loop_seconds,
        "steps": step,
        "median_step_ms": sorted(step_ms)[len(step_ms) // 2] if step_ms else 0.0,
        "step_ms": step_ms,
        # diagnostic (meaningful with --threads 1): the process's CPU time per step
        "median_step_cpu_ms": sorted(step_cpu_ms)[len(step_cpu_ms) // 2] if step_cpu_ms else 0.0,
        "test_accuracy": epochs[-1]["test_accuracy"],
        "test_loss": epochs[-1]["test_loss"],
        "epoch_results": epochs,
    }
    text = json.dumps(result, indent=2)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
