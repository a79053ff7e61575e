// The golden-hash case list (testdata/golden/cases.txt, written by make_cases.py) and its inputs: .npy files
// read into {type, dims, bytes}, and the float32 bit-pattern sweep that is built here instead of being
// stored (4 MB). Node only; the browser row receives the same bytes over HTTP.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { TYPE_CODES } from './run-case.mjs';

const NPY_TYPES = {
  '<f4': 'float32',
  '<f8': 'float64',
  '<f2': 'float16',
  '|u1': 'uint8',
  '|i1': 'int8',
  '<u2': 'uint16',
  '<i2': 'int16',
  '<i4': 'int32',
  '<u4': 'uint32',
  '<i8': 'int64',
  '<u8': 'uint64',
  '|b1': 'bool',
};
const NPY_DESCR = Object.fromEntries(Object.entries(NPY_TYPES).map(([d, t]) => [t, d]));
const ELEMENT_SIZE = {
  float32: 4,
  float64: 8,
  float16: 2,
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  uint64: 8,
  bool: 1,
  bfloat16: 2,
};

/** Reads a version 1/2/3 .npy file (C order, little-endian) into {type, dims, bytes}. */
export function readNpy(file) {
  const buf = readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  const type = NPY_TYPES[descr];
  if (!type || fortran !== 'False' || shape === undefined)
    throw new Error(`${file}: unsupported .npy header ${header.trim()}`);
  const dims = shape
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset + start + headerLen, count * ELEMENT_SIZE[type]);
  if (bytes.length !== buf.length - start - headerLen) throw new Error(`${file}: size does not match its shape`);
  return { type, dims, bytes: Uint8Array.from(bytes) };
}

/** Writes {type, dims, bytes} as a version 1.0 .npy file (for the native CLI). */
export function writeNpy(file, { type, dims, bytes }) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${NPY_DESCR[type]}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat((64 - ((10 + header.length + 1) % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), Buffer.from(bytes)]));
}

// Bit patterns appended to every sweep: the values where elementwise functions change behaviour (NaN
// payloads and signs, infinities, zeros, denormal and normal limits, overflow/underflow and saturation edges).
const SWEEP_SPECIALS = [
  0x7fc00000, 0xffc00000, 0x7f800001, 0xff812345, 0x7fffffff, 0x7f800000, 0xff800000, 0x00000000, 0x80000000,
  0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff, 0xff7fffff, 0x3f800000,
  0xbf800000, 0x3f000000, 0xbf000000, 0x42b17218, 0x42b17217, 0x42b17219, 0xc2ce8ed0, 0xc2aeac50, 0xc2aeac4f,
  0x41100000, 0xc1100000, 0x41200000, 0xc1200000, 0x40800000, 0xc0800000, 0x33800000, 0xb3800000, 0x3f317218,
];

/** Every `step`-th float32 bit pattern (0, step, 2*step, ... < 2^32), then SWEEP_SPECIALS, as float32 [n]. */
export function sweepInput(step) {
  const count = Math.floor((2 ** 32 - 1) / step) + 1;
  const bits = new Uint32Array(count + SWEEP_SPECIALS.length);
  for (let i = 0; i < count; i++) bits[i] = i * step; // exact: i * step < 2^32 < 2^53
  bits.set(SWEEP_SPECIALS, count);
  return { type: 'float32', dims: [bits.length], bytes: new Uint8Array(bits.buffer) };
}

/**
 * Parses cases.txt: `NAME MODEL OUT[,OUT...] INPUT=SOURCE...`, SOURCE a path (relative to the repository
 * root) or sweep:STEP; or `backend:node/test_x`, an ONNX backend-test case of the generated data directory;
 * or `model:NAME OUT[,OUT...]`, a real model of tools/models (its first case there, first step) from the model cache.
 * Returns [{name, model, outputs, inputs: [{name, source}]}] and [{name, backend}] for backend cases.
 */
