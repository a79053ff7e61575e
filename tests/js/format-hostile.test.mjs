// Hostile OneModel files through the bindings (docs/format.md sections 1.1 and 3.1), on the engine this run
// uses: the native addon, or the wasm build (ONEMODEL_EXECUTION_PROVIDERS=wasm), where an out-of-bounds read
// would trap instead of being caught by ASan. Every truncation, single-byte changes of the header and the
// manifest, random mutations, ranges outside the data region, nesting past the limit, integers written as
// floats and huge counts: each gives a OneModelError with a kind and the field it names, or (for some byte
// changes of the manifest) a model that loads or that compiling refuses; never a crash, a trap or an allocation of the claimed size.
// The same cases at the C++ level are tests/cpp/format_hostile_test.cc.
import { readFileSync } from 'node:fs';

import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, convert } from 'onemodel';

import { ENGINE, model } from './helpers.mjs';

// y = x + W with W = [1.5, -2], written from the format's text (not by our writer).
const MANIFEST =
  '{"format":"onemodel","version":1,"ir_version":8,"opsets":[{"domain":"","version":17}],' +
  '"graph":{"inputs":[{"name":"x","type":{"kind":"tensor","elem":1,"shape":[2]}}],' +
  '"outputs":[{"name":"y","type":{"kind":"tensor","elem":1,"shape":[2]}}],' +
  '"initializers":[{"name":"W","dtype":1,"dims":[2],"data":{"offset":0,"length":8}}],' +
  '"nodes":[{"name":"add","op":"Add","inputs":["x","W"],"outputs":["y"]}]}}';
const DATA = new Uint8Array(new Float32Array([1.5, -2]).buffer);

/** The file the format's text describes: 64-byte header, manifest at 64, data at the next multiple of 64. */
function assemble(manifest, data = DATA) {
  const text = new TextEncoder().encode(manifest);
  const dataOffset = Math.ceil((64 + text.length) / 64) * 64;
  const file = new Uint8Array(dataOffset + data.length);
  const view = new DataView(file.buffer);
  file.set(new TextEncoder().encode('ONEMODEL'), 0);
  view.setUint32(8, 1, true); // version 1, flags 0
  view.setBigUint64(16, 64n, true);
  view.setBigUint64(24, BigInt(text.length), true);
  view.setBigUint64(32, BigInt(dataOffset), true);
  view.setBigUint64(40, BigInt(data.length), true);
  view.setBigUint64(48, BigInt(file.length), true);
  file.set(text, 64);
  file.set(data, dataOffset);
  return file;
}

function withText(from, to) {
  expect(MANIFEST.includes(from), from).toBe(true);
  return MANIFEST.replace(from, to);
}

/** null when the bytes load (the session is released), else the OneModelError; anything else fails. */
async function load(bytes) {
  try {
    const session = await InferenceSession.create(bytes);
    await session.release();
    return null;
  } catch (e) {
    if (!(e instanceof OneModelError)) throw new Error(`not a OneModelError: ${e?.stack ?? e}`);
    expect(e.kind).not.toBe('Internal');
    return e;
  }
}

async function refused(bytes, kind, fieldPath) {
  const e = await load(bytes);
  expect(e, `${kind} ${fieldPath}`).not.toBeNull();
  expect(e.kind, e.message).toBe(kind);
  expect(e.fieldPath, e.message).toBe(fieldPath);
  return e;
}

