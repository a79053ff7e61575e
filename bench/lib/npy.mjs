// Minimal NumPy .npy reading and writing for the bar runner: the inputs make_models.py writes and the
// outputs each engine saves (the CLI writes version 1.0, little-endian, C order; so does writeNpy).
// Only the dtypes the benchmark models use are supported; anything else throws, naming the file.
import { readFileSync, writeFileSync } from 'node:fs';

// descr -> [ONNX Runtime / OneModel tensor type, typed array constructor]
const DTYPES = {
  '<f4': ['float32', Float32Array],
  '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array],
  '<i8': ['int64', BigInt64Array],
  '|u1': ['uint8', Uint8Array],
  '|b1': ['bool', Uint8Array],
};

/** Reads a .npy file into { type, dims, data } (data is a typed array of the element type). */
export function readNpy(file) {
  const buf = readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', headerStart, headerStart + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)?.[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (descr === undefined || fortran === undefined || shapeText === undefined) {
    throw new Error(`${file}: cannot parse the header ${JSON.stringify(header)}`);
  }
  if (fortran === 'True') throw new Error(`${file}: fortran_order arrays are not supported here`);
  const spec = DTYPES[descr];
  if (spec === undefined) throw new Error(`${file}: dtype ${descr} is not supported here`);
  const dims = shapeText
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(Number);
  const [type, Ctor] = spec;
  const count = dims.reduce((a, b) => a * b, 1);
  const start = headerStart + headerLen;
  const bytes = count * Ctor.BYTES_PER_ELEMENT;
  if (buf.length !== start + bytes) throw new Error(`${file}: ${buf.length - start} data bytes, expected ${bytes}`);
  // Copy into a fresh, aligned buffer (the file buffer's data offset need not be aligned).
  const data = new Ctor(count);
  new Uint8Array(data.buffer).set(buf.subarray(start, start + bytes));
  return { type, dims, data };
}

/** Writes { type, dims, data } as .npy version 1.0 (header padded to a multiple of 64 bytes). */
export function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, [t]]) => t === tensor.type);
  if (entry === undefined) throw new Error(`${file}: cannot write element type ${tensor.type}`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  writeFileSync(
    file,
    Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]),
  );
}

/**
 * The scaled error of the method (check_scaled_err): max|a - b| / max|b|, with b the reference. Shapes
 * must match; a NaN anywhere in either gives Infinity (a NaN is never a close answer). A zero reference
 * gives the plain max|a - b|.
 */
export function scaledError(a, b) {
  if (a.dims.join(',') !== b.dims.join(',')) return Infinity;
  let maxDiff = 0;
  let maxRef = 0;
  for (let i = 0; i < b.data.length; i++) {
    const x = Number(a.data[i]);
    const y = Number(b.data[i]);
    if (Number.isNaN(x) !== Number.isNaN(y)) return Infinity;
    if (Number.isNaN(x)) continue;
    if (Math.abs(y) > maxRef) maxRef = Math.abs(y);
    if (x === y) continue; // also equal infinities
    const d = Math.abs(x - y); // Infinity when only one side is infinite
    if (d > maxDiff) maxDiff = d;
  }
  return maxRef > 0 ? maxDiff / maxRef : maxDiff;
}
