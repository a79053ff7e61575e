// onnxruntime-common's argument forms that ORT-written clients use: run(feeds, runOptions),
// run(feeds, fetches, runOptions) with fetches as names or as an object of name -> null | preallocated Tensor,
// and the `env` object. Expected values: tests/js/expected.mjs (numpy-computed in tools/make_testdata.py).
import { readFileSync } from 'node:fs';

import { afterEach, describe, expect, test, vi } from 'vitest';

import { InferenceSession, OneModelError, Tensor, env } from 'onemodel';

import { SCORER_BEST, SCORER_BIAS, SCORER_FEATURES, SCORER_SCORE } from './expected.mjs';
import { model, rejection } from './helpers.mjs';

const feeds = () => ({
  features: new Tensor('float32', Float32Array.from(SCORER_FEATURES), [2, 3]),
  bias: new Tensor('float32', Float32Array.from(SCORER_BIAS), [1, 2]),
});

afterEach(() => vi.restoreAllMocks());

describe('run() argument forms', () => {
  test('run(feeds, runOptions) returns every output', async () => {
    const s = await InferenceSession.create(model('scorer.onnx'));
    const out = await s.run(feeds(), { logSeverityLevel: 3, tag: 'frame 1' });
    expect(Object.keys(out).sort()).toEqual(['best', 'score']);
    expect(Array.from(out.score.data)).toEqual(SCORER_SCORE);
    await s.release();
  });

  test('run(feeds, names, runOptions) and run(feeds, { name: null })', async () => {
    const s = await InferenceSession.create(model('scorer.onnx'));
    const a = await s.run(feeds(), ['best'], { tag: 'x' });
    expect(Object.keys(a)).toEqual(['best']);
    expect(Array.from(a.best.data)).toEqual(SCORER_BEST);
    const b = await s.run(feeds(), { score: null });
    expect(Object.keys(b)).toEqual(['score']);
    expect(Array.from(b.score.data)).toEqual(SCORER_SCORE);
    await s.release();
  });

  test('a preallocated output tensor is filled and returned', async () => {
    const s = await InferenceSession.create(model('scorer.onnx'));
    const target = new Tensor('float32', new Float32Array(4), [2, 2]);
    const out = await s.run(feeds(), { score: target, best: null }, {});
    expect(out.score).toBe(target);
    expect(Array.from(target.data)).toEqual(SCORER_SCORE);
    expect(Array.from(out.best.data)).toEqual(SCORER_BEST);
    const wrong = await rejection(s.run(feeds(), { score: new Tensor('float32', new Float32Array(3), [3]) }));
    expect(wrong).toBeInstanceOf(OneModelError);
    expect(wrong.kind).toBe('InvalidInput');
    expect(wrong.message).toContain("output 'score'");
    await s.release();
  });

  test('bad second and third arguments reject with InvalidArgument', async () => {
    const s = await InferenceSession.create(model('scorer.onnx'));
    for (const args of [[[]], ['best'], [5], [{ tag: 'x' }, {}], [['best'], 'options'], [{ best: null }, 7]]) {
      const e = await rejection(s.run(feeds(), ...args));
      expect(e, JSON.stringify(args)).toBeInstanceOf(OneModelError);
      expect(e.kind).toBe('InvalidArgument');
    }
    const unknown = await rejection(s.run(feeds(), ['nope']));
    expect(unknown.kind).toBe('InvalidInput');
    await s.release();
  });
});

