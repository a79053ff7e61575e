// The binding carries every field of the engine's error into OneModelError: node, source, offset, field path.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import { rejection } from './helpers.mjs';
import { oneNodeModel } from './onnx-writer.mjs';

const dir = mkdtempSync(join(tmpdir(), 'onemodel-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const addModel = () =>
  oneNodeModel({
    opType: 'Add',
    inputs: [
      { name: 'a', elemType: 1, dims: ['n'] },
      { name: 'b', elemType: 1, dims: ['m'] },
    ],
    outputs: [{ name: 'y', elemType: 1, dims: ['k'] }],
  });

test('an error about a node names the node', async () => {
  const session = await InferenceSession.create(addModel());
  // [2] and [3] pass the TypeScript checks (symbolic dims) and fail in the engine when shapes are planned.
  const err = await rejection(session.run({ a: new Tensor('float32', [1, 2]), b: new Tensor('float32', [1, 2, 3]) }));
  expect(err).toBeInstanceOf(OneModelError);
  expect(err.node).toBe('n0');
  expect(err.message).toContain("node 'n0'");
  // The session survives a failed run.
  const { y } = await session.run({ a: new Tensor('float32', [1, 2]), b: new Tensor('float32', [10, 20]) });
  expect(Array.from(y.data)).toEqual([11, 22]);
  await session.release();
});

test('a truncated file reports Malformed with the path, byte offset and field path', async () => {
  const bytes = addModel();
  const path = join(dir, 'truncated.onnx');
  writeFileSync(path, bytes.subarray(0, bytes.length - 5));
  const err = await rejection(InferenceSession.create(path));
  expect(err).toBeInstanceOf(OneModelError);
  expect(err.kind).toBe('Malformed');
  expect(err.source).toBe(path);
  expect(typeof err.offset).toBe('number');
  expect(err.offset).toBeGreaterThanOrEqual(0);
  expect(err.offset).toBeLessThan(bytes.length);
  expect(typeof err.fieldPath).toBe('string');
  expect(err.fieldPath.length).toBeGreaterThan(0);
  expect(err.message).toContain(`in ${path}`);
});
