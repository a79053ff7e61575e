// Reads a version 1.x/2.x .npy file (C order, little-endian float32/float64/int32/int64/bool) into
// {type, data, dims}, the shape tools/models/compare.mjs passes around.
import { readFileSync } from 'node:fs';

const DESCR = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array],
  '|b1': ['bool', Uint8Array],
  '|u1': ['uint8', Uint8Array],
};

export function readNpy(file) {
  const buf = readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*True/.test(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || !(descr in DESCR) || fortran || shape === undefined)
    throw new Error(`${file}: unsupported header ${header}`);
  const dims = shape
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  const [type, Ctor] = DESCR[descr];
  const count = dims.reduce((a, b) => a * b, 1);
  const bytes = buf.subarray(start + headerLen, start + headerLen + count * Ctor.BYTES_PER_ELEMENT);
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(bytes);
  return { type, data, dims };
}
