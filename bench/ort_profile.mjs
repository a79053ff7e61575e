// ONNX Runtime's time per node, for bench/compare_nodes.py: runs a model on onnxruntime-node with profiling
// on (CPU provider, optimizations 'all', sequential, the given intra-op threads), warms up, profiles RUNS
// calls, and prints one JSON object: { run_ms, nodes: [{ name, op, ms }] }, ms per call from the profile's
// `*_kernel_time` events. ORT names a node of its optimized graph after its output (`X_output_0_nchwc`), and a
// fused node after the last operator it absorbed; compare_nodes.py maps those back to the ONNX graph.
//   node bench/ort_profile.mjs MODEL THREADS [NAME=FILE.npy]...
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { readNpy } from './lib/npy.mjs';

const [model, threads, ...inputs] = process.argv.slice(2);
if (!model || !threads) throw new Error('usage: node bench/ort_profile.mjs MODEL THREADS [NAME=FILE.npy]...');
const ort = await import('onnxruntime-node');
const feeds = {};
for (const arg of inputs) {
  const eq = arg.indexOf('=');
  const { type, dims, data } = readNpy(arg.slice(eq + 1));
  feeds[arg.slice(0, eq)] = new ort.Tensor(type, data, dims);
}
const dir = mkdtempSync(join(tmpdir(), 'ort-profile-'));
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: Number(threads),
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  executionMode: 'sequential',
  enableProfiling: true,
  profileFilePrefix: join(dir, 'p'),
});
const warm = 5;
for (let i = 0; i < warm; ++i) await session.run(feeds);
const t0 = performance.now();
let runs = 0;
while (runs < 3 || (performance.now() - t0 < 1000 && runs < 1000)) {
  await session.run(feeds);
  ++runs;
}
const runMs = (performance.now() - t0) / runs;
session.endProfiling();
const file = readdirSync(dir).find((f) => f.endsWith('.json'));
const events = JSON.parse(readFileSync(join(dir, file), 'utf8'));
rmSync(dir, { recursive: true, force: true });
const perNode = new Map();
for (const e of events) {
  if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
  const name = e.name.slice(0, -'_kernel_time'.length);
  const n = perNode.get(name) ?? { name, op: e.args.op_name, us: 0 };
  n.us += e.dur;
  perNode.set(name, n);
}
// The profile covers the warm-up calls too.
const nodes = [...perNode.values()].map((n) => ({ name: n.name, op: n.op, ms: n.us / 1000 / (runs + warm) }));
console.log(JSON.stringify({ run_ms: runMs, nodes }));
