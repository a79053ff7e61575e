// Threads of the wasm engine in Node (docs/wasm-threads.md): env.wasm.numThreads is read when the engine loads,
// sessions report the threads they got, exact outputs are the same bits at 1 and 2 threads and on the native
// engine, and idle Workers never keep a process alive. The engine is loaded here, in this file's own process,
// with 2 threads (the first wasm use, GraphBuilder.ready(), comes after the setting).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';

import { beforeAll, describe, expect, test } from 'vitest';

import { GraphBuilder, InferenceSession, Tensor, env } from 'onemodel';

import { ROOT } from './helpers.mjs';

let modelBytes;
let feeds;

// A matrix product big enough (128 x 384 by 384 x 384: 19M multiply-adds) that its chunks go to both threads,
// followed by a softmax over rows: inputs from a fixed integer recurrence, so every engine sees the same bits.
beforeAll(async () => {
  env.wasm.numThreads = 2;
  await GraphBuilder.ready();
  let state = 12345;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648 - 0.5;
  };
  const weights = Float32Array.from({ length: 384 * 384 }, next);
  const b = new GraphBuilder();
  const x = b.input('x', 'float32', [128, 384]);
  const y = x.matMul(b.constant(new Tensor('float32', weights, [384, 384]))).softmax(-1);
  modelBytes = b.toOnnx({ y });
  const x0 = Float32Array.from({ length: 128 * 384 }, next);
  feeds = () => ({ x: new Tensor('float32', x0.slice(), [128, 384]) });
});

const sha = (t) =>
  createHash('sha256')
    .update(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength))
    .digest('hex');

describe('wasm threads (Node)', () => {
  test('sessions report the threads asked for, capped by env.wasm.numThreads', async () => {
    const counts = [];
    for (const intraOpNumThreads of [0, 1, 2, 8]) {
      const s = await InferenceSession.create(modelBytes, { executionProviders: ['wasm'], intraOpNumThreads });
      expect(s.kernelPath).toBe('Wasm128');
      counts.push(s.threads);
      await s.release();
    }
    expect(counts).toEqual([2, 1, 2, 2]);
  });

  test('exact outputs are the same bits at 1 and 2 wasm threads and on the native engine', async () => {
    const hashes = [];
    for (const options of [
      { executionProviders: ['wasm'], intraOpNumThreads: 1 },
      { executionProviders: ['wasm'], intraOpNumThreads: 2 },
      { executionProviders: ['cpu'], intraOpNumThreads: 2 },
    ]) {
      const s = await InferenceSession.create(modelBytes, { mode: 'exact', ...options });
      const out = await s.run(feeds());
      hashes.push(sha(out.y));
      await s.release();
    }
    expect(new Set(hashes).size).toBe(1);
  });

  test('a process whose wasm engine has idle threads exits by itself', () => {
    const script = `
      const { InferenceSession, Tensor, env } = require(${JSON.stringify(join(ROOT, 'dist', 'node', 'index.cjs'))});
      env.wasm.numThreads = 3;
      (async () => {
        const s = await InferenceSession.create(${JSON.stringify(join(ROOT, 'testdata', 'classifier.onnx'))},
          { executionProviders: ['wasm'] });
        const out = await s.run({ x: new Tensor('float32', new Float32Array(8), [2, 4]) });
        console.log('threads', s.threads, Object.keys(out).length > 0);
      })();`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.error).toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('threads 3 true');
  });
});
