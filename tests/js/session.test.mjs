// InferenceSession through the package's ES-module Node entry (`import ... from 'onemodel'` resolves through
// package.json exports -> node.import -> dist/node/index.mjs). Expected values: tests/js/expected.mjs.
import { readFileSync } from 'node:fs';

import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import {
  CLASSIFIER_INPUT,
  CLASSIFIER_PROBS,
  SCORER_BEST,
  SCORER_BIAS,
  SCORER_FEATURES,
  SCORER_SCORE,
  TOLERANCE,
  UNSUPPORTED_OPERATORS,
} from './expected.mjs';
import { bytesHex, expectClose, expectEngineKernelPath, model, rejection } from './helpers.mjs';

const classifierInput = () => new Tensor('float32', Float32Array.from(CLASSIFIER_INPUT), [1, 4]);

describe('classifier.onnx', () => {
  test('loads from a path and gives numpy probabilities (Node 20 with global fetch present)', async () => {
    // Emscripten's loader prefers fetch when it exists; the Node entry must not depend on it working.
    expect(typeof globalThis.fetch).toBe('function');
    const session = await InferenceSession.create(model('classifier.onnx'));
    const out = await session.run({ x: classifierInput() });
    expect(Object.keys(out)).toEqual(['probs']);
    expect(out.probs).toBeInstanceOf(Tensor);
    expect(out.probs.type).toBe('float32');
    expect(out.probs.dims).toEqual([1, 3]);
    expect(out.probs.size).toBe(3);
    expect(out.probs.data).toBeInstanceOf(Float32Array);
    expectClose(expect, out.probs.data, CLASSIFIER_PROBS, TOLERANCE);
    await session.release();
  });

  test('loads from a Uint8Array and from an ArrayBuffer', async () => {
    const file = readFileSync(model('classifier.onnx'));
    const u8 = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
    const copy = u8.slice().buffer;
    for (const source of [u8, copy]) {
      const session = await InferenceSession.create(source);
      const out = await session.run({ x: classifierInput() });
      expectClose(expect, out.probs.data, CLASSIFIER_PROBS, TOLERANCE);
      await session.release();
    }
  });

  test('a symbolic batch of two equal rows gives the same row twice', async () => {
    const session = await InferenceSession.create(model('classifier.onnx'));
    const x = new Tensor('float32', Float32Array.from([...CLASSIFIER_INPUT, ...CLASSIFIER_INPUT]), [2, 4]);
    const out = await session.run({ x });
    expect(out.probs.dims).toEqual([2, 3]);
    expectClose(expect, out.probs.data, [...CLASSIFIER_PROBS, ...CLASSIFIER_PROBS], TOLERANCE);
    await session.release();
  });

  test('metadata, kernel path and opsets', async () => {
    const session = await InferenceSession.create(model('classifier.onnx'));
    expect(session.inputNames).toEqual(['x']);
    expect(session.outputNames).toEqual(['probs']);
    expect(session.inputMetadata).toEqual([
      { name: 'x', isTensor: true, type: 'float32', shape: ['batch', 4], hasShape: true },
    ]);
    expect(session.outputMetadata).toEqual([
      { name: 'probs', isTensor: true, type: 'float32', shape: ['batch', 3], hasShape: true },
    ]);
    expectEngineKernelPath(expect, session.kernelPath);
    expect(session.opsets).toEqual([{ domain: '', version: 17 }]);
    expect(session.options).toEqual({
      mode: 'fast',
      intraOpNumThreads: 0,
      graphOptimizationLevel: 'all',
      maxCachedPlans: 16,
      weightStorage: 'float32',
      executionProviders: [],
      freeDimensionOverrides: {},
    });
    await session.release();
  });

  test('exact mode runs and gives identical bytes across two sessions', async () => {
    const hexes = [];
    for (let i = 0; i < 2; i++) {
      const session = await InferenceSession.create(model('classifier.onnx'), { mode: 'exact' });
      expect(session.options.mode).toBe('exact');
      const out = await session.run({ x: classifierInput() });
      expectClose(expect, out.probs.data, CLASSIFIER_PROBS, TOLERANCE);
      hexes.push(bytesHex(out.probs.data));
      await session.release();
    }
    expect(hexes[1]).toBe(hexes[0]);
  });

  test('every optimization level gives the numpy probabilities', async () => {
    for (const level of ['disabled', 'basic', 'extended', 'all']) {
      const session = await InferenceSession.create(model('classifier.onnx'), {
        graphOptimizationLevel: level,
        maxCachedPlans: 1,
      });
      const out = await session.run({ x: classifierInput() });
      expectClose(expect, out.probs.data, CLASSIFIER_PROBS, TOLERANCE);
      await session.release();
    }
  });
});

describe('scorer.onnx', () => {
  const feeds = () => ({
    features: new Tensor('float32', Float32Array.from(SCORER_FEATURES), [2, 3]),
    bias: new Tensor('float32', Float32Array.from(SCORER_BIAS), [1, 2]),
  });

  test('named inputs in any order, all outputs', async () => {
    const session = await InferenceSession.create(model('scorer.onnx'));
    const f = feeds();
    const out = await session.run({ bias: f.bias, features: f.features });
    expect(Object.keys(out).sort()).toEqual(['best', 'score']);
    expect(out.score.dims).toEqual([2, 2]);
    expect(Array.from(out.score.data)).toEqual(SCORER_SCORE);
    expect(out.best.dims).toEqual([2]);
    expect(Array.from(out.best.data)).toEqual(SCORER_BEST);
    await session.release();
  });

  test('fetches selects outputs', async () => {
    const session = await InferenceSession.create(model('scorer.onnx'));
    const out = await session.run(feeds(), ['best']);
    expect(Object.keys(out)).toEqual(['best']);
    expect(Array.from(out.best.data)).toEqual(SCORER_BEST);
    await session.release();
  });

  test('metadata with the symbolic batch dimension', async () => {
    const session = await InferenceSession.create(model('scorer.onnx'));
    expect(session.inputNames).toEqual(['features', 'bias']);
    expect(session.outputNames).toEqual(['score', 'best']);
    expect(session.inputMetadata).toEqual([
      { name: 'features', isTensor: true, type: 'float32', shape: ['batch', 3], hasShape: true },
      { name: 'bias', isTensor: true, type: 'float32', shape: [1, 2], hasShape: true },
    ]);
    expect(session.outputMetadata[1]).toEqual({
      name: 'best',
      isTensor: true,
      type: 'float32',
      shape: ['batch'],
      hasShape: true,
    });
    expect(session.opsets).toEqual([{ domain: '', version: 13 }]);
    await session.release();
  });
});