describe('env', () => {
  test('ORT set-up code runs: env.wasm.numThreads, env.logLevel', async () => {
    expect(typeof env).toBe('object');
    expect(env.wasm).toBeTypeOf('object');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    // As in a page served without COOP/COEP: no shared memory for Workers, so threads are refused with a
    // notice (in Node itself they run: tests/js/wasm-threads.test.mjs).
    globalThis.crossOriginIsolated = false;
    env.wasm.numThreads = 4;
    env.logLevel = 'error';
    let s = await InferenceSession.create(model('scorer.onnx'), { executionProviders: ['wasm'] });
    await s.release();
    expect(warn.mock.calls.filter((c) => String(c[0]).includes('numThreads'))).toHaveLength(0);
    env.logLevel = 'warning';
    for (let i = 0; i < 2; i++) {
      s = await InferenceSession.create(model('scorer.onnx'), { executionProviders: ['wasm'] });
      await s.release();
    }
    const notices = warn.mock.calls.filter((c) => String(c[0]).includes('numThreads'));
    expect(notices).toHaveLength(1);
    expect(String(notices[0][0])).toContain('cross-origin isolated');
    env.wasm.numThreads = 1;
    delete globalThis.crossOriginIsolated;
  });
});

describe('Tensor: ORT members and conversions', () => {
  test("float16 from numbers stores the rounded bits (numpy's float64 -> float16 values)", () => {
    // np.array(x, dtype=np.float64).astype(np.float16).view(np.uint16) for each x.
    const cases = [
      [1.5, 0x3e00],
      [-2, 0xc000],
      [65504, 0x7bff],
      [65519.99, 0x7bff],
      [65520, 0x7c00],
      [1e-8, 0],
      [5.960464477539063e-8, 0x0001],
      [0.1, 0x2e66],
      [2049, 0x6800],
      [2051, 0x6802],
      // 1 + 2^-11 + 2^-30 rounds up directly; through float32 it would be a tie rounded down to 1.0.
      [1 + 2 ** -11 + 2 ** -30, 0x3c01],
      [NaN, 0x7e00],
      [-0, 0x8000],
      [Infinity, 0x7c00],
    ];
    const t = new Tensor(
      'float16',
      cases.map((c) => c[0]),
    );
    expect(Array.from(t.data)).toEqual(cases.map((c) => c[1]));
  });

  test('bfloat16 from numbers: float32 first, then ties to even', () => {
    // 0.1 is 0x3DCCCCCD as float32; its low half 0xCCCD rounds up.
    const t = new Tensor('bfloat16', [1.5, 0.1, -3, NaN]);
    expect(Array.from(t.data)).toEqual([0x3fc0, 0x3dcd, 0xc040, 0x7fc0]);
  });

  test.skipIf(typeof globalThis.Float16Array !== 'function')('a Float16Array is a float16 tensor', () => {
    const t = new Tensor(new globalThis.Float16Array([1.5, -2]), [2]);
    expect(t.type).toBe('float16');
    expect(Array.from(t.data)).toEqual([0x3e00, 0xc000]);
  });

  test('plain arrays without a type: numbers float32, booleans bool; strings are refused by name', () => {
    expect(new Tensor([1, 2.5]).type).toBe('float32');
    const b = new Tensor([true, false, true], [3]);
    expect(b.type).toBe('bool');
    expect(Array.from(b.data)).toEqual([1, 0, 1]);
    for (const make of [() => new Tensor('string', ['a']), () => new Tensor(['a', 'b'])]) {
      let e;
      try {
        make();
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(OneModelError);
      expect(e.kind).toBe('Unsupported');
      expect(e.message).toContain('string');
    }
  });

  test('location, getData, dispose and reshape', async () => {
    const t = new Tensor('float32', Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]);
    expect(t.location).toBe('cpu');
    expect(await t.getData()).toBe(t.data);
    const r = t.reshape([3, 2]);
    expect(r.dims).toEqual([3, 2]);
    expect(r.data).toBe(t.data);
    t.dispose();
    let e;
    try {
      t.reshape([4]);
    } catch (x) {
      e = x;
    }
    expect(e.kind).toBe('InvalidInput');
  });
});

