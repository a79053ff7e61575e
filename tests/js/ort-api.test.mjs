// onnxruntime-common's argument forms that ORT-written clients use: run(feeds, runOptions),
// run(feeds, fetches, runOptions) with fetches as names or as an object of name -> null | preallocated Tensor,
// and the `env` object. Expected values: tests/js/expected.mjs (numpy-computed in tools/make_testdata.py).
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
    expect(warn.mock.calls.filter((c) => String(c[0]).includes('numThreads'))).toHaveLength(1);
    env.wasm.numThreads = 1;
  });
});
