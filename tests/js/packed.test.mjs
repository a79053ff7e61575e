// The package as users get it: `npm pack`, install the tarball's contents into a scratch application's
// node_modules, then run plain `node` (no Vitest, no Vite) on an ES-module and a CommonJS script, and
// type-check TypeScript consumers of both module kinds against the shipped declarations.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { CLASSIFIER_INPUT, CLASSIFIER_PROBS, TOLERANCE } from './expected.mjs';
import { ROOT, expectClose, expectEngineKernelPath, model } from './helpers.mjs';

let app;
let files;

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'onemodel-packed-'));
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: ROOT, encoding: 'utf8' });
  const [info] = JSON.parse(out);
  files = info.files.map((f) => f.path).sort();
  const target = join(app, 'node_modules', 'onemodel');
  mkdirSync(target, { recursive: true });
  execFileSync('tar', ['-xzf', join(app, info.filename), '-C', target, '--strip-components=1']);
  writeFileSync(join(app, 'package.json'), '{"name": "app", "private": true}\n');
});

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

const script = (loader) => `
const handlers = () => ['uncaughtException', 'unhandledRejection'].map((e) => process.listenerCount(e));
const before = handlers();
${loader}
const session = await InferenceSession.create(${JSON.stringify(model('classifier.onnx'))});
const out = await session.run({ x: new Tensor('float32', Float32Array.from(${JSON.stringify(CLASSIFIER_INPUT)}), [1, 4]) });
let kind;
try { await InferenceSession.create(${JSON.stringify(model('unsupported.onnx'))}); } catch (e) { kind = (e instanceof OneModelError) && e.kind; }
console.log(JSON.stringify({ probs: Array.from(out.probs.data), dims: out.probs.dims, kind, handlers: [before, handlers()], kernelPath: session.kernelPath }));
`;

function runNode(file, source) {
  writeFileSync(join(app, file), source);
  return JSON.parse(execFileSync(process.execPath, [join(app, file)], { cwd: app, encoding: 'utf8', timeout: 60_000 }));
}

