// convert(bytes, options): a model (ONNX, or already the OneModel format) written in the OneModel file format
// (docs/format.md). The writing is the engine's own (engine/format/, through the bindings), so every engine
// gives the same bytes; this file checks the arguments and fills in the defaults.
import { OneModelError, fromNative } from './errors.js';
import { WEIGHT_STORAGE_CODES, chooseEngine, providerNames, type WeightStorage } from './session.js';

export type { WeightStorage };

export interface ConvertOptions {
  /**
   * Default 'float32'. 'float16' and 'bfloat16': the weights a session's `weightStorage` would keep compact
   * (MatMul, Gemm and Conv, 1024 values or more) stored rounded to 16 bits, about half the file; loading widens
   * them back (or keeps them compact with the session option), giving the model with those weights rounded.
   */
  weightStorage?: WeightStorage;
  /** The engine that converts, as for InferenceSession (default: the platform's order). The bytes never depend on it. */
  executionProviders?: readonly (string | { readonly name: string })[];
}

const KEYS = new Set(['weightStorage', 'executionProviders']);

function invalidArgument(message: string): OneModelError {
  return new OneModelError('InvalidArgument', message);
}

/**
 * The model's bytes in the OneModel format: a 64-byte header, a JSON manifest of the graph and the weights
 * aligned for memory mapping. `InferenceSession.create` loads either format and gives the same outputs, bit for
 * bit. External data is refused here (bytes carry no directory). Errors are the readers' (`Malformed`,
 * `InvalidModel`, `Unsupported`, `ExternalData`).
 */
export async function convert(model: Uint8Array | ArrayBuffer, options?: ConvertOptions): Promise<Uint8Array> {
  let bytes: Uint8Array;
  if (model instanceof Uint8Array) bytes = model;
  else if (model instanceof ArrayBuffer) bytes = new Uint8Array(model);
  else throw invalidArgument('convert: the model must be a Uint8Array or an ArrayBuffer');
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw invalidArgument('convert: options must be an object');
  const o = options ?? {};
  for (const key of Object.keys(o)) {
    if (!KEYS.has(key)) throw invalidArgument(`convert: unknown option '${key}'`);
  }
  const storage = o.weightStorage ?? 'float32';
  if (!Object.prototype.hasOwnProperty.call(WEIGHT_STORAGE_CODES, storage)) {
    throw invalidArgument(`convert: weightStorage '${String(storage)}' is not 'float32', 'float16' or 'bfloat16'`);
  }
  const engine = await chooseEngine(providerNames(o.executionProviders ?? []));
  try {
    return await engine.convert(bytes, '<bytes>', WEIGHT_STORAGE_CODES[storage]);
  } catch (e) {
    throw fromNative(e);
  }
}
