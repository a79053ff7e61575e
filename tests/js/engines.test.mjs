// The two engines of the Node entry (node/src/index.ts): the native Node-API addon ('cpu', the default) and
// the wasm build ('wasm'). Engine choice, equal exact bits on both, concurrent runs, release while runs are
// pending, the event loop staying free during a native run, and memory returning after many sessions.
// Runs in both Vitest projects (vitest.config.mjs); tests about one engine say so in their names.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, test, vi } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import { CLASSIFIER_INPUT } from './expected.mjs';
import { ENGINE, NATIVE_KERNEL_PATHS, ROOT, bytesHex, expectEngineKernelPath, model, rejection } from './helpers.mjs';
import { oneNodeModel } from './onnx-writer.mjs';

const ADDON = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
const FLOAT = 1;

// Deterministic sign-mixed data (a small LCG), so products are long sums of unequal terms.
function data(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s >>> 8) / 16777216 - 0.5) * 2;
  }
  return out;
}

// y = x[m,k] * w[k,n], w an initializer of k*n floats.
function matmulModel(m, k, n, seed = 7) {
  return oneNodeModel({
    opType: 'MatMul',
    inputs: [{ name: 'x', elemType: FLOAT, dims: [m, k] }],
    initializers: [{ name: 'w', dims: [k, n], data: data(k * n, seed) }],
    outputs: [{ name: 'y', elemType: FLOAT, dims: [m, n] }],
  });
}

// y = a[m,k] * b[k,n], both graph inputs.
const productModel = (m, k, n) =>
  oneNodeModel({
    opType: 'MatMul',
    inputs: [
      { name: 'a', elemType: FLOAT, dims: [m, k] },
      { name: 'b', elemType: FLOAT, dims: [k, n] },
    ],
    outputs: [{ name: 'y', elemType: FLOAT, dims: [m, n] }],
  });

afterEach(() => vi.restoreAllMocks());

describe('engine choice', () => {
  test('the native addon is in the built package', () => {
    expect(existsSync(ADDON), ADDON).toBe(true);
  });

  test(`a session gets this project's engine by default (${ENGINE})`, async () => {
    const s = await InferenceSession.create(model('classifier.onnx'));
    expectEngineKernelPath(expect, s.kernelPath);
    await s.release();
  });

  test("executionProviders picks the engine: 'wasm', 'cpu' and { name: 'cpu' }", async () => {
    const wasm = await InferenceSession.create(model('classifier.onnx'), { executionProviders: ['wasm'] });
    expect(wasm.kernelPath).toBe('Wasm128');
    for (const eps of [['cpu'], [{ name: 'cpu' }], ['cpu', 'wasm']]) {
      const native = await InferenceSession.create(model('classifier.onnx'), { executionProviders: eps });
      expect(NATIVE_KERNEL_PATHS).toContain(native.kernelPath);
      await native.release();
    }
    await wasm.release();
  });

  test('an execution provider OneModel does not have is skipped with one warning', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    for (let i = 0; i < 2; i++) {
      const s = await InferenceSession.create(model('classifier.onnx'), { executionProviders: ['webgpu', 'wasm'] });
      expect(s.kernelPath).toBe('Wasm128');
      await s.release();
    }
    const messages = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('webgpu'));
    expect(messages).toHaveLength(1);
  });

  test('bad executionProviders values reject with InvalidArgument', async () => {
    for (const eps of ['cpu', [5], [{}], [null]]) {
      const e = await rejection(InferenceSession.create(model('classifier.onnx'), { executionProviders: eps }));
      expect(e).toBeInstanceOf(OneModelError);
      expect(e.kind).toBe('InvalidArgument');
    }
  });

  test('errors of the native engine carry the kind and the path', async () => {
    const e = await rejection(
      InferenceSession.create(join(ROOT, 'testdata', 'no-such-model.onnx'), { executionProviders: ['cpu'] }),
    );
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('Io');
    expect(e.source).toContain('no-such-model.onnx');
    const u = await rejection(InferenceSession.create(model('unsupported.onnx'), { executionProviders: ['cpu'] }));
    expect(u.kind).toBe('UnsupportedOperator');
  });
});

