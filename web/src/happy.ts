// The one-line happy path, InferenceSession.runOne (web/src/session.ts): the JS form of the C++ Model::run, with
// its rules (docs/graph-runtime.md section 4). The values feed the model's one input or, on a text encoder,
// its token ids, with attention_mask filled with ones and token_type_ids with zeros in the same dims.
import { OneModelError } from './errors.js';
import { Tensor } from './tensor.js';
import type { TensorType } from './tensor.js';

/** What runOne takes: a typed array (its own element type) or plain numbers (the input's declared type). */
export type OneInputValues = Float32Array | BigInt64Array | Int32Array | readonly number[];

/** The part of an input's metadata the happy path reads (session.ts's TensorValueMetadata and the others). */
interface InputInfo {
  readonly name: string;
  readonly isTensor: boolean;
  readonly type?: string;
  readonly shape?: readonly (number | string)[];
  readonly hasShape?: boolean;
}

const FILLED: Readonly<Record<string, number>> = { attention_mask: 1, token_type_ids: 0 };
const FILL_TYPES: readonly string[] = ['int64', 'int32', 'float32'];

function invalid(message: string): never {
  throw new OneModelError('InvalidInput', message);
}

/** Dims for `count` values when none are given: section 4's rules, as Model::run applies them. */
function declaredDims(info: InputInfo, count: number): number[] {
  const shape = info.shape ?? [];
  if (!info.hasShape) return [count]; // unknown rank: a flat vector
  const free = shape.filter((d) => typeof d !== 'number').length;
  if (shape.length === 2 && free === 2) return [1, count]; // [batch, sequence]: one sequence
  const fixed = shape.reduce<number>((p, d) => (typeof d === 'number' ? p * d : p), 1);
  const declared = `input '${info.name}' [${shape.join(',')}]`;
  if (free === 0) {
    if (fixed !== count) invalid(`${declared} needs ${fixed} values, got ${count}`);
    return shape as number[];
  }
  if (free > 1) invalid(`${declared} has more than one symbolic or unknown dimension; pass dims`);
  if (fixed === 0 ? count !== 0 : count % fixed !== 0)
    invalid(`${declared}: ${count} values are not a whole number of ${fixed}-value rows`);
  return shape.map((d) => (typeof d === 'number' ? d : fixed === 0 ? 0 : count / fixed));
}

/**
 * The feeds of runOne: `values` for the one input that is neither attention_mask nor token_type_ids, and those
 * two (when the model has them) filled in `values`' dims. `outputs` is the model's output count (one needed).
 */
export function oneInputFeeds(
  inputs: readonly InputInfo[],
  outputs: number,
  values: OneInputValues,
  dims?: readonly number[],
): Record<string, Tensor> {
  const others = inputs.filter((i) => !(i.name in FILLED));
  if (outputs !== 1 || others.length !== 1)
    invalid(
      `runOne needs a model with one output and one input (a text encoder's attention_mask and token_type_ids ` +
        `are filled in); this one has ${inputs.length} inputs and ${outputs} outputs (use run() with named tensors)`,
    );
  const info = others[0]!;
  if (!info.isTensor) invalid(`input '${info.name}' is not a tensor; use runValues()`);
  if (!Array.isArray(values) && !ArrayBuffer.isView(values))
    invalid('runOne takes a Float32Array, BigInt64Array, Int32Array or an array of numbers');
  const shape = dims === undefined ? declaredDims(info, values.length) : [...dims];
  const feeds: Record<string, Tensor> = {
    [info.name]: Array.isArray(values)
      ? new Tensor(info.type as TensorType, values, shape)
      : new Tensor(values as Float32Array, shape),
  };
  const size = shape.reduce((p, d) => p * d, 1);
  for (const filled of inputs.filter((i) => i.name in FILLED)) {
    const type = filled.type ?? 'undefined';
    if (!filled.isTensor || !FILL_TYPES.includes(type))
      invalid(`runOne fills input '${filled.name}' only as int64, int32 or float32, not ${type} (use run())`);
    feeds[filled.name] = new Tensor(type as TensorType, new Array<number>(size).fill(FILLED[filled.name]!), shape);
  }
  return feeds;
}