describe(`hostile OneModel files (${ENGINE})`, () => {
  test('the base file loads and adds W', async () => {
    const session = await InferenceSession.create(assemble(MANIFEST));
    const { Tensor } = await import('onemodel');
    const out = await session.run({ x: new Tensor('float32', new Float32Array([1, 2]), [2]) });
    expect(Array.from(out.y.data)).toEqual([2.5, 0]);
    await session.release();
  });

  test('every truncation of a converted model names the header or the file length', async () => {
    const file = await convert(new Uint8Array(readFileSync(model('classifier.onnx'))));
    // From 8 bytes on: fewer cannot carry the magic, and are read as ONNX.
    for (let n = 8; n < file.length; ++n) {
      const e = await load(file.subarray(0, n));
      expect(e, `${n} bytes`).not.toBeNull();
      expect(e.kind).toBe('Malformed');
      expect(e.fieldPath, `${n} bytes`).toBe(n < 64 ? 'header' : 'file_length');
    }
    const longer = new Uint8Array(file.length + 1);
    longer.set(file);
    await refused(longer, 'Malformed', 'file_length');
  });

  test('every single-byte change of the header is refused with the field and its offset', async () => {
    const file = assemble(MANIFEST);
    for (let k = 8; k < 64; ++k) {
      for (const mask of [0x01, 0x40, 0x80, 0xff]) {
        const m = file.slice();
        m[k] ^= mask;
        const e = await load(m);
        expect(e, `byte ${k} ^ ${mask}`).not.toBeNull();
        expect(['Malformed', 'Unsupported']).toContain(e.kind);
        expect(e.fieldPath.length).toBeGreaterThan(0);
        expect(e.offset).toBeGreaterThanOrEqual(0);
      }
    }
    const patched = (at, v) => {
      const m = file.slice();
      m[at] = v;
      return m;
    };
    expect((await refused(patched(8, 2), 'Unsupported', 'version')).offset).toBe(8);
    expect((await refused(patched(23, 0x80), 'Malformed', 'manifest_offset')).offset).toBe(16);
    expect((await refused(patched(40, 7), 'Malformed', 'data_length')).offset).toBe(40);
    expect((await refused(patched(56, 1), 'Malformed', 'reserved')).offset).toBe(56);
  });

  test('byte changes of the manifest load or are refused inside the manifest, never crash', async () => {
    const file = assemble(MANIFEST);
    let accepted = 0;
    let refusedCount = 0;
    for (let k = 64; k < 64 + MANIFEST.length; ++k) {
      for (const v of [0x00, 0x22, 0x7b, 0x39, 0xff]) {
        const m = file.slice();
        m[k] = v;
        const e = await load(m);
        if (e === null) {
          ++accepted;
          continue;
        }
        ++refusedCount;
        if (e.fieldPath === undefined) {
          // Read, then refused when compiled (create() compiles): an operator name or opset domain that no
          // longer names an operator, or an input name emptied (input missing).
          expect(['UnsupportedOperator', 'InvalidModel'], e.message).toContain(e.kind);
          continue;
        }
        expect(e.fieldPath.startsWith('manifest'), e.message).toBe(true);
        expect(e.offset).toBeGreaterThanOrEqual(64);
      }
    }
    expect(refusedCount).toBeGreaterThan(accepted);
  });

  test('random mutations of a converted model never crash', async () => {
    const file = await convert(new Uint8Array(readFileSync(model('scorer.onnx'))));
    let state = 0x2545f4914f6cdd1dn;
    const mask = (1n << 64n) - 1n;
    const next = () => {
      state ^= (state << 13n) & mask;
      state ^= state >> 7n;
      state ^= (state << 17n) & mask;
      return state;
    };
    let refusedCount = 0;
    for (let iter = 0; iter < 400; ++iter) {
      const m = file.slice();
      const flips = 1 + Number(next() % 4n);
      for (let k = 0; k < flips; ++k) m[64 + Number(next() % BigInt(m.length - 64))] = Number(next() & 0xffn);
      if ((await load(m)) !== null) continue;
      ++refusedCount;
    }
    expect(refusedCount).toBeGreaterThan(0);
  });

  test('ranges outside the data region, nesting past the limit, integers as floats, huge counts', async () => {
    const init = 'manifest.graph.initializers[0]';
    await refused(
      assemble(withText('"offset":0,"length":8', '"offset":64,"length":8')),
      'Malformed',
      `${init}.data.offset`,
    );
    await refused(
      assemble(withText('"offset":0,"length":8', '"offset":0,"length":4611686018427387904')),
      'Malformed',
      `${init}.data.length`,
    );
    const nested = (levels) =>
      withText('"ir_version":8,', `"ir_version":8,"extra":${'['.repeat(levels)}${']'.repeat(levels)},`);
    expect(await load(assemble(nested(1023)))).toBeNull();
    await refused(assemble(nested(200000)), 'Unsupported', 'manifest');
    await refused(assemble(withText('"ir_version":8', '"ir_version":8.0')), 'Malformed', 'manifest.ir_version');
    await refused(assemble(withText('"dims":[2]', '"dims":[2e0]')), 'Malformed', `${init}.dims[0]`);
    const huge = await refused(
      assemble(withText('"dims":[2]', '"dims":[1099511627776,1099511627776]')),
      'InvalidModel',
      init,
    );
    expect(huge.message).toContain('2^60');
    await refused(assemble(withText('"dims":[2]', '"dims":[1073741824]')), 'Unsupported', init);
  });
});
