// One engine, one model, one process (docs/bench-method.md): the JavaScript side of the bar runner.
//   node bench/worker.mjs --engine ort-node|ort-web|onemodel-wasm|onemodel-node --model FILE [--input NAME=FILE.npy]...
//        [--mode fast|exact] [--threads N] [--seconds S] [--reps N] [--save-outputs DIR] [--reshape NAME=FILE.npy]...
// Prints the line of `onemodel bench` (load_ms=... first_ms=... median_ms=... min_ms=... max_ms=...) and,
// with --save-outputs, writes the last call's outputs as DIR/<output>.npy for the output check. --reshape
// gives inputs a second value of another shape, timed after the repetitions (reshape_first_ms, reshape_min_ms).
//
// Settings per engine:
//   ort-node       onnxruntime-node, CPU provider, graphOptimizationLevel 'all', sequential execution,
//                  intraOpNumThreads = --threads, interOpNumThreads = 1
//   ort-web        onnxruntime-web's wasm backend in Node (SIMD build), numThreads = --threads, optimizations 'all'
//   onemodel-wasm  this repository's npm package (dist/, or ONEMODEL_PACKAGE=path to its Node entry) on its
//                  wasm engine, mode = --mode, env.wasm.numThreads = intraOpNumThreads = --threads
//   onemodel-node  the same package on its native addon (executionProviders ['cpu'], the default in Node),
//                  mode = --mode, intraOpNumThreads = --threads
// The model bytes are read before the clock starts, so load_ms is session creation from bytes; for the two
// wasm engines it includes instantiating their wasm module, which both do on the first create.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

import { readNpy, writeNpy } from './lib/npy.mjs';
import { measure, measureReshape, resultLine } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const a = { inputs: [], reshape: [], mode: 'fast', threads: 1, seconds: 1, reps: 3 };
  for (let i = 0; i < argv.length; i++) {
    const take = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--engine':
        a.engine = take();
        break;
      case '--model':
        a.model = take();
        break;
      case '--input':
      case '--reshape': {
        const flag = argv[i];
        const v = take();
        const eq = v.indexOf('=');
        if (eq <= 0) throw new Error(`${flag} expects NAME=FILE.npy, got '${v}'`);
        (flag === '--input' ? a.inputs : a.reshape).push([v.slice(0, eq), v.slice(eq + 1)]);
        break;
      }
      case '--mode':
        a.mode = take();
        break;
      case '--threads':
        a.threads = Number(take());
        break;
      case '--seconds':
        a.seconds = Number(take());
        break;
      case '--reps':
        a.reps = Number(take());
        break;
      case '--save-outputs':
        a.save = take();
        break;
      default:
        throw new Error(`unknown argument '${argv[i]}'`);
    }
  }
  if (!a.engine || !a.model) throw new Error('--engine and --model are required');
  if (!['fast', 'exact'].includes(a.mode)) throw new Error(`--mode expects fast or exact, got '${a.mode}'`);
  if (!Number.isInteger(a.threads) || a.threads < 1) throw new Error('--threads expects a positive integer');
  if (!(a.seconds > 0)) throw new Error('--seconds expects a positive number');
  if (!Number.isInteger(a.reps) || a.reps < 1) throw new Error('--reps expects a positive integer');
  return a;
}

// Each engine: { create(bytes) -> session, Tensor, run(session, feeds) -> outputs record }.
async function loadEngine(args) {
  if (args.engine === 'ort-node') {
    const ort = await import('onnxruntime-node');
    const options = {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      intraOpNumThreads: args.threads,
      interOpNumThreads: 1,
    };
    return { Tensor: ort.Tensor, create: (bytes) => ort.InferenceSession.create(bytes, options) };
  }
  if (args.engine === 'ort-web') {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = args.threads;
    ort.env.wasm.simd = true;
    const options = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'sequential' };
    return { Tensor: ort.Tensor, create: (bytes) => ort.InferenceSession.create(bytes, options) };
  }
  if (args.engine === 'onemodel-wasm' || args.engine === 'onemodel-node') {
    const wasm = args.engine === 'onemodel-wasm';
    const entry = process.env.ONEMODEL_PACKAGE ?? join(here, '..', 'dist', 'node', 'index.mjs');
    const om = await import(pathToFileURL(resolve(entry)).href);
    // The wasm engine takes its thread count when it loads (docs/wasm-threads.md), as ORT-web does.
    if (wasm) om.env.wasm.numThreads = args.threads;
    const options = { mode: args.mode, intraOpNumThreads: args.threads, executionProviders: [wasm ? 'wasm' : 'cpu'] };
    return {
      Tensor: om.Tensor,
      async create(bytes) {
        const session = await om.InferenceSession.create(bytes, options);
        // The addon falls back to wasm when it cannot load: that would be a mislabelled row.
        if ((session.kernelPath === 'Wasm128') !== wasm)
          throw new Error(`${args.engine} got kernel path ${session.kernelPath}`);
        if (session.threads !== args.threads)
          throw new Error(`${args.engine} got ${session.threads} thread(s), not ${args.threads}`);
        return session;
      },
    };
  }
  throw new Error(`unknown engine '${args.engine}' (ort-node, ort-web, onemodel-wasm, onemodel-node)`);
}

// Same stems as `onemodel run --save-outputs` (engine/cli/util.cc sanitize_output_name).
function outputStem(name, used) {
  const stem = name === '' ? '_' : name.replace(/[^A-Za-z0-9._-]/g, '_');
  let s = stem;
  for (let k = 2; used.has(s); k++) s = `${stem}_${k}`;
  used.add(s);
  return s;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const engine = await loadEngine(args);
  const bytes = new Uint8Array(readFileSync(args.model));

  let t0 = performance.now();
  const session = await engine.create(bytes);
  const loadMs = performance.now() - t0;

  const given = new Map(args.inputs.map(([name, file]) => [name, readNpy(file)]));
  const feeds = {};
  for (const name of session.inputNames) {
    const t = given.get(name);
    if (t === undefined) throw new Error(`input '${name}' needs --input ${name}=FILE.npy`);
    feeds[name] = new engine.Tensor(t.type, t.data, t.dims);
  }
  for (const name of given.keys()) {
    if (!session.inputNames.includes(name)) throw new Error(`the model has no input '${name}'`);
  }

  const {
    first_ms: firstMs,
    reps_ms: repsMs,
    outputs,
  } = await measure(() => session.run(feeds), { seconds: args.seconds, reps: args.reps });

  if (args.save) {
    mkdirSync(args.save, { recursive: true });
    const used = new Set();
    for (const name of session.outputNames) {
      const t = outputs[name];
      writeNpy(join(args.save, `${outputStem(name, used)}.npy`), { type: t.type, dims: t.dims, data: t.data });
    }
  }
  let reshape;
  if (args.reshape.length > 0) {
    const next = { ...feeds };
    for (const [name, file] of args.reshape) {
      if (!(name in next)) throw new Error(`--reshape names no input of the model: '${name}'`);
      const t = readNpy(file);
      next[name] = new engine.Tensor(t.type, t.data, t.dims);
    }
    reshape = await measureReshape(() => session.run(next), { seconds: args.seconds });
  }
  console.log(resultLine(loadMs, firstMs, repsMs, reshape));
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`error: ${e && e.message ? e.message : String(e)}`);
    process.exit(1);
  },
);
