// Eager values and tracing from JavaScript (docs/model-building.md section 9). Eager results are checked against
// loops; traced models run in an InferenceSession of this project's engine at the traced and other sizes and are
// compared with the eager run there (fast: 1e-5; exact: the same bits, the same kernels).
import { afterEach, beforeAll, describe, expect, test } from 'vitest';

import { EagerValue, InferenceSession, OneModelError, Tensor, Tracer, setEagerMode } from 'onemodel';

import { expectClose, thrown } from './helpers.mjs';

const f32 = (values, dims) => new Tensor('float32', Float32Array.from(values), dims);
const ramp = (dims, scale = 0.1) => {
  const n = dims.reduce((a, b) => a * b, 1);
  return f32(
    Array.from({ length: n }, (_, i) => scale * ((i % 7) - 3)),
    dims,
  );
};

beforeAll(async () => {
  await Tracer.ready();
});
afterEach(() => setEagerMode('fast'));

// An MLP as eager code writes it: sizes read as numbers, a Reshape of plain sizes.
function mlp(x, w1, b1, w2) {
  const h = x.matMul(w1).add(b1).relu();
  const [b, s, d] = h.dims;
  return h
    .reshape([b * s, d])
    .matMul(w2)
    .softmax();
}

describe('eager values and tracing', () => {
  test('eager operations compute now, with the engine kernels', () => {
    const a = EagerValue.from(f32([1, -2, 3, -4, 5, -6], [2, 3]));
    const b = EagerValue.from(f32([0.5, 1, -1, 2, 0, 1], [3, 2]));
    const y = a.matMul(b).relu();
    expect(y.dims).toEqual([2, 2]);
    expect(y.type).toBe('float32');
    const av = [1, -2, 3, -4, 5, -6];
    const bv = [0.5, 1, -1, 2, 0, 1];
    const want = [];
    for (let r = 0; r < 2; r++)
      for (let c = 0; c < 2; c++) {
        let acc = 0;
        for (let k = 0; k < 3; k++) acc += av[r * 3 + k] * bv[k * 2 + c];
        want.push(Math.max(acc, 0));
      }
    expect(Array.from(y.toTensor().data)).toEqual(want);
    const e = thrown(() => a.add(EagerValue.from(f32([1, 2], [2]))));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.message).toContain('Add of [2,3], [2]');
  });

  for (const mode of ['fast', 'exact']) {
    test(`a traced MLP runs at other sizes like the eager run (${mode})`, async () => {
      setEagerMode(mode);
      const w1 = EagerValue.from(ramp([4, 8]));
      const b1 = EagerValue.from(ramp([8], 0.05));
      const w2 = EagerValue.from(ramp([8, 3], 0.2));
      const tracer = Tracer.begin();
      let onnx;
      try {
        tracer.parameter('fc1.weight', w1);
        const x = tracer.input('x', ramp([2, 3, 4]), ['batch', 'seq']);
        onnx = tracer.finish({ probs: mlp(x, w1, b1, w2) }).onnx;
      } finally {
        tracer.end();
      }
      const session = await InferenceSession.create(onnx, { mode });
      expect(session.inputMetadata[0].shape).toEqual(['batch', 'seq', 4]);
      for (const [b, s] of [
        [2, 3],
        [4, 5],
      ]) {
        const input = ramp([b, s, 4], 0.3);
        const eager = mlp(EagerValue.from(input), w1, b1, w2).toTensor();
        const out = (await session.run({ x: input })).probs;
        expect(out.dims).toEqual([b * s, 3]);
        if (mode === 'exact') expect(Array.from(out.data)).toEqual(Array.from(eager.data));
        else expectClose(expect, out.data, Array.from(eager.data), 1e-5);
      }
      await session.release();
    });
  }

  test('failures are raised at the offending call, with their kinds', () => {
    const w = EagerValue.from(ramp([3, 3]));
    const tracer = Tracer.begin();
    try {
      expect(thrown(() => Tracer.begin()).kind).toBe('InvalidUsage');
      const x = tracer.input('x', ramp([2, 3]), ['n']);
      const y = x.matMul(w);
      expect(thrown(() => y.toTensor()).kind).toBe('DataDependent');
      expect(thrown(() => EagerValue.op('NonZero', [y])).kind).toBe('DataDependent');
      expect(thrown(() => tracer.input('one', ramp([1, 3]), ['m'])).kind).toBe('InvalidUsage');
      expect(thrown(() => y.reshape([6]).resize([12])).kind).toBe('SymbolicShape');
      expect(thrown(() => tracer.finish({ w: w.relu() })).kind).toBe('InvalidUsage');
      const { onnx } = tracer.finish({ y });
      expect(onnx).toBeInstanceOf(Uint8Array);
      expect(y.toTensor().dims).toEqual([2, 3]); // readable again after finish
    } finally {
      tracer.end();
    }
  });
});