describe('packed package', () => {
  test('ships the entries, declarations, both wasm loaders with one .wasm, the native addon, and nothing from the source tree', () => {
    for (const f of [
      'package.json',
      'dist/node/index.mjs',
      'dist/node/index.cjs',
      'dist/node/index.d.mts',
      'dist/node/index.d.cts',
      'dist/node/cjs/package.json',
      'dist/web/index.js',
      'dist/web/index.d.ts',
      'dist/wasm/onemodel-node.cjs',
      'dist/wasm/onemodel-web.mjs',
      'dist/wasm/onemodel.wasm',
      `dist/native/${process.platform}-${process.arch}/onemodel.node`,
      'dist/README.md',
      'LICENSE',
      'THIRD_PARTY_NOTICES',
    ]) {
      expect(files).toContain(f);
    }
    const top = ['package.json', 'README.md', 'LICENSE', 'THIRD_PARTY_NOTICES'];
    expect(files.filter((f) => !f.startsWith('dist/') && !top.includes(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.wasm'))).toEqual(['dist/wasm/onemodel.wasm']); // one copy
    const pkg = JSON.parse(readFileSync(join(app, 'node_modules', 'onemodel', 'package.json'), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.license).toBe('MIT');
  });

  test('node ESM application (import)', () => {
    const r = runNode(
      'esm.mjs',
      script("const { InferenceSession, Tensor, OneModelError } = await import('onemodel');"),
    );
    expectClose(expect, r.probs, CLASSIFIER_PROBS, TOLERANCE);
    expect(r.dims).toEqual([1, 3]);
    expect(r.kind).toBe('UnsupportedOperator');
    // The engine of this project (vitest.config.mjs): the addon by default, wasm when asked.
    expectEngineKernelPath(expect, r.kernelPath);
    // Loading the wasm module must not add process-wide error handlers to the application.
    expect(r.handlers[1]).toEqual(r.handlers[0]);
  });

  test('node CommonJS application (require)', () => {
    const body = script("const { InferenceSession, Tensor, OneModelError } = require('onemodel');");
    const r = runNode('cjs.cjs', `(async () => {${body}})().catch((e) => { console.error(e); process.exit(1); });`);
    expectClose(expect, r.probs, CLASSIFIER_PROBS, TOLERANCE);
    expect(r.kind).toBe('UnsupportedOperator');
    expectEngineKernelPath(expect, r.kernelPath);
    expect(r.handlers[1]).toEqual(r.handlers[0]);
  });

  test('TypeScript consumers type-check as ES module and as CommonJS', () => {
    const consumer = `
const t = new Tensor('float32', new Float32Array(4), [1, 4]);
const typed: Float32Array = t.data;
async function main(): Promise<number> {
  const s: InferenceSession = await InferenceSession.create('m.onnx', { mode: 'exact', graphOptimizationLevel: 'basic' });
  const out: Record<string, Tensor> = await s.run({ x: t }, ['probs']);
  const all: Record<string, Tensor> = await s.run({ x: t }, { logSeverityLevel: 3, tag: 'ort-style' });
  const into: Record<string, Tensor> = await s.run({ x: t }, { probs: null }, {});
  env.wasm.numThreads = 1;
  env.logLevel = 'error';
  // ORT's type names, as ORT-typed code writes them.
  const options: InferenceSession.SessionOptions = { executionProviders: ['cpu'], graphOptimizationLevel: 'layout', freeDimensionOverrides: { batch: 1 } };
  const feeds: InferenceSession.FeedsType = { x: t };
  const ret: InferenceSession.ReturnType = await (await InferenceSession.create(new ArrayBuffer(8), 0, 8, options)).run(feeds);
  const kind: Tensor.Type = t.type;
  const typedT: TypedTensor<'float32'> = new Tensor('float32', [1, 2]);
  const reshaped: Tensor = typedT.reshape([2, 1]);
  void ret; void kind; void reshaped;
  const names: readonly string[] = s.inputNames;
  try { await s.release(); } catch (e) { if (e instanceof OneModelError) { const k: string = e.kind; const ops: string[] = e.operators; return k.length + ops.length; } }
  return out.probs.size + names.length + typed.length + Object.keys(all).length + Object.keys(into).length;
}
void main;
// Building a model in code (docs/model-building.md section 7).
async function build(): Promise<Uint8Array> {
  const b: GraphBuilder = await GraphBuilder.create();
  const x: GraphValue = b.input('x', 'float32', ['batch', 4]);
  const y: GraphValue = x.matMul(b.constant(t.reshape([4, 1]))).relu();
  const dims: Dim[] = y.dims;
  const built: InferenceSession = await b.createSession({ y }, { inputSpecs: { x: [1, 4] }, mode: 'exact' });
  void dims; void built;
  return b.toOnnx({ y });
}
void build;
// Tracing an eager run (docs/model-building.md section 9).
async function trace(): Promise<Uint8Array> {
  await Tracer.ready();
  const tracer: Tracer = Tracer.begin();
  const x: EagerValue = tracer.input('x', t, ['batch']);
  const y: EagerValue = x.mul(EagerValue.from(t)).relu();
  const n: number = y.dims[0]!;
  return tracer.finish({ y: y.reshape([n * 4]) }).onnx;
}
void trace;
`;
    writeFileSync(
      join(app, 'esm.mts'),
      `import { InferenceSession, Tensor, OneModelError, env, GraphBuilder, type GraphValue, type Dim, EagerValue, Tracer, type TypedTensor } from 'onemodel';\n${consumer}`,
    );
    const cjsHeader = [
      "import onemodel = require('onemodel');",
      'const { InferenceSession, Tensor, OneModelError, env, GraphBuilder, EagerValue, Tracer } = onemodel;',
      'type EagerValue = onemodel.EagerValue;',
      'type Tracer = onemodel.Tracer;',
      'type GraphBuilder = onemodel.GraphBuilder;',
      'type GraphValue = onemodel.GraphValue;',
      'type Dim = onemodel.Dim;',
      'type InferenceSession = onemodel.InferenceSession;',
      'type Tensor = onemodel.Tensor;',
      'type TypedTensor<T extends onemodel.Tensor.Type> = onemodel.TypedTensor<T>;',
      'namespace InferenceSession { export type SessionOptions = onemodel.InferenceSession.SessionOptions; export type FeedsType = onemodel.InferenceSession.FeedsType; export type ReturnType = onemodel.InferenceSession.ReturnType; }',
      'namespace Tensor { export type Type = onemodel.Tensor.Type; }',
    ].join('\n');
    writeFileSync(join(app, 'cjs.cts'), `${cjsHeader}\n${consumer}`);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'node16',
          moduleResolution: 'node16',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ['esm.mts', 'cjs.cts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    let output = '';
    try {
      output = execFileSync(process.execPath, [tsc, '-p', join(app, 'tsconfig.json')], { cwd: app, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout}${e.stderr}`;
    }
    expect(output).toBe('');
  });
});
