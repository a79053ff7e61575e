// weightStorage (docs/fp16.md section 6): sessions keeping wide.onnx's two MatMul weights (256 x 512 and 512 x 64)
// rounded to 16 bits. That the bits are those of the model with its weights rounded beforehand is checked in C++
// (tests/cpp/compact_weights_test.cc); here the option must reach both engines: the outputs move by about one
// rounding of the weights (not zero, not more), exact mode gives the same bits on the native addon and the wasm
// build, and a path loads like bytes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, test } from 'vitest';

import { InferenceSession, Tensor } from 'onemodel';

import { ENGINE, ROOT, bytesHex, model } from './helpers.mjs';

const ADDON = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
const WIDE = new Uint8Array(readFileSync(model('wide.onnx')));
const X = new Tensor(
  'float32',
  Float32Array.from({ length: 256 }, (_, i) => Math.cos(i * 0.1)),
  [1, 256],
);

async function outputs(source, options) {
  const session = await InferenceSession.create(source, options);
  const out = await session.run({ [session.inputNames[0]]: X });
  await session.release();
  return out[Object.keys(out)[0]].data;
}

// max |a - b| / max |b|
function scaledError(a, b) {
  let d = 0;
  let m = 0;
  for (let i = 0; i < b.length; i++) {
    d = Math.max(d, Math.abs(a[i] - b[i]));
    m = Math.max(m, Math.abs(b[i]));
  }
  return d / m;
}

describe(`weightStorage (${ENGINE})`, () => {
  test('float16 and bfloat16 move the outputs by about the rounding of the weights', async () => {
    const full = await outputs(WIDE, { mode: 'exact' });
    // binary16 keeps 11 significant bits (2^-11 per rounding), bfloat16 8 (2^-8).
    for (const [storage, bound] of [
      ['float16', 4e-3],
      ['bfloat16', 3e-2],
    ]) {
      const half = await outputs(WIDE, { mode: 'exact', weightStorage: storage });
      const err = scaledError(half, full);
      expect(err, storage).toBeGreaterThan(0);
      expect(err, storage).toBeLessThan(bound);
      expect(bytesHex(await outputs(model('wide.onnx'), { mode: 'exact', weightStorage: storage })), storage).toBe(
        bytesHex(half),
      );
    }
    expect(bytesHex(await outputs(WIDE, { mode: 'exact', weightStorage: 'float32' }))).toBe(bytesHex(full));
  });

  test('the native addon and the wasm build give the same exact bits', async () => {
    expect(existsSync(ADDON), ADDON).toBe(true); // else 'cpu' would quietly run wasm too
    for (const weightStorage of ['float16', 'bfloat16']) {
      const cpu = await outputs(WIDE, { mode: 'exact', weightStorage, executionProviders: ['cpu'] });
      const wasm = await outputs(WIDE, { mode: 'exact', weightStorage, executionProviders: ['wasm'] });
      expect(bytesHex(wasm), weightStorage).toBe(bytesHex(cpu));
    }
  });
});
