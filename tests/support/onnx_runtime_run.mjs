// Runs an ONNX file in ONNX Runtime (onnxruntime-node, pinned in tests/runtimes) on float32 samples and writes
// its outputs: tests/runtime/test_onnx_export.cpp's reference. Never downloads anything.
//   node onnx_runtime_run.mjs NODE_MODULES MODEL.onnx INPUT.f32 SHAPE COUNT BATCH OUTPUT.f32
// SHAPE is one sample's shape ("1,28,28", "3"); the samples are fed BATCH at a time (the last batch smaller)
// as the graph's input "input"; "logits" of every sample is written in order, little-endian float32.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [modules, model, inputPath, shapeText, countText, batchText, outputPath] = process.argv.slice(2);
const ort = await import(pathToFileURL(join(modules, 'onnxruntime-node', 'dist', 'index.js')).href);
const shape = shapeText.split(',').map(Number);
const count = Number(countText), batch = Number(batchText);
const per = shape.reduce((a, b) => a * b, 1);
const bytes = readFileSync(inputPath);
const input = new Float32Array(bytes.buffer, bytes.byteOffset, count * per);
const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 2, interOpNumThreads: 1 });
let out = null, classes = 0;
for (let i = 0; i < count; i += batch) {
  const n = Math.min(batch, count - i);
  const x = new ort.Tensor('float32', input.slice(i * per, (i + n) * per), [n, ...shape]);
  const y = (await session.run({ input: x })).logits;
  if (!out) { classes = y.dims[1]; out = new Float32Array(count * classes); }
  if (y.dims[0] !== n || y.dims[1] !== classes) throw new Error(`logits of shape ${y.dims} for a batch of ${n}`);
  out.set(y.data, i * classes);
}
writeFileSync(outputPath, Buffer.from(out.buffer));
console.log(`${session.inputNames} -> ${session.outputNames}: ${count} samples, batch ${batch}, ${classes} classes`);
