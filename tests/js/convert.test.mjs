// convert(bytes, options) (docs/format.md section 5): the OneModel format written by the engine's writer through
// the bindings. The file starts with the magic, InferenceSession.create loads it and gives the ONNX file's output
// bits in both modes, converting is deterministic and the same on the native addon and the wasm build, and the
// arguments and refusals are typed errors.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor, convert } from 'onemodel';

import { ENGINE, ROOT, bytesHex, model, rejection } from './helpers.mjs';

const ADDON = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
const WIDE = new Uint8Array(readFileSync(model('wide.onnx')));
const X = new Tensor(
  'float32',
  Float32Array.from({ length: 256 }, (_, i) => i / 256),
  [1, 256],
);

async function outputBits(bytes, mode) {
  const session = await InferenceSession.create(bytes, { mode });
  const [name] = session.outputNames;
  const out = await session.run({ [session.inputNames[0]]: X });
  await session.release();
  return bytesHex(out[name].data);
}

describe(`convert to the OneModel format (${ENGINE})`, () => {
  test('the file starts with the magic and runs with the ONNX file bits in fast and exact mode', async () => {
    const file = await convert(WIDE);
    expect(file).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(file.subarray(0, 8)).toString('latin1')).toBe('ONEMODEL');
    for (const mode of ['fast', 'exact']) {
      expect(await outputBits(file, mode), mode).toBe(await outputBits(WIDE, mode));
    }
  });

  test('deterministic: the same bytes twice, from an ArrayBuffer, and when converting the converted file', async () => {
    const a = await convert(WIDE);
    const b = await convert(WIDE.buffer.slice(WIDE.byteOffset, WIDE.byteOffset + WIDE.byteLength));
    expect(bytesHex(b)).toBe(bytesHex(a));
    expect(bytesHex(await convert(a))).toBe(bytesHex(a));
  });

  test('the native addon and the wasm build write the same bytes', async () => {
    expect(existsSync(ADDON), ADDON).toBe(true); // else 'cpu' would quietly run wasm too
    const cpu = await convert(WIDE, { executionProviders: ['cpu'] });
    const wasm = await convert(WIDE, { executionProviders: ['wasm'] });
    expect(bytesHex(wasm)).toBe(bytesHex(cpu));
  });

  test('float16 and bfloat16 storage: half the file, the bits of a session keeping the same weights compact', async () => {
    const full = await convert(WIDE);
    for (const weightStorage of ['float16', 'bfloat16']) {
      const file = await convert(WIDE, { weightStorage });
      expect(file.length, weightStorage).toBeLessThan(full.length * 0.6);
      const compact = await InferenceSession.create(WIDE, { mode: 'exact', weightStorage });
      const out = await compact.run({ [compact.inputNames[0]]: X });
      await compact.release();
      expect(await outputBits(file, 'exact'), weightStorage).toBe(bytesHex(out[compact.outputNames[0]].data));
    }
  });

  test('bad arguments are InvalidArgument', async () => {
    expect((await rejection(convert(WIDE, { weightStorage: 'float8' }))).kind).toBe('InvalidArgument');
    expect((await rejection(convert(WIDE, { weight: 'float32' }))).kind).toBe('InvalidArgument');
    expect((await rejection(convert('wide.onnx'))).kind).toBe('InvalidArgument');
  });

  test('a damaged model is refused by the reader with its kind, offset and field path', async () => {
    const file = await convert(WIDE);
    const e = await rejection(InferenceSession.create(file.subarray(0, 4000)));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('Malformed');
    expect(e.fieldPath).toBe('file_length');
    expect(e.offset).toBe(48);
    expect((await rejection(convert(new Uint8Array([1, 2, 3])))).kind).toBe('Malformed');
  });
});
