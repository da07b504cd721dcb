// Runs a GGUF file in the real llama.cpp (node-llama-cpp 3.21.1, CPU build, no downloads) for the runtime
// tests: node gguf_llama.mjs NODE_MODULES REQUEST.json RESULT.json
// REQUEST: {model, context, texts: [...], prompt: [ids], tokens: N, scored: [ids]}
// RESULT:  {chat_template: the file's tokenizer.chat_template as llama.cpp's loader read it (null: none),
//           tokenizer_model: tokenizer.ggml.model, add_bos: tokenizer.ggml.add_bos_token,
//           texts: [[ids llama.cpp gives each text, no BOS added]],
//           greedy: [N ids after the prompt, temperature 0],
//           greedy_top: [[[id, p], [id, p]] the two most likely tokens at each greedy step, temperature 1],
//           scored: [log p of scored[i+1] after scored[0..i], for each i, temperature 1]}
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, requestFile, resultFile] = process.argv.slice(2);
const req = JSON.parse(fs.readFileSync(requestFile, "utf8"));
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(path.join(modules, "node-llama-cpp", "dist", "index.js")).href);

const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, usePrebuiltBinaries: true });
const model = await llama.loadModel({ modelPath: req.model, gpuLayers: 0 });
const out = { texts: [], greedy: [], greedy_top: [], scored: [] };
const tokenizerMeta = model.fileInfo?.metadata?.tokenizer ?? {};
out.chat_template = tokenizerMeta.chat_template ?? null;
out.tokenizer_model = tokenizerMeta.ggml?.model ?? null;
out.add_bos = tokenizerMeta.ggml?.add_bos_token ?? null;
for (const t of req.texts ?? []) out.texts.push(Array.from(model.tokenize(t, false)));

const full = { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } };
// the next-token distributions after each of `ids` but the last (one pass, the whole vocabulary)
async function distributions(ids) {
    const context = await model.createContext({ contextSize: req.context, batchSize: req.context, threads: 2 });
    const res = await context.getSequence().controlledEvaluate(ids.map((t) => [t, { generateNext: full }]));
    const d = ids.map((_, i) => res[i]?.next?.probabilities ?? new Map());
    await context.dispose();
    return d;
}

if (req.prompt && req.tokens > 0) {
    const context = await model.createContext({ contextSize: req.context, batchSize: req.context, threads: 2 });
    const seq = context.getSequence();
    let n = 0;
    for await (const token of seq.evaluate(req.prompt, { temperature: 0 })) {
        out.greedy.push(token);
        if (++n >= req.tokens) break;
    }
    await context.dispose();
    const d = await distributions([...req.prompt, ...out.greedy]);
    for (let i = req.prompt.length - 1; i < req.prompt.length - 1 + out.greedy.length; ++i)
        out.greedy_top.push(Array.from(d[i].entries()).slice(0, 2));
}

if (req.scored && req.scored.length > 1) {
    const d = await distributions(req.scored);
    for (let i = 0; i + 1 < req.scored.length; ++i) out.scored.push(Math.log(d[i].get(req.scored[i + 1]) ?? 0));
}
await model.dispose();
fs.writeFileSync(resultFile, JSON.stringify(out));
