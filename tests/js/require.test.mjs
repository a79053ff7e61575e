// The CommonJS entry: require('onemodel') resolves through exports -> node.require -> dist/node/index.cjs
// with Node's own require (createRequire), as in a CommonJS application.
import { createRequire } from 'node:module';

import { expect, test } from 'vitest';

import * as esm from 'onemodel';

import { CLASSIFIER_INPUT, CLASSIFIER_PROBS, TOLERANCE } from './expected.mjs';
import { ROOT, expectClose, model } from './helpers.mjs';

const require = createRequire(import.meta.url);

test('require resolves the CommonJS entry and runs the classifier', async () => {
  expect(require.resolve('onemodel')).toBe(`${ROOT}/dist/node/index.cjs`);
  const { InferenceSession, Tensor } = require('onemodel');
  const session = await InferenceSession.create(model('classifier.onnx'));
  const out = await session.run({ x: new Tensor('float32', Float32Array.from(CLASSIFIER_INPUT), [1, 4]) });
  expectClose(expect, out.probs.data, CLASSIFIER_PROBS, TOLERANCE);
  await session.release();
});

test('import and require share one module instance (no dual-package hazard)', () => {
  const cjs = require('onemodel');
  expect(esm.InferenceSession).toBe(cjs.InferenceSession);
  expect(esm.Tensor).toBe(cjs.Tensor);
  expect(esm.OneModelError).toBe(cjs.OneModelError);
  // The ES-module wrapper lists the CommonJS exports by hand: it must not drift from them.
  expect(Object.keys(esm).sort()).toEqual(
    Object.keys(cjs)
      .filter((k) => k !== '__esModule')
      .sort(),
  );
});
