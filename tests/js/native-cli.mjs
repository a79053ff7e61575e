// Cross-checks with the native build: writes .npy inputs, runs the native `onemodel run` CLI in exact mode
// and reads its output hashes, and computes the same hash (tensor/hash.h layout) over bytes produced by the
// wasm build. Used by tests/js/exact-native.test.mjs and tests/browser/run.mjs.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './helpers.mjs';

/** The native CLI: $ONEMODEL_CLI, else the native preset's build (tools/setup.sh builds it), else undefined. */
export function findCli() {
  const candidates = [process.env.ONEMODEL_CLI, join(ROOT, 'build', 'native', 'onemodel')];
  return candidates.find((c) => c && existsSync(c));
}

const NPY_DESCR = { float32: '<f4', float64: '<f8', int32: '<i4', int64: '<i8' };

/** Writes a version 1.0 .npy file (C order) holding `data` with `dims`. */
export function writeNpy(file, type, data, dims) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${NPY_DESCR[type]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const unpadded = 10 + header.length + 1; // magic(6) + version(2) + length(2) + header + '\n'
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

/** Runs `onemodel run MODEL --input name=file.npy ... --mode exact`; returns {outputName: sha256hex}. */
export function cliExactHashes(cli, model, inputs) {
  const args = ['run', model, '--mode', 'exact'];
  for (const [name, file] of Object.entries(inputs)) args.push('--input', `${name}=${file}`);
  const text = execFileSync(cli, args, { encoding: 'utf8', timeout: 60_000 });
  const hashes = {};
  let current;
  for (const line of text.split('\n')) {
    const out = /^output (\S+):/.exec(line);
    if (out) current = out[1];
    const h = /^\s+sha256: ([0-9a-f]{64})$/.exec(line);
    if (h && current !== undefined) hashes[current] = h[1];
  }
  return hashes;
}

/**
 * SHA-256 of a tensor as tensor/hash.h defines it: int64 LE type code, int64 LE rank, int64 LE dims, then the
 * element bytes (little-endian, row-major). `bytes` is a Uint8Array or Buffer of the elements.
 */
export function tensorSha256(typeCode, dims, bytes) {
  const head = Buffer.alloc(8 * (2 + dims.length));
  head.writeBigInt64LE(BigInt(typeCode), 0);
  head.writeBigInt64LE(BigInt(dims.length), 8);
  dims.forEach((d, i) => head.writeBigInt64LE(BigInt(d), 16 + 8 * i));
  return createHash('sha256').update(head).update(bytes).digest('hex');
}