describe('exact mode gives the same bits on both engines', () => {
  const x = data(96 * 200, 3);
  const cases = [
    [
      'classifier.onnx',
      () => model('classifier.onnx'),
      { x: new Tensor('float32', Float32Array.from(CLASSIFIER_INPUT), [1, 4]) },
    ],
    ['MatMul 96x200x300', () => matmulModel(96, 200, 300), { x: new Tensor('float32', x, [96, 200]) }],
  ];
  for (const [name, source, feeds] of cases) {
    test(name, async () => {
      const hex = {};
      for (const [label, options] of [
        ['wasm', { executionProviders: ['wasm'] }],
        ['native t1', { executionProviders: ['cpu'], intraOpNumThreads: 1 }],
        ['native t2', { executionProviders: ['cpu'], intraOpNumThreads: 2 }],
      ]) {
        const s = await InferenceSession.create(source(), { ...options, mode: 'exact' });
        const out = await s.run(feeds);
        hex[label] = Object.fromEntries(Object.entries(out).map(([k, t]) => [k, bytesHex(t.data)]));
        await s.release();
      }
      expect(hex['native t1']).toEqual(hex.wasm);
      expect(hex['native t2']).toEqual(hex.wasm);
    });
  }
});

describe('concurrency and lifetime', () => {
  // About 1.8 GFLOP per run (over 10 ms at two threads on the bench machines): the addon runs calls it expects
  // to take under 5 ms on the JS thread (bindings/node/addon.cc kInlineRunUs), and these must leave it to overlap.
  const M = 1536;
  const K = 768;
  const N = 768;
  const feedsOf = (i) => ({
    a: new Tensor('float32', data(M * K, 100 + i), [M, K]),
    b: new Tensor('float32', data(K * N, 200 + i), [K, N]),
  });

  for (const mode of ['fast', 'exact']) {
    test(`Promise.all of 8 runs on one session and on 4 sessions equals sequential runs (${mode})`, async () => {
      const bytes = productModel(M, K, N);
      const options = { mode, intraOpNumThreads: 2 };
      const one = await InferenceSession.create(bytes, options);
      const sequential = [];
      for (let i = 0; i < 8; i++) sequential.push(bytesHex((await one.run(feedsOf(i))).y.data));
      const parallel = await Promise.all(Array.from({ length: 8 }, (_, i) => one.run(feedsOf(i))));
      expect(parallel.map((o) => bytesHex(o.y.data))).toEqual(sequential);
      const four = await Promise.all(Array.from({ length: 4 }, () => InferenceSession.create(bytes, options)));
      const mixed = await Promise.all(Array.from({ length: 8 }, (_, i) => four[i % 4].run(feedsOf(i))));
      expect(mixed.map((o) => bytesHex(o.y.data))).toEqual(sequential);
      await Promise.all([one, ...four].map((s) => s.release()));
    });
  }

  test('release() while runs are pending: each run gives its result or rejects with Disposed', async () => {
    const s = await InferenceSession.create(productModel(M, K, N), { intraOpNumThreads: 1 });
    const expected = bytesHex((await s.run(feedsOf(0))).y.data);
    const pending = Array.from({ length: 8 }, () => s.run(feedsOf(0)));
    await s.release();
    const settled = await Promise.allSettled(pending);
    for (const r of settled) {
      if (r.status === 'fulfilled') expect(bytesHex(r.value.y.data)).toBe(expected);
      else expect(r.reason.kind).toBe('Disposed');
    }
    expect((await rejection(s.run(feedsOf(0)))).kind).toBe('Disposed');
  });

  test.skipIf(ENGINE === 'wasm')(
    'a posted native run keeps the process alive until it settles, then lets it exit',
    () => {
      // A session's first run is posted to its run thread and settled through a thread-safe function, which keeps
      // Node's event loop alive only while a run is pending (bindings/node/addon.cc start_run): the script has no
      // other handle, so it would end before the result (referenced too little) or never (too much).
      const script = `
      const { InferenceSession, Tensor } = require(${JSON.stringify(join(ROOT, 'dist', 'node', 'index.cjs'))});
      (async () => {
        const s = await InferenceSession.create(${JSON.stringify(join(ROOT, 'testdata', 'classifier.onnx'))},
          { executionProviders: ['cpu'] });
        s.run({ x: new Tensor('float32', new Float32Array(8), [2, 4]) })
          .then((out) => console.log('settled', Object.keys(out).length));
      })();`;
      const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
      expect(r.error).toBeUndefined();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('settled 1');
    },
  );

  test.skipIf(ENGINE === 'wasm')('worker threads that end with a posted native run pending exit cleanly', () => {
    // Node deletes a thread-safe function when its environment goes, whoever holds it; a run finishing after
    // that must not call it (bindings/node/addon.cc CompletionGate: five workers in a row crashed the process
    // before), and the threads still finishing its run must find the addon's code mapped after Node unloads it
    // for the last worker (bindings/node/CMakeLists.txt -z nodelete: 1 in 10 runs of five workers crashed).
    // The product takes milliseconds, so each worker ends while its run is still on the run thread.
    const file = join(ROOT, 'build', `posted-run-${process.pid}.onnx`);
    writeFileSync(file, productModel(M, K, N));
    const script = `
      const { Worker } = require('node:worker_threads');
      const code = \`
        const { InferenceSession, Tensor } = require(${JSON.stringify(join(ROOT, 'dist', 'node', 'index.cjs'))});
        (async () => {
          const s = await InferenceSession.create(${JSON.stringify(file)}, { executionProviders: ['cpu'] });
          s.run({ a: new Tensor('float32', new Float32Array(${M * K}), [${M}, ${K}]),
                  b: new Tensor('float32', new Float32Array(${K * N}), [${K}, ${N}]) });
          process.exit(0);
        })();\`;
      (async () => {
        for (let i = 0; i < 10; i++)
          await new Promise((resolve, reject) => new Worker(code, { eval: true }).on('exit', resolve).on('error', reject));
        console.log('workers done');
      })();`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
    rmSync(file, { force: true });
    expect(r.error).toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('workers done');
  });

  test.skipIf(ENGINE === 'wasm' || process.platform !== 'linux')(
    'the native addon is never unloaded (its dynamic section says NODELETE)',
    () => {
      // The worker test above catches an unloaded addon only now and then (a run thread must still be in the
      // addon's code when Node unloads it); this checks the cause every time (bindings/node/CMakeLists.txt).
      const addon = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
      const r = spawnSync('readelf', ['-d', addon], { encoding: 'utf8' });
      expect(r.error).toBeUndefined();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/FLAGS_1.*NODELETE/);
    },
  );

  test.skipIf(ENGINE === 'wasm')('a long native run leaves the event loop free (timers fire during it)', async () => {
    // About 4 GFLOP on one thread: far longer than the 5 ms timer period on any machine.
    const n = 1024;
    const s = await InferenceSession.create(productModel(n, n, 2 * n), {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
    });
    const feeds = {
      a: new Tensor('float32', data(n * n, 1), [n, n]),
      b: new Tensor('float32', data(n * 2 * n, 2), [n, 2 * n]),
    };
    let ticks = 0;
    const timer = setInterval(() => {
      ticks++;
    }, 5);
    const t0 = performance.now();
    await s.run(feeds);
    const ms = performance.now() - t0;
    clearInterval(timer);
    await s.release();
    // A blocked loop would fire at most once, after the run. A quarter of the periods (at least 3) is the margin
    // for a loaded machine: a fresh-clone run of tools/test.sh saw 7 ticks in 81 ms beside the other suites.
    const want = Math.max(3, Math.min(10, Math.floor(ms / 5 / 4)));
    expect(ticks, `${ticks} ticks in ${ms.toFixed(1)} ms`).toBeGreaterThanOrEqual(want);
    expect(ms).toBeGreaterThan(50);
  });

  // A model with 4 MiB of weights: 200 leaked sessions would hold 800 MiB.
  const heavy = matmulModel(1, 1024, 1024, 11);
  const heavyFeeds = { x: new Tensor('float32', data(1024, 5), [1, 1024]) };
  const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

  test('memory returns after 200 create/run/release cycles', async () => {
    for (let i = 0; i < 20; i++) {
      const s = await InferenceSession.create(heavy);
      await s.run(heavyFeeds);
      await s.release();
    }
    const before = rssMiB();
    for (let i = 0; i < 200; i++) {
      const s = await InferenceSession.create(heavy);
      await s.run(heavyFeeds);
      await s.release();
    }
    const growth = rssMiB() - before;
    // Leaked, 200 sessions would hold 800 MiB; the margin is for the wasm heap's and malloc's own slack.
    expect(growth, `RSS grew ${growth.toFixed(1)} MiB`).toBeLessThan(100);
  });

  test.skipIf(typeof globalThis.gc !== 'function')(
    'sessions dropped without release() are freed by the garbage collector',
    async () => {
      const cycle = async () => {
        for (let i = 0; i < 10; i++) {
          const s = await InferenceSession.create(heavy);
          await s.run(heavyFeeds);
        }
      };
      const settle = async () => {
        for (let i = 0; i < 5; i++) {
          globalThis.gc();
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await cycle();
      await settle();
      const before = rssMiB();
      for (let k = 0; k < 10; k++) {
        await cycle();
        await settle();
      }
      const growth = rssMiB() - before;
      // Leaked, they would hold 400 MiB or more; before the addon trimmed the heap after freeing a model, glibc
      // kept about 170 MiB resident (bindings/node/addon.cc return_freed_memory).
      expect(growth, `RSS grew ${growth.toFixed(1)} MiB over 100 dropped sessions`).toBeLessThan(100);
    },
  );
});