describe('errors', () => {
  test('unsupported operators reject with OneModelError UnsupportedOperator listing them', async () => {
    const err = await rejection(InferenceSession.create(model('unsupported.onnx')));
    expect(err).toBeInstanceOf(OneModelError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('OneModelError');
    expect(err.kind).toBe('UnsupportedOperator');
    expect(err.operators).toEqual(UNSUPPORTED_OPERATORS);
    expect(err.message).toMatch(/^UnsupportedOperator: /);
  });

  test('wave.onnx (Cos) runs in fast mode and is refused in exact mode naming Cos', async () => {
    const fast = await InferenceSession.create(model('wave.onnx'));
    const { y } = await fast.run({ t: new Tensor('float32', new Float32Array([0, 1, 2, 3]), [4]) });
    // cos(0..3) from the cookbook: 1.000000, 0.540302, -0.416147, -0.989992
    const want = [1.0, 0.540302, -0.416147, -0.989992];
    Array.from(y.data).forEach((v, i) => expect(Math.abs(v - want[i])).toBeLessThan(1e-6));
    await fast.release();
    const err = await rejection(InferenceSession.create(model('wave.onnx'), { mode: 'exact' }));
    expect(err).toBeInstanceOf(OneModelError);
    expect(err.kind).toBe('ExactModeUnavailable');
    expect(err.operators).toEqual(['Cos']);
  });

  test('bytes that are not a model reject with Malformed', async () => {
    const err = await rejection(InferenceSession.create(new Uint8Array([0xff, 0xff, 0xff, 0xff])));
    expect(err).toBeInstanceOf(OneModelError);
    expect(err.kind).toBe('Malformed');
  });

  test('a missing file rejects with Io naming the path', async () => {
    const path = model('does-not-exist.onnx');
    const err = await rejection(InferenceSession.create(path));
    expect(err).toBeInstanceOf(OneModelError);
    expect(err.kind).toBe('Io');
    expect(err.source).toBe(path);
  });

  test('bad options reject with InvalidArgument before anything loads', async () => {
    for (const options of [
      { mode: 'turbo' },
      { graphOptimizationLevel: 'max' },
      { intraOpNumThreads: -1 },
      { intraOpNumThreads: 1.5 },
      { maxCachedPlans: 0 },
      { maxCachedPlans: '4' },
      { weightStorage: 'float8' },
      { weightStorage: 16 },
    ]) {
      const err = await rejection(InferenceSession.create(model('classifier.onnx'), options));
      expect(err, JSON.stringify(options)).toBeInstanceOf(OneModelError);
      expect(err.kind, JSON.stringify(options)).toBe('InvalidArgument');
    }
    const err = await rejection(InferenceSession.create(42));
    expect(err.kind).toBe('InvalidArgument');
  });

  test('input validation rejects with InvalidInput', async () => {
    const session = await InferenceSession.create(model('scorer.onnx'));
    const features = new Tensor('float32', Float32Array.from(SCORER_FEATURES), [2, 3]);
    const bias = new Tensor('float32', Float32Array.from(SCORER_BIAS), [1, 2]);
    const cases = {
      'unknown input name': { features, bias, extra: bias },
      'missing input': { features },
      'wrong element type': { features, bias: new Tensor('float64', Float64Array.from(SCORER_BIAS), [1, 2]) },
      'wrong rank': { features: new Tensor('float32', Float32Array.from(SCORER_FEATURES), [6]), bias },
      'wrong fixed dimension': { features: new Tensor('float32', Float32Array.from(SCORER_FEATURES), [3, 2]), bias },
      'not a tensor': { features: Float32Array.from(SCORER_FEATURES), bias },
      'data shorter than dims': { features: { type: 'float32', data: new Float32Array(5), dims: [2, 3] }, bias },
      'data of the wrong array type': { features: { type: 'float32', data: new Float64Array(6), dims: [2, 3] }, bias },
    };
    for (const [what, feeds] of Object.entries(cases)) {
      const err = await rejection(session.run(feeds));
      expect(err, what).toBeInstanceOf(OneModelError);
      expect(err.kind, what).toBe('InvalidInput');
    }
    const bad = await rejection(session.run({ features, bias }, ['nope']));
    expect(bad.kind).toBe('InvalidInput');
    // The session still works after refused runs.
    const out = await session.run({ features, bias });
    expect(Array.from(out.score.data)).toEqual(SCORER_SCORE);
    await session.release();
  });

  test('run after release rejects with Disposed; release twice is harmless', async () => {
    const session = await InferenceSession.create(model('classifier.onnx'));
    await session.release();
    await session.release();
    const err = await rejection(session.run({ x: classifierInput() }));
    expect(err).toBeInstanceOf(OneModelError);
    expect(err.kind).toBe('Disposed');
  });
});
