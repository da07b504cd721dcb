"""Checks that a Headroom model.safetensors loads into the equivalent torch.nn model with
load_state_dict(strict=True), and that torch computes the same logits as Headroom on the same inputs.
usage: torch_interop.py MODEL.safetensors INPUTS.f32 LOGITS.f32 N
(INPUTS/LOGITS: raw little-endian float32 arrays written by the test). Prints max abs difference."""
import json
import sys

import numpy as np
import torch

sys.path.insert(0, __import__("os").path.dirname(__file__))
from headroom_torch import build_model, read_safetensors  # noqa: E402

tensors, meta = read_safetensors(sys.argv[1])
spec = json.loads(meta["model_spec"])
model = build_model(spec)
missing = model.load_state_dict(tensors, strict=True)
model.eval()
n = int(sys.argv[4])
x = torch.from_numpy(np.fromfile(sys.argv[2], dtype=np.float32).reshape([n] + spec["input"]))
ours = np.fromfile(sys.argv[3], dtype=np.float32).reshape(n, -1)
with torch.no_grad():
    theirs = model(x).numpy()
diff = float(np.abs(theirs - ours).max())
print(json.dumps({"loaded": len(tensors), "max_abs_diff": diff}))
sys.exit(0 if diff < 1e-4 else 1)
