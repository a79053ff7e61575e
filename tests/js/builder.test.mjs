// GraphBuilder from JavaScript (docs/model-building.md section 7): the engine's builder through the wasm binding.
// Expected values are computed here with plain loops; sessions run on this project's engine (native or wasm).
import { beforeAll, describe, expect, test } from 'vitest';

import { GraphBuilder, GraphValue, InferenceSession, OneModelError, Tensor } from 'onemodel';

import { expectClose, thrown } from './helpers.mjs';

const f32 = (values, dims) => new Tensor('float32', Float32Array.from(values), dims);

beforeAll(async () => {
  await GraphBuilder.ready();
});

describe('GraphBuilder', () => {
  test('an MLP at a symbolic batch states its shapes and matches loops', async () => {
    const b = new GraphBuilder();
    const x = b.input('x', 'float32', ['batch', 3]);
    const w = [0.5, -1, 2, 0.25, 1, -0.5];
    const bias = [0.1, -0.2];
    const y = x
      .matMul(b.constant(f32(w, [3, 2])))
      .add(b.constant(f32(bias, [2])))
      .relu();
    expect(y).toBeInstanceOf(GraphValue);
    expect(y.dims).toEqual(['batch', 2]);
    expect(y.type).toBe('float32');
    const session = await b.createSession({ y });
    expect(session).toBeInstanceOf(InferenceSession);
    for (const batch of [1, 4]) {
      const xs = Array.from({ length: batch * 3 }, (_, i) => (i % 5) - 1.5);
      const out = await session.run({ x: f32(xs, [batch, 3]) });
      expect(out.y.dims).toEqual([batch, 2]);
      const want = [];
      for (let r = 0; r < batch; r++)
        for (let c = 0; c < 2; c++) {
          let acc = 0;
          for (let k = 0; k < 3; k++) acc += xs[r * 3 + k] * w[k * 2 + c];
          want.push(Math.max(acc + bias[c], 0));
        }
      expectClose(expect, out.y.data, want, 1e-6);
    }
    await session.release();
  });

  test('shape errors are raised by the operation, with both shapes', () => {
    const b = new GraphBuilder();
    const a = b.input('a', 'float32', [3]);
    const c = b.input('c', 'float32', [4]);
    const e = thrown(() => a.add(c));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('GraphBuild');
    expect(e.message).toContain('Add of [3], [4]');
    expect(thrown(() => b.input('a', 'float32', [1])).kind).toBe('InvalidArgument');
    expect(thrown(() => a.add(new GraphBuilder().input('z', 'float32', [3]))).kind).toBe('InvalidArgument');
    expect(thrown(() => b.op('LeakyRelu', [a], { alpha: 0.5 })).kind).toBe('InvalidArgument'); // a float needs { float }
  });

  test('symbolic shapes of shape operators, concatenation and convolution', () => {
    const b = new GraphBuilder();
    const x = b.input('x', 'float32', ['B', 'S', 8]);
    const y = b.input('y', 'float32', ['B', 'T', 8]);
    expect(x.reshape([0, -1]).dims).toEqual(['B', '8*S']);
    expect(x.transpose([1, 0, 2]).dims).toEqual(['S', 'B', 8]);
    expect(b.concat([x, y], 1).dims).toEqual(['B', '(S + T)', 8]);
    expect(x.matMul(y.transpose([0, 2, 1])).softmax().dims).toEqual(['B', 'S', 'T']);
    const img = b.input('img', 'float32', ['N', 2, 'H', 'W']);
    const conv = img.conv(b.constant(f32(new Array(36).fill(1), [2, 2, 3, 3])), null, {
      strides: [2, 2],
      pads: [1, 1, 1, 1],
    });
    expect(conv.dims).toEqual(['N', 2, '(((H - 1) / 2) + 1)', '(((W - 1) / 2) + 1)']);
    const eight = b.constant(new Tensor('int64', BigInt64Array.from([8n]), [1]));
    const rows = x
      .shape()
      .slice([0], [1], [0])
      .mul(x.shape().slice([1], [2], [0]));
    expect(b.op('Reshape', [x, b.concat([rows, eight], 0)])[0].dims).toEqual(['B*S', 8]);
  });

  test('input specs are checked at createSession (Compile) and fix the inputs', async () => {
    const b = new GraphBuilder();
    const x = b.input('x', 'float32', ['N', 2, 'H', 'H']);
    const y = x.averagePool({ kernelShape: [5, 5] });
    const e = await b.createSession({ y }, { inputSpecs: { x: [1, 2, 6, 7] } }).catch((err) => err);
    expect(e.kind).toBe('Compile');
    expect(e.message).toContain('symbol H');
    const s = await b.createSession({ y }, { inputSpecs: { x: [1, 2, 6, 6] } });
    expect(s.inputMetadata[0].shape).toEqual([1, 2, 6, 6]);
    const out = await s.run({ x: f32(new Array(72).fill(2), [1, 2, 6, 6]) });
    expect(out.y.dims).toEqual([1, 2, 2, 2]);
    expect(Array.from(out.y.data)).toEqual(new Array(8).fill(2));
    await s.release();
  });

  test('leaves carry defaults and take other extents', async () => {
    const b = new GraphBuilder();
    const v = b.leaf('v', f32([1, 2, 3, 4], [4]), ['n']);
    const y = v.mul(v).add(v);
    expect(y.dims).toEqual(['n']);
    const s = await b.createSession({ y });
    expect(Array.from((await s.run({})).y.data)).toEqual([2, 6, 12, 20]);
    expect(Array.from((await s.run({ v: f32([-1, 5], [2]) })).y.data)).toEqual([0, 30]);
    await s.release();
  });

  test('toOnnx is deterministic and pruned, and loads as an ordinary model', async () => {
    const make = (extra) => {
      const b = new GraphBuilder();
      const x = b.input('x', 'float32', ['n', 4]);
      const unused = x.exp();
      if (extra) unused.neg();
      return b.toOnnx({ h: x.mul(b.constant(f32([1, 2, 3, 4], [4]), 'scale')).tanh() });
    };
    const a = make(false);
    expect(a).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(make(true)).equals(Buffer.from(a))).toBe(true);
    const s = await InferenceSession.create(a);
    expect(s.inputMetadata[0].shape).toEqual(['n', 4]);
    const out = await s.run({ x: f32([1, 1, 1, 1], [1, 4]) });
    expectClose(expect, out.h.data, [1, 2, 3, 4].map(Math.tanh), 1e-6);
    await s.release();
    // The OneModel format of the same model gives the same values.
    const b = new GraphBuilder();
    const x = b.input('x', 'float32', ['n', 4]);
    const format = await b.toOneModel({ h: x.tanh() });
    expect(new TextDecoder().decode(format.subarray(0, 8))).toBe('ONEMODEL');
    const f = await InferenceSession.create(format);
    const h = (await f.run({ x: f32([1, 1, 1, 1], [1, 4]) })).h;
    expectClose(expect, h.data, [1, 1, 1, 1].map(Math.tanh), 1e-7);
    await f.release();
  });

  test('op() reaches any operator, with typed attributes', async () => {
    const b = await GraphBuilder.create();
    const x = b.input('x', 'float32', ['n']);
    const [y] = b.op('LeakyRelu', [x], { alpha: { float: 0.5 } });
    const s = await b.createSession({ y });
    expect(Array.from((await s.run({ x: f32([-2, 3], [2]) })).y.data)).toEqual([-1, 3]);
    await s.release();
  });
});
