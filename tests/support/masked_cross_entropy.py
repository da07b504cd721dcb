"""PyTorch's cross_entropy(ignore_index=-100) for tests/unit/test_instruct_data.cpp.

usage: masked_cross_entropy.py LOGITS.f32 TARGETS.i64 N V
Prints the mean loss over the counted targets and the gradient of it over the logits (hex f32).
"""
import sys, torch
n, v = int(sys.argv[3]), int(sys.argv[4])
z = torch.frombuffer(bytearray(open(sys.argv[1], 'rb').read()), dtype=torch.float32).reshape(n, v).clone().requires_grad_(True)
y = torch.frombuffer(bytearray(open(sys.argv[2], 'rb').read()), dtype=torch.int64)
loss = torch.nn.functional.cross_entropy(z.double(), y, ignore_index=-100)
loss.backward()
print(repr(float(loss)))
sys.stdout.write(z.grad.float().numpy().tobytes().hex())
