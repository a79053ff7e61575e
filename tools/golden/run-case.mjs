// Runs golden cases on the npm package (the wasm engine) and hashes inputs and outputs. Written for both
// the Node row (imported by rows.mjs) and the browser row (served to the page as-is), so both run the same
// code: no Node modules here, SHA-256 through WebCrypto (globalThis.crypto.subtle, present in Node >= 18
// and in pages of a secure origin such as http://127.0.0.1).

// The SHA-256 of the text 'onemodel golden: case cannot run in exact mode' (a fixed value, not a tensor hash).
export const CANNOT_RUN_MARKER = '97e7f020799eab0969d6e2f360e25a43c971b337c6e5b70ca632e927986af430';

// Errors that mean "this engine does not implement what the case uses", reported with the fixed marker so
// that rows still compare; any other error is a result of its own ("error:<Kind>") and never equals a hash.
export const CANNOT_RUN_KINDS = new Set(['UnsupportedOperator', 'ExactModeUnavailable', 'Unsupported']);

/** Element type name (the package's Tensor type) -> ONNX TensorProto.DataType code (tensor/hash.h). */
export const TYPE_CODES = {
  float32: 1,
  uint8: 2,
  int8: 3,
  uint16: 4,
  int16: 5,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
  uint32: 12,
  uint64: 13,
  bfloat16: 16,
};

const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256 in the tensor/hash.h layout: int64 LE type code, rank, dims, then the element bytes. */
export async function tensorSha256(type, dims, bytes) {
  const code = TYPE_CODES[type];
  if (code === undefined) throw new Error(`no type code for '${type}'`);
  const all = new Uint8Array(8 * (2 + dims.length) + bytes.byteLength);
  const view = new DataView(all.buffer);
  view.setBigInt64(0, BigInt(code), true);
  view.setBigInt64(8, BigInt(dims.length), true);
  dims.forEach((d, i) => view.setBigInt64(16 + 8 * i, BigInt(d), true));
  all.set(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), 8 * (2 + dims.length));
  return hex(await globalThis.crypto.subtle.digest('SHA-256', all));
}

/** A typed array of the package's Tensor type over a copy of `bytes` (aligned). */
function typedArray(Tensor, type, bytes) {
  const ctors = {
    float32: Float32Array,
    float64: Float64Array,
    int8: Int8Array,
    uint8: Uint8Array,
    int16: Int16Array,
    uint16: Uint16Array,
    int32: Int32Array,
    uint32: Uint32Array,
    int64: BigInt64Array,
    uint64: BigUint64Array,
    bool: Uint8Array,
    float16: Uint16Array,
    bfloat16: Uint16Array,
  };
  const Ctor = ctors[type];
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Ctor(copy.buffer, 0, bytes.byteLength / Ctor.BYTES_PER_ELEMENT);
}

/**
 * Runs one case in exact mode and returns its result lines as [key, value] pairs: one per input
 * (`<case>/input:<name>`, so a row fed different bytes shows up) and one per declared output.
 * `c` = {name, model (bytes), outputs, inputs: [{name, type, dims, bytes}]}; `api` = the package exports;
 * `options` = further session options (engine, threads).
 */
export async function runCase(api, c, options = {}) {
  const { InferenceSession, Tensor } = api;
  const lines = [];
  for (const input of c.inputs) {
    lines.push([`${c.name}/input:${input.name}`, await tensorSha256(input.type, input.dims, input.bytes)]);
  }
  let session;
  let outputs;
  try {
    session = await InferenceSession.create(c.model, { ...options, mode: 'exact' });
    const feeds = {};
    for (const input of c.inputs) {
      feeds[input.name] = new Tensor(input.type, typedArray(Tensor, input.type, input.bytes), input.dims);
    }
    outputs = await session.run(feeds);
  } catch (e) {
    const kind = e && typeof e.kind === 'string' ? e.kind : 'JsError';
    const value = CANNOT_RUN_KINDS.has(kind) ? CANNOT_RUN_MARKER : `error:${kind}`;
    for (const name of c.outputs) lines.push([`${c.name}/${name}`, value]);
    return lines;
  } finally {
    if (session) await session.release();
  }
  for (const name of c.outputs) {
    const t = outputs[name];
    if (!t) {
      lines.push([`${c.name}/${name}`, 'missing']);
      continue;
    }
    const d = t.data;
    const bytes = new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
    lines.push([`${c.name}/${name}`, await tensorSha256(t.type, t.dims, bytes)]);
  }
  return lines;
}