describe('InferenceSession.create and options: ORT forms', () => {
  const scorerBytes = () => new Uint8Array(readFileSync(model('scorer.onnx')));

  test('create(buffer, byteOffset, byteLength) and a SharedArrayBuffer model', async () => {
    const bytes = scorerBytes();
    const big = new ArrayBuffer(bytes.length + 24);
    new Uint8Array(big, 16, bytes.length).set(bytes);
    const a = await InferenceSession.create(big, 16, bytes.length, { graphOptimizationLevel: 'layout' });
    expect(Array.from((await a.run(feeds())).score.data)).toEqual(SCORER_SCORE);
    await a.release();
    const sab = new SharedArrayBuffer(bytes.length);
    new Uint8Array(sab).set(bytes);
    const b = await InferenceSession.create(sab);
    const f = feeds();
    const shared = new Float32Array(new SharedArrayBuffer(24));
    shared.set(f.features.data);
    expect(
      Array.from((await b.run({ features: new Tensor('float32', shared, [2, 3]), bias: f.bias })).score.data),
    ).toEqual(SCORER_SCORE);
    await b.release();
    for (const [off, len] of [
      [-1, 4],
      [bytes.length + 25, undefined],
      [16, bytes.length + 9],
    ]) {
      const e = await rejection(InferenceSession.create(big, off, len));
      expect(e.kind, `${off} ${len}`).toBe('InvalidArgument');
    }
  });

  test('an unknown option key gets one notice naming it; ORT keys are accepted', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const s = await InferenceSession.create(model('scorer.onnx'), {
      graphOptimisationLevel: 'all',
      executionMode: 'sequential',
      interOpNumThreads: 1,
      logSeverityLevel: 3,
    });
    await s.release();
    const notes = warn.mock.calls.map((c) => String(c[0]));
    expect(notes.filter((m) => m.includes("'graphOptimisationLevel'"))).toHaveLength(1);
    expect(notes.filter((m) => m.includes('executionMode') || m.includes('interOpNumThreads'))).toHaveLength(0);
  });

  test('freeDimensionOverrides fixes a symbolic dimension', async () => {
    const s = await InferenceSession.create(model('scorer.onnx'), { freeDimensionOverrides: { batch: 2 } });
    expect(Array.from((await s.run(feeds())).best.data)).toEqual(SCORER_BEST);
    const three = { features: new Tensor('float32', new Float32Array(9), [3, 3]), bias: feeds().bias };
    const e = await rejection(s.run(three));
    expect(e.kind).toBe('InvalidInput');
    expect(e.message).toContain('freeDimensionOverrides');
    await s.release();
    const bad = await rejection(
      InferenceSession.create(model('scorer.onnx'), { freeDimensionOverrides: { batch: -1 } }),
    );
    expect(bad.kind).toBe('InvalidArgument');
  });
});

