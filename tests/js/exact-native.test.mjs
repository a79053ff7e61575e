// Exact mode gives the same bits in wasm as in the native build: the wasm output's hash (tensor/hash.h
// layout, computed here with node:crypto) must equal the hash the native CLI prints for the same input.
// Skipped, with the reason shown, when no native CLI has been built (tools/setup.sh builds build/native).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, expect, test } from 'vitest';

import { InferenceSession, Tensor } from 'onemodel';

import { CLASSIFIER_INPUT, SCORER_BIAS, SCORER_FEATURES } from './expected.mjs';
import { model } from './helpers.mjs';
import { cliExactHashes, findCli, tensorSha256, writeNpy } from './native-cli.mjs';

const cli = findCli();
const dir = mkdtempSync(join(tmpdir(), 'onemodel-exact-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytesOf = (t) => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);

// A deterministic, sign-mixed input for wide.onnx (MatMul 256 -> Relu -> MatMul -> 64): long dot products are
// where vector kernels and summation order could differ between the wasm and native builds.
const wideInput = Float32Array.from({ length: 256 }, (_, i) => (((i * 37) % 101) - 50) / 25);

const cases = {
  'wide.onnx': { x: ['float32', wideInput, [1, 256]] },
  'classifier.onnx': { x: ['float32', Float32Array.from(CLASSIFIER_INPUT), [1, 4]] },
  'scorer.onnx': {
    features: ['float32', Float32Array.from(SCORER_FEATURES), [2, 3]],
    bias: ['float32', Float32Array.from(SCORER_BIAS), [1, 2]],
  },
};

for (const [name, inputs] of Object.entries(cases)) {
  test.skipIf(!cli)(
    `exact-mode ${name} outputs hash like the native CLI${cli ? '' : ' (no native CLI built)'}`,
    async () => {
      const files = {};
      const feeds = {};
      for (const [input, [type, data, dims]] of Object.entries(inputs)) {
        files[input] = join(dir, `${name}-${input}.npy`);
        writeNpy(files[input], type, data, dims);
        feeds[input] = new Tensor(type, data, dims);
      }
      const expected = cliExactHashes(cli, model(name), files);
      const session = await InferenceSession.create(model(name), { mode: 'exact' });
      const out = await session.run(feeds);
      await session.release();
      expect(Object.keys(expected).sort()).toEqual(Object.keys(out).sort());
      for (const [output, t] of Object.entries(out)) {
        expect(t.type).toBe('float32');
        expect(tensorSha256(1, t.dims, bytesOf(t)), output).toBe(expected[output]);
      }
    },
  );
}
