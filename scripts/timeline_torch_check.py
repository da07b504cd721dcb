#!/usr/bin/python3
"""PyTorch's view of one training step of seed-cnn (docs/timeline.md, issue 47), the independent check of
Headroom's step timeline: torch.profiler with profile_memory=True on the same model, batch and optimizer.

Prints one JSON object: the order in which the forward, backward and update ranges start, and the net bytes
allocated inside the forward range (what is alive at the end of the forward: saved tensors and the logits),
per the profiler's memory events. tests/unit/test_step_timeline.cpp compares both with Headroom's timeline.

usage: timeline_torch_check.py [BATCH]   (CPU; PyTorch 1.13)
"""
import json
import sys

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function


def seed_cnn():
    # core/nn/model_spec_presets.cpp "seed-cnn" (PyTorch's MNIST example), 28x28 input
    return nn.Sequential(nn.Conv2d(1, 10, 5), nn.MaxPool2d(2), nn.ReLU(), nn.Conv2d(10, 20, 5), nn.MaxPool2d(2),
                         nn.ReLU(), nn.Flatten(), nn.Linear(320, 50), nn.ReLU(), nn.Linear(50, 10))


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    torch.manual_seed(0)
    model = seed_cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 1, 28, 28)
    y = torch.randint(0, 10, (batch,))
    loss_fn = nn.CrossEntropyLoss()
    # a first step, so the gradients and the momentum exist (the first steady step is the second)
    loss_fn(model(x), y).backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with record_function("forward"):
            logits = model(x)
        with record_function("loss"):
            loss = loss_fn(logits, y)
        with record_function("backward"):
            loss.backward()
        with record_function("update"):
            opt.step()
    ranges = [e for e in prof.events() if e.name in ("forward", "loss", "backward", "update")]
    ranges.sort(key=lambda e: e.time_range.start)
    fwd = [e for e in ranges if e.name == "forward"][0]
    out = {
        "torch": torch.__version__,
        "batch": batch,
        "order": [e.name for e in ranges],
        "forward_net_bytes": int(fwd.cpu_memory_usage),
        "logits_bytes": logits.numel() * logits.element_size(),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