describe('images (ORT conventions: value = (pixel + bias) / mean, pixel = (value - bias) * mean)', () => {
  const f = (v) => Math.fround(v);
  const image = { data: new Uint8ClampedArray([10, 20, 30, 255, 250, 0, 128, 7]), width: 2, height: 1 };

  test('fromImage: RGBA pixels to an RGB [1,3,H,W] tensor, default and with norm and channel order', async () => {
    const t = await Tensor.fromImage(image);
    expect(t.type).toBe('float32');
    expect(t.dims).toEqual([1, 3, 1, 2]);
    expect(Array.from(t.data)).toEqual([10, 250, 20, 0, 30, 128].map((v) => f(v / 255)));
    const bgr = await Tensor.fromImage(image, { tensorFormat: 'BGR', norm: { mean: [1, 2, 4], bias: [-10, 0, 0] } });
    // B plane (b + 0) / 4, G plane (g + 0) / 2, R plane (r - 10) / 1.
    expect(Array.from(bgr.data)).toEqual([30 / 4, 128 / 4, 20 / 2, 0, 0, 240]);
    const rgba = await Tensor.fromImage(image, { tensorFormat: 'RGBA', norm: { mean: 1, bias: 0 } });
    expect(rgba.dims).toEqual([1, 4, 1, 2]);
    expect(Array.from(rgba.data)).toEqual([10, 250, 20, 0, 30, 128, 255, 7]);
  });

  test('fromImage: an RGB pixel buffer with width and height', async () => {
    const t = await Tensor.fromImage(new Uint8Array([1, 2, 3, 4, 5, 6]), {
      width: 1,
      height: 2,
      format: 'RGB',
      norm: { mean: 1 },
    });
    expect(t.dims).toEqual([1, 3, 2, 1]);
    expect(Array.from(t.data)).toEqual([1, 4, 2, 5, 3, 6]);
  });

  test('toImageData inverts fromImage; alpha 255 for 3 channels; bad shapes and NHWC input refused', async () => {
    const t = await Tensor.fromImage(image);
    const back = t.toImageData();
    expect([back.width, back.height]).toEqual([2, 1]);
    expect(Array.from(back.data)).toEqual([10, 20, 30, 255, 250, 0, 128, 255]);
    const half = new Tensor('float32', new Float32Array([0.5, 0.5, 0.5]), [1, 3, 1, 1]).toImageData();
    expect(Array.from(half.data)).toEqual([128, 128, 128, 255]); // 127.5 clamped-rounded like an ImageData
    let e;
    try {
      new Tensor('float32', new Float32Array(4), [1, 4, 1, 1]).toImageData();
    } catch (x) {
      e = x;
    }
    expect(e.kind).toBe('InvalidArgument');
    e = await rejection(Tensor.fromImage(image, { tensorLayout: 'NHWC' }));
    expect(e.kind).toBe('Unsupported');
    e = await rejection(Tensor.fromImage('http://example.invalid/x.png'));
    expect(e.kind).toBe('Unsupported'); // Node has no Image element
  });
});

describe('load progress (onProgress)', () => {
  test('a model path is read in pieces, reported from (0, total) to (total, total); the session is the same', async () => {
    const { mkdtempSync, writeFileSync, rmSync, statSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { oneNodeModel } = await import('./onnx-writer.mjs');
    const dir = mkdtempSync(join(tmpdir(), 'onemodel-progress-'));
    try {
      const w = new Float32Array(1024 * 1024).map((_, i) => ((i * 7919) % 1000) / 1000 - 0.5);
      const file = join(dir, 'big.onnx');
      writeFileSync(
        file,
        oneNodeModel({
          opType: 'MatMul',
          inputs: [{ name: 'x', elemType: 1, dims: [1, 1024] }],
          initializers: [{ name: 'w', dims: [1024, 1024], data: w }],
          outputs: [{ name: 'y', elemType: 1, dims: [1, 1024] }],
        }),
      );
      const size = statSync(file).size;
      const calls = [];
      const s = await InferenceSession.create(file, { onProgress: (loaded, total) => calls.push([loaded, total]) });
      expect(calls[0]).toEqual([0, size]);
      expect(calls[calls.length - 1]).toEqual([size, size]);
      expect(calls.length).toBeGreaterThanOrEqual(4); // 4 MiB in 1 MiB pieces
      for (let i = 1; i < calls.length; i++) expect(calls[i][0]).toBeGreaterThan(calls[i - 1][0]);
      const x = { x: new Tensor('float32', new Float32Array(1024).fill(0.25), [1, 1024]) };
      const plain = await InferenceSession.create(file);
      expect(Array.from((await s.run(x)).y.data)).toEqual(Array.from((await plain.run(x)).y.data));
      await s.release();
      await plain.release();
      const once = [];
      const b = await InferenceSession.create(new Uint8Array(readFileSync(model('scorer.onnx'))), {
        onProgress: (l, t) => once.push([l, t]),
      });
      const n = readFileSync(model('scorer.onnx')).length;
      expect(once).toEqual([[n, n]]);
      await b.release();
      const e = await rejection(InferenceSession.create(file, { onProgress: 5 }));
      expect(e.kind).toBe('InvalidArgument');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
