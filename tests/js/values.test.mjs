// Sequences and optionals through the npm package (graph-runtime.md section 8). sequence_optional.onnx
// (tools/gen_ctrlflow_models.py): seq_out = SequenceInsert(seq, x), n = SequenceLength(seq_out),
// has = OptionalHasElement(opt), opt_out = Identity(opt). Expected values by hand.
import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import { model, rejection } from './helpers.mjs';

const f32 = (values) => new Tensor('float32', Float32Array.from(values), [values.length]);

describe('sequence_optional.onnx', () => {
  test('metadata describes the sequence and the optional', async () => {
    const session = await InferenceSession.create(model('ctrlflow/sequence_optional.onnx'));
    expect(session.inputMetadata[0]).toMatchObject({ name: 'seq', isTensor: false, kind: 'sequence', type: 'float32' });
    expect(session.inputMetadata[2]).toMatchObject({
      name: 'opt',
      isTensor: false,
      kind: 'optional',
      elementKind: 'tensor',
    });
    await session.release();
  });

  for (const mode of ['fast', 'exact']) {
    test(`a sequence output and an optional input (${mode})`, async () => {
      const session = await InferenceSession.create(model('ctrlflow/sequence_optional.onnx'), { mode });
      const out = await session.runValues({ seq: [f32([1]), f32([2, 3])], x: f32([4, 5, 6]), opt: f32([7]) });
      expect(Array.isArray(out.seq_out)).toBe(true);
      expect(out.seq_out.length).toBe(3);
      expect(Array.from(out.seq_out[1].data)).toEqual([2, 3]);
      expect(out.seq_out[2].dims).toEqual([3]);
      expect(Array.from(out.seq_out[2].data)).toEqual([4, 5, 6]);
      expect(out.n.data[0]).toBe(3n);
      expect(out.has.data[0]).toBe(1);
      expect(out.opt_out).toBeInstanceOf(Tensor);
      expect(Array.from(out.opt_out.data)).toEqual([7]);

      const empty = await session.runValues({ seq: [], x: f32([1]), opt: null });
      expect(empty.seq_out.length).toBe(1);
      expect(empty.has.data[0]).toBe(0);
      expect(empty.opt_out).toBeNull();
      await session.release();
    });
  }

  test('wrong kinds are refused before running', async () => {
    const session = await InferenceSession.create(model('ctrlflow/sequence_optional.onnx'));
    let e = await rejection(session.runValues({ seq: f32([1]), x: f32([1]), opt: null }));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('InvalidInput');
    e = await rejection(session.runValues({ seq: [f32([1])], x: null, opt: null }));
    expect(e.kind).toBe('InvalidInput');
    e = await rejection(
      session.runValues({ seq: [new Tensor('int32', Int32Array.from([1]), [1])], x: f32([1]), opt: null }),
    );
    expect(e.kind).toBe('InvalidInput');
    e = await rejection(session.run({ seq: f32([1]), x: f32([1]), opt: f32([1]) }));
    expect(e.kind).toBe('InvalidInput');
    expect(e.message).toContain('runValues');
    await session.release();
  });
});
