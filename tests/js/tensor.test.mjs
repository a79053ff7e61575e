// Tensor construction and validation (pure TypeScript, no wasm involved).
import { describe, expect, test } from 'vitest';

import { OneModelError, Tensor } from 'onemodel';

import { thrown } from './helpers.mjs';

describe('Tensor', () => {
  test('type, data, dims and size', () => {
    const data = new Float32Array([1, 2, 3, 4, 5, 6]);
    const t = new Tensor('float32', data, [2, 3]);
    expect(t.type).toBe('float32');
    expect(t.data).toBe(data); // no copy
    expect(t.dims).toEqual([2, 3]);
    expect(t.size).toBe(6);
  });

  test('each type takes its typed array', () => {
    const cases = [
      ['float32', Float32Array],
      ['float64', Float64Array],
      ['int8', Int8Array],
      ['uint8', Uint8Array],
      ['int16', Int16Array],
      ['uint16', Uint16Array],
      ['int32', Int32Array],
      ['uint32', Uint32Array],
      ['int64', BigInt64Array],
      ['uint64', BigUint64Array],
      ['bool', Uint8Array],
      ['float16', Uint16Array],
    ];
    for (const [type, Ctor] of cases) {
      const t = new Tensor(type, new Ctor(4), [2, 2]);
      expect(t.type).toBe(type);
      expect(t.data).toBeInstanceOf(Ctor);
    }
  });

  test('plain arrays are converted; 64-bit types take bigints or safe integers', () => {
    expect(new Tensor('float32', [1, 2]).data).toEqual(new Float32Array([1, 2]));
    expect(new Tensor('int64', [1n, -2]).data).toEqual(new BigInt64Array([1n, -2n]));
    expect(new Tensor('bool', [true, false, true]).data).toEqual(new Uint8Array([1, 0, 1]));
    expect(thrown(() => new Tensor('int64', [0.5])).kind).toBe('InvalidInput');
  });

  test('type inferred from the typed array; dims default to [length]; scalars have dims []', () => {
    const t = new Tensor(new Int32Array([7, 8, 9]));
    expect(t.type).toBe('int32');
    expect(t.dims).toEqual([3]);
    const s = new Tensor('float64', [2.5], []);
    expect(s.size).toBe(1);
    expect(s.dims).toEqual([]);
  });

  test('validation: unknown type, wrong array type, length versus dims, bad dims', () => {
    const cases = [
      () => new Tensor('float128', new Float32Array(1)),
      () => new Tensor('float32', new Float64Array(4), [4]),
      () => new Tensor('int64', new Int32Array(4), [4]),
      () => new Tensor('float32', new Float32Array(5), [2, 3]),
      () => new Tensor('float32', new Float32Array(6), [2, -3]),
      () => new Tensor('float32', new Float32Array(6), [2, 3.5]),
      () => new Tensor('float32', 'abc', [3]),
    ];
    for (const make of cases) {
      const err = thrown(make);
      expect(err, String(make)).toBeInstanceOf(OneModelError);
      expect(err.kind, String(make)).toBe('InvalidInput');
    }
  });

  test('dims are a frozen copy', () => {
    const dims = [2, 2];
    const t = new Tensor('float32', new Float32Array(4), dims);
    dims[0] = 4;
    expect(t.dims).toEqual([2, 2]);
    expect(Object.isFrozen(t.dims)).toBe(true);
  });
});
