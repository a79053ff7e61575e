// InferenceSession.runOne, the JS form of the C++ Model::run (docs/graph-runtime.md section 4): on a text
// encoder the token ids come in alone, attention_mask is filled with ones and token_type_ids with zeros. The
// probe model concatenates its three inputs (mask, ids, segment ids, in that order), so the output shows each
// fill as it was fed; expected values by hand. The classifier case checks the one-input form; the MiniLM-shaped
// encoder of tools/models (where tools/models/fetch.sh filled the cache) checks runOne against run() fed the
// mask and segment ids explicitly.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import { CLASSIFIER_INPUT, CLASSIFIER_PROBS, TOLERANCE } from './expected.mjs';
import { expectClose, model, rejection } from './helpers.mjs';
import { oneNodeModel } from './onnx-writer.mjs';

const INT32 = 6;
const INT64 = 7;
const DOUBLE = 11;
const MINILM = join(
  process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel'),
  'models',
  'minilm_l6_like.onnx',
);
const seq = (name, elemType) => ({ name, elemType, dims: ['batch', 'sequence'] });

function probe(elemType, extra = []) {
  return oneNodeModel({
    opType: 'Concat',
    inputs: [seq('attention_mask', elemType), seq('input_ids', elemType), seq('token_type_ids', elemType), ...extra],
    outputs: [{ name: 'y', elemType, dims: ['rows', 'sequence'] }],
    attrs: { axis: 0 },
  });
}

describe('runOne', () => {
  test('fills attention_mask with ones and token_type_ids with zeros, one sequence without dims', async () => {
    const session = await InferenceSession.create(probe(INT64));
    const y = await session.runOne([101, 2023, 102]);
    expect(y).toBeInstanceOf(Tensor);
    expect(y.type).toBe('int64');
    expect(y.dims).toEqual([3, 3]);
    expect(Array.from(y.data)).toEqual([1n, 1n, 1n, 101n, 2023n, 102n, 0n, 0n, 0n]);
    // With dims: two sequences of two tokens, the fills in the same dims.
    const two = await session.runOne(BigInt64Array.of(5n, 6n, 7n, 8n), [2, 2]);
    expect(two.dims).toEqual([6, 2]);
    expect(Array.from(two.data)).toEqual([1n, 1n, 1n, 1n, 5n, 6n, 7n, 8n, 0n, 0n, 0n, 0n]);
    await session.release();
  });

  test('int32 token ids', async () => {
    const session = await InferenceSession.create(probe(INT32));
    const y = await session.runOne(Int32Array.of(7, 9));
    expect(y.type).toBe('int32');
    expect(Array.from(y.data)).toEqual([1, 1, 7, 9, 0, 0]);
    await session.release();
  });

  test('a one-input model takes the values alone (the classifier)', async () => {
    const session = await InferenceSession.create(model('classifier.onnx'));
    const probs = await session.runOne(CLASSIFIER_INPUT);
    expect(probs.dims).toEqual([1, 3]);
    expectClose(expect, probs.data, CLASSIFIER_PROBS, TOLERANCE);
    await session.release();
  });

  test('other inputs, and fills of another type, are InvalidInput', async () => {
    const four = await InferenceSession.create(probe(INT64, [seq('position_ids', INT64)]));
    const e = await rejection(four.runOne([1, 2]));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('InvalidInput');
    expect(e.message).toContain('this one has 4 inputs and 1 outputs');
    await four.release();
    const floats = await InferenceSession.create(probe(DOUBLE));
    const f = await rejection(floats.runOne([1, 2]));
    expect(f.kind).toBe('InvalidInput');
    expect(f.message).toContain("fills input 'attention_mask' only as int64, int32 or float32");
    await floats.release();
  });

  test.skipIf(!existsSync(MINILM))('the MiniLM-shaped encoder: runOne equals run() fed ones and zeros', async () => {
    const session = await InferenceSession.create(MINILM, { mode: 'exact', intraOpNumThreads: 1 });
    const ids = [101, 7592, 2088, 2003, 1037, 3231, 102];
    const n = ids.length;
    const y = await session.runOne(ids);
    const { last_hidden_state: want } = await session.run({
      input_ids: new Tensor('int64', ids, [1, n]),
      attention_mask: new Tensor('int64', new Array(n).fill(1), [1, n]),
      token_type_ids: new Tensor('int64', new Array(n).fill(0), [1, n]),
    });
    expect(y.dims).toEqual(want.dims);
    const bytes = (t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    expect(bytes(y).equals(bytes(want))).toBe(true);
    await session.release();
  });
});
