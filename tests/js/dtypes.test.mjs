// Every element type crosses the binding intact: Identity models (made by tests/js/onnx-writer.mjs) return
// their input, so the expected output is the input itself, byte for byte, with the same type and dims.
// Cast checks that 64-bit integers arrive as values, not only as bytes (expected values by hand).
import { describe, expect, test } from 'vitest';

import { InferenceSession, Tensor } from 'onemodel';

import { TYPE_CODES } from '../../tools/golden/run-case.mjs';
import { oneNodeModel } from './onnx-writer.mjs';

// ONNX TensorProto.DataType codes.
const CODES = TYPE_CODES;

const SAMPLES = {
  float32: new Float32Array([1.5, -0, Infinity, NaN, -3.25, 1e-40]),
  float64: new Float64Array([Math.PI, -0, -Infinity, NaN, 1e300, 5e-324]),
  int8: new Int8Array([-128, -1, 0, 1, 127, 42]),
  uint8: new Uint8Array([0, 1, 127, 128, 255, 42]),
  int16: new Int16Array([-32768, -1, 0, 1, 32767, 42]),
  uint16: new Uint16Array([0, 1, 32767, 32768, 65535, 42]),
  int32: new Int32Array([-2147483648, -1, 0, 1, 2147483647, 42]),
  uint32: new Uint32Array([0, 1, 2147483647, 2147483648, 4294967295, 42]),
  int64: new BigInt64Array([-(2n ** 63n), -1n, 0n, 1n, 2n ** 63n - 1n, 2n ** 53n + 1n]),
  uint64: new BigUint64Array([0n, 1n, 2n ** 63n, 2n ** 64n - 1n, 2n ** 53n + 1n, 42n]),
  bool: new Uint8Array([0, 1, 1, 0, 0, 1]),
  float16: new Uint16Array([0x3c00, 0x8000, 0x7c00, 0x7e00, 0xc000, 0x0001]), // 1, -0, inf, NaN, -2, tiny
};

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');

describe('outputs', () => {
  // The native addon hands outputs under 64 KiB over as copies (the engine's buffer is reused by the next run)
  // and larger ones as the engine's own buffer (bindings/node/addon.cc typed_array): either way an output keeps
  // its values when the session runs again.
  for (const n of [1024, 16 * 1024 - 4, 16 * 1024, 64 * 1024]) {
    test(`float32 outputs of ${n * 4} bytes keep their values across runs (native and wasm)`, async () => {
      const model = oneNodeModel({
        opType: 'Neg',
        inputs: [{ name: 'x', elemType: CODES.float32, dims: ['n'] }],
        outputs: [{ name: 'y', elemType: CODES.float32, dims: ['n'] }],
      });
      for (const engine of ['cpu', 'wasm']) {
        const session = await InferenceSession.create(model, { executionProviders: [engine] });
        const x1 = Float32Array.from({ length: n }, (_, i) => i + 0.5);
        const x2 = Float32Array.from({ length: n }, (_, i) => 2 * i);
        const first = (await session.run({ x: new Tensor('float32', x1, [n]) })).y;
        const second = (await session.run({ x: new Tensor('float32', x2, [n]) })).y;
        expect(first.data.buffer).not.toBe(second.data.buffer);
        expect(Array.from(first.data)).toEqual(Array.from(x1, (v) => -v));
        expect(Array.from(second.data)).toEqual(Array.from(x2, (v) => -v));
        await session.release();
      }
    });
  }
});

describe('element types through Identity', () => {
  for (const [type, data] of Object.entries(SAMPLES)) {
    test(type, async () => {
      const code = CODES[type];
      const model = oneNodeModel({
        opType: 'Identity',
        inputs: [{ name: 'x', elemType: code, dims: ['n', 3] }],
        outputs: [{ name: 'y', elemType: code, dims: ['n', 3] }],
      });
      const session = await InferenceSession.create(model);
      expect(session.inputMetadata[0]).toEqual({ name: 'x', isTensor: true, type, shape: ['n', 3], hasShape: true });
      for (const mode of [2, 0]) {
        // two rows, then an empty batch
        const input = new Tensor(type, data.subarray(0, mode * 3), [mode, 3]);
        const { y } = await session.run({ x: input });
        expect(y.type).toBe(type);
        expect(y.dims).toEqual([mode, 3]);
        expect(y.data.constructor).toBe(data.constructor);
        expect(bytes(y.data)).toBe(bytes(input.data));
        expect(y.data.buffer).not.toBe(input.data.buffer); // a copy, never a view of the caller's array
      }
      await session.release();
    });
  }

  test('a scalar (rank 0) tensor', async () => {
    const model = oneNodeModel({
      opType: 'Identity',
      inputs: [{ name: 'x', elemType: CODES.float64, dims: [] }],
      outputs: [{ name: 'y', elemType: CODES.float64, dims: [] }],
    });
    const session = await InferenceSession.create(model);
    const { y } = await session.run({ x: new Tensor('float64', [2.5], []) });
    expect(y.dims).toEqual([]);
    expect(y.size).toBe(1);
    expect(Array.from(y.data)).toEqual([2.5]);
    await session.release();
  });

  test('a typed array that is a window into a larger buffer', async () => {
    const model = oneNodeModel({
      opType: 'Identity',
      inputs: [{ name: 'x', elemType: CODES.int32, dims: [3] }],
      outputs: [{ name: 'y', elemType: CODES.int32, dims: [3] }],
    });
    const session = await InferenceSession.create(model);
    const backing = new Int32Array([9, 9, 1, 2, 3, 9]);
    const { y } = await session.run({ x: new Tensor('int32', backing.subarray(2, 5), [3]) });
    expect(Array.from(y.data)).toEqual([1, 2, 3]);
    await session.release();
  });
});

test('a 64 MiB tensor grows the wasm heap and comes back intact', async () => {
  const model = oneNodeModel({
    opType: 'Identity',
    inputs: [{ name: 'x', elemType: CODES.float32, dims: ['n'] }],
    outputs: [{ name: 'y', elemType: CODES.float32, dims: ['n'] }],
  });
  const session = await InferenceSession.create(model);
  const n = 16 * 1024 * 1024;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = (i % 9973) - 4986.5;
  for (let round = 0; round < 2; round++) {
    const { y } = await session.run({ x: new Tensor('float32', data, [n]) });
    expect(y.size).toBe(n);
    expect(
      Buffer.compare(Buffer.from(y.data.buffer, y.data.byteOffset, y.data.byteLength), Buffer.from(data.buffer)),
    ).toBe(0);
  }
  await session.release();
});

test('Cast int64 -> float64 reads BigInt64Array values', async () => {
  const model = oneNodeModel({
    opType: 'Cast',
    attrs: { to: CODES.float64 },
    inputs: [{ name: 'x', elemType: CODES.int64, dims: [4] }],
    outputs: [{ name: 'y', elemType: CODES.float64, dims: [4] }],
  });
  const session = await InferenceSession.create(model);
  const { y } = await session.run({ x: new Tensor('int64', [-3n, 0n, 5n, 2n ** 40n], [4]) });
  expect(y.type).toBe('float64');
  expect(Array.from(y.data)).toEqual([-3, 0, 5, 2 ** 40]);
  await session.release();
});
