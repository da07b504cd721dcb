"""scripts/bench gguf: `headroom export RUN --gguf FILE --type T` on llama-3.2-1b-shaped random weights.

Writes WORK/model.safetensors (bf16, as Llama 3.2 1B ships; Headroom's names and its model_spec metadata from
`headroom presets --json llama-3.2-1b`, the byte tokenizer), then exports it as f16 and q8_0 and reports, per
type: the export's wall time, the file's size and the export process's peak anonymous resident memory
(RssAnon from /proc/PID/status, sampled every 10 ms; the weights file itself is memory-mapped, so its pages
are file-backed and not counted). Usage: gguf_bench.py HEADROOM WORK_DIR OUT_JSON
"""
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

headroom, work, out_json = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
spec = json.loads(subprocess.check_output([headroom, 'presets', '--json', 'llama-3.2-1b']))
V, C, F, L, H, KV, D = 128256, 2048, 8192, 16, 32, 8, 64
tensors = [('model.embed_tokens.weight', (V, C))]
for i in range(L):
    p = f'model.layers.{i}.'
    tensors += [(p + 'input_layernorm.weight', (C,)), (p + 'self_attn.q_proj.weight', (H * D, C)),
                (p + 'self_attn.k_proj.weight', (KV * D, C)), (p + 'self_attn.v_proj.weight', (KV * D, C)),
                (p + 'self_attn.o_proj.weight', (C, H * D)), (p + 'post_attention_layernorm.weight', (C,)),
                (p + 'mlp.gate_proj.weight', (F, C)), (p + 'mlp.up_proj.weight', (F, C)),
                (p + 'mlp.down_proj.weight', (C, F))]
tensors += [('model.norm.weight', (C,))]
weights = os.path.join(work, 'model.safetensors')
if not os.path.exists(weights):
    header, at = {'__metadata__': {'format': 'pt', 'model_spec': json.dumps(spec), 'tokenizer': 'byte'}}, 0
    for name, shape in tensors:
        n = int(np.prod(shape)) * 2
        header[name] = {'dtype': 'BF16', 'shape': list(shape), 'data_offsets': [at, at + n]}
        at += n
    h = json.dumps(header).encode()
    h += b' ' * (-len(h) % 8)
    rng = np.random.default_rng(1)
    with open(weights + '.tmp', 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h)
        for name, shape in tensors:
            rows = shape[0] if len(shape) == 2 else 1
            step = max(1, (1 << 24) // (shape[-1]))
            for r in range(0, rows, step):
                k = min(step, rows - r) * shape[-1]
                x = (rng.standard_normal(k, dtype=np.float32) * 0.02) if len(shape) == 2 else np.ones(k, np.float32)
                f.write((x.view(np.uint32) >> 16).astype(np.uint16).tobytes())
    os.rename(weights + '.tmp', weights)


def rss_anon(pid):
    try:
        with open(f'/proc/{pid}/status') as s:
            for line in s:
                if line.startswith('RssAnon:'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


rows = []
for t in ('f16', 'q8_0'):
    gguf = os.path.join(work, f'llama-3.2-1b-{t}.gguf')
    t0 = time.monotonic()
    p = subprocess.Popen([headroom, 'export', weights, '--gguf', gguf, '--type', t], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    peak = 0
    while p.poll() is None:
        peak = max(peak, rss_anon(p.pid))
        time.sleep(0.01)
    secs = time.monotonic() - t0
    out = p.stdout.read().decode()
    if p.returncode != 0:
        sys.exit(f'export {t} failed: {out}')
    rows.append({'type': t, 'seconds': round(secs, 2), 'file_bytes': os.path.getsize(gguf), 'peak_rss_anon_bytes': peak})
    os.remove(gguf)
print(f"{'type':6} {'export s':>9} {'file GiB':>9} {'peak RssAnon MiB':>17}")
for r in rows:
    print(f"{r['type']:6} {r['seconds']:9.2f} {r['file_bytes'] / 2**30:9.3f} {r['peak_rss_anon_bytes'] / 2**20:17.1f}")
json.dump({'weights_bytes': os.path.getsize(weights), 'rows': rows}, open(out_json, 'w'), indent=1)