export function readCases(file) {
  const cases = [];
  for (const [n, raw] of readFileSync(file, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const backend = /^backend:(\S+)$/.exec(line);
    if (backend) {
      cases.push({ name: backend[1], backend: backend[1] });
      continue;
    }
    const real = /^model:(\S+)\s+(\S+)$/.exec(line);
    if (real) {
      cases.push({ name: `model/${real[1]}`, realModel: real[1], outputs: real[2].split(',') });
      continue;
    }
    const [name, model, outputs, ...inputs] = line.split(/\s+/);
    if (!outputs) throw new Error(`${file}:${n + 1}: expected NAME MODEL OUTPUTS INPUT=SOURCE...`);
    cases.push({
      name,
      model,
      outputs: outputs.split(','),
      inputs: inputs.map((spec) => {
        const eq = spec.indexOf('=');
        if (eq <= 0) throw new Error(`${file}:${n + 1}: bad input '${spec}'`);
        return { name: spec.slice(0, eq), source: spec.slice(eq + 1) };
      }),
    });
  }
  return cases;
}

/** Loads one input source into {type, dims, bytes}; sweeps are built once and shared. */
export function makeInputLoader(root) {
  const cache = new Map();
  return (source) => {
    if (!cache.has(source)) {
      const sweep = /^sweep:(\d+)$/.exec(source);
      cache.set(source, sweep ? sweepInput(Number(sweep[1])) : readNpy(join(root, source)));
    }
    return cache.get(source);
  };
}

const CODE_TYPES = Object.fromEntries(Object.entries(TYPE_CODES).map(([t, c]) => [c, t]));

/** Reads a serialized onnx.TensorProto holding raw_data (as the backend-test data are written). */
export function readTensorProto(file) {
  const buf = readFileSync(file);
  let pos = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length) throw new Error(`${file}: truncated varint`);
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  };
  const dims = [];
  let code;
  let name = '';
  let raw;
  while (pos < buf.length) {
    const key = Number(varint());
    const field = key >> 3;
    const wire = key & 7;
    if (wire === 0) {
      const v = varint();
      if (field === 1) dims.push(Number(v));
      else if (field === 2) code = Number(v);
    } else if (wire === 2) {
      const len = Number(varint());
      const body = buf.subarray(pos, pos + len);
      pos += len;
      if (field === 1) {
        // packed dims
        const end = pos;
        pos -= len;
        while (pos < end) dims.push(Number(varint()));
      } else if (field === 8) name = body.toString('utf8');
      else if (field === 9) raw = Uint8Array.from(body);
      else if ([4, 5, 7, 10, 11].includes(field) && len > 0)
        throw new Error(`${file}: typed data fields are not read (raw_data only)`);
    } else if (wire === 5) pos += 4;
    else if (wire === 1) pos += 8;
    else throw new Error(`${file}: unexpected wire type ${wire}`);
  }
  const type = CODE_TYPES[code];
  if (!type) throw new Error(`${file}: element type ${code} is not read`);
  const count = dims.reduce((a, b) => a * b, 1);
  raw ??= new Uint8Array(0);
  if (raw.length !== count * ELEMENT_SIZE[type]) throw new Error(`${file}: raw_data size does not match the dims`);
  return { name, type, dims, bytes: raw };
}

/**
 * A real model as a golden case (issue 5): the file from the cache tools/models/fetch.sh fills, inputs from
 * tools/models/cases.mjs (the first case of that model, its first step), so the golden rows hash exactly what
 * tools/models/compare.mjs checks against ONNX Runtime. Returns null when the model is not in the cache.
 */
export async function loadRealModelCase(c) {
  const dir = join(process.env.ONEMODEL_CACHE || join(homedir(), '.cache', 'onemodel'), 'models');
  const { cases } = await import('../models/cases.mjs');
  const mc = cases(dir).find((x) => x.model === c.realModel);
  if (!mc) throw new Error(`model:${c.realModel} is not a case of tools/models/cases.mjs`);
  if (!existsSync(mc.file)) return null;
  const feeds = mc.steps()[0].feeds;
  const inputs = Object.entries(feeds).map(([name, t]) => ({
    name,
    type: t.type,
    dims: t.dims,
    bytes: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength),
  }));
  return { name: c.name, modelPath: mc.file, outputs: c.outputs, inputs };
}

/**
 * A backend-test case as a golden case: model.onnx and test_data_set_0/input_*.pb (named inputs), the output
 * names from output_*.pb. Throws when the case cannot be read (the harness then skips it with a note).
 */
export function loadBackendCase(dataDir, c) {
  const dir = join(dataDir, c.backend);
  const set = join(dir, 'test_data_set_0');
  const files = readdirSync(set).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const inputs = files.filter((f) => /^input_\d+\.pb$/.test(f)).map((f) => readTensorProto(join(set, f)));
  const outputs = files.filter((f) => /^output_\d+\.pb$/.test(f)).map((f) => readTensorProto(join(set, f)).name);
  if (inputs.some((i) => !i.name) || outputs.some((o) => !o))
    throw new Error(`${c.backend}: unnamed inputs or outputs`);
  return { name: c.name, modelPath: join(dir, 'model.onnx'), outputs, inputs };
}
