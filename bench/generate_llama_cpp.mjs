// llama.cpp's side of scripts/bench generate (bench/generate.sh): node-llama-cpp 3.21.1's prebuilt CPU build
// (tests/runtimes/node_modules; no downloads, no build) decodes greedily from a GGUF file, as
// `headroom generate --temperature 0` does from the same weights, and prints one JSON object:
//   node generate_llama_cpp.mjs NODE_MODULES MODEL.gguf PROMPT_TEXT TOKENS THREADS CONTEXT
// {tokens, seconds, tokens_per_second, ids}: the wall time from the prompt's evaluation to the last new token
// (prompt included, as headroom generate's own figure), model loading and context creation outside it.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [modules, modelPath, prompt, tokensText, threadsText, contextText] = process.argv.slice(2);
const { getLlama, LlamaLogLevel } = await import(pathToFileURL(path.join(modules, "node-llama-cpp", "dist", "index.js")).href);
const llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, usePrebuiltBinaries: true });
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const n = Number(tokensText), threads = Number(threadsText), contextSize = Number(contextText);
const context = await model.createContext({ contextSize, batchSize: contextSize, threads });
const seq = context.getSequence();
const ids = [];
const t0 = process.hrtime.bigint();
for await (const token of seq.evaluate(Array.from(model.tokenize(prompt, false)), { temperature: 0 })) {
    ids.push(token);
    if (ids.length >= n) break;
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
await context.dispose();
await model.dispose();
console.log(JSON.stringify({ tokens: ids.length, seconds, tokens_per_second: ids.length / seconds, threads, ids }));
