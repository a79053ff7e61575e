// The checks on what run() and runValues() are fed (web/src/session.ts): every model input named once, each
// value checked against its input's declared kind, element type and dims, before anything crosses the
// binding. One routine for both run forms, so a feed is refused the same way whichever form it came through.
import { OneModelError } from './errors.js';
import { ValueCode } from './native.js';
import type { NativeTensor, NativeValueInfo } from './native.js';
import { type Tensor, arrayConstructor, elementCount, isTensorType, typeCode, typeName } from './tensor.js';

type Overrides = { readonly [dimension: string]: number };

/** One feed after checking: what crosses the binding for one input (run passes the one item of a tensor). */
export interface CheckedFeed {
  readonly name: string;
  readonly kind: ValueCode;
  /** The declared element type (the binding needs it for empty sequences and optionals). */
  readonly elem: number;
  readonly items: NativeTensor[];
}

/**
 * Checks `feeds` against the model's inputs (`inputs` by name, `inputNames` in model order): an object naming
 * every input once. With `values` false (run) every input must be a tensor input fed a Tensor; with `values`
 * true (runValues) sequences and optionals are fed too (checkValue). Returns what crosses the binding, in the
 * order of the feeds; Error(InvalidInput) for anything else.
 */
export function checkFeeds(
  feeds: unknown,
  inputs: ReadonlyMap<string, NativeValueInfo>,
  inputNames: readonly string[],
  overrides: Overrides,
  values: boolean,
): CheckedFeed[] {
  if (typeof feeds !== 'object' || feeds === null || Array.isArray(feeds)) {
    throw new OneModelError(
      'InvalidInput',
      `feeds must be an object mapping input names to ${values ? 'values' : 'tensors'}`,
    );
  }
  const fed: CheckedFeed[] = [];
  for (const [name, value] of Object.entries(feeds)) {
    const info = inputs.get(name);
    if (info === undefined) {
      throw new OneModelError(
        'InvalidInput',
        `'${name}' is not an input of the model (inputs: ${inputNames.join(', ')})`,
      );
    }
    if (values) {
      fed.push(checkValue(name, value, info, overrides));
      continue;
    }
    if (info.kind === 'sequence' || info.kind === 'optional') {
      throw new OneModelError(
        'InvalidInput',
        `input '${name}' is ${info.kind === 'sequence' ? 'a sequence' : 'an optional'}; use runValues()`,
      );
    }
    fed.push({ name, kind: ValueCode.tensor, elem: info.dtype, items: [checkTensor(name, value, info, overrides)] });
  }
  const missing = inputNames.filter((n) => !Object.prototype.hasOwnProperty.call(feeds, n));
  if (missing.length > 0) {
    throw new OneModelError('InvalidInput', `missing input${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  }
  return fed;
}

/**
 * Checks one tensor fed for input `name` against its declared element type and (when `info.hasShape`) dims;
 * returns what crosses the binding.
 */
function checkTensor(name: string, value: unknown, info: NativeValueInfo, overrides: Overrides = {}): NativeTensor {
  const t = value as Partial<Tensor>;
  if (typeof t !== 'object' || t === null || !isTensorType(t.type) || !Array.isArray(t.dims)) {
    throw new OneModelError('InvalidInput', `input '${name}' is not a Tensor`);
  }
  if (!(t.data instanceof (arrayConstructor(t.type) as never))) {
    throw new OneModelError(
      'InvalidInput',
      `input '${name}' of type ${t.type} does not hold a ${arrayConstructor(t.type).name}`,
    );
  }
  const tensorData = t.data as unknown as ArrayLike<number | bigint> & ArrayBufferView;
  const count = elementCount(t.dims);
  if (count !== tensorData.length) {
    throw new OneModelError(
      'InvalidInput',
      `input '${name}' has dims [${t.dims.join(',')}] (${count} elements) but holds ${tensorData.length} elements`,
    );
  }
  if (info.dtype !== 0 && typeCode(t.type) !== info.dtype) {
    throw new OneModelError('InvalidInput', `input '${name}' must be ${typeName(info.dtype)}, got ${t.type}`);
  }
  // A declared scalar takes any shape, as in ORT and the engine (docs/graph-runtime.md section 4, "Inputs").
  if (info.hasShape && info.dims.length > 0) {
    if (t.dims.length !== info.dims.length) {
      throw new OneModelError(
        'InvalidInput',
        `input '${name}' must have rank ${info.dims.length}, got dims [${t.dims.join(',')}]`,
      );
    }
    info.dims.forEach((d, i) => {
      if (typeof d === 'number' && t.dims![i] !== d) {
        throw new OneModelError(
          'InvalidInput',
          `input '${name}' dimension ${i} must be ${d}, got dims [${t.dims!.join(',')}]`,
        );
      }
      if (typeof d === 'string' && Object.prototype.hasOwnProperty.call(overrides, d) && t.dims![i] !== overrides[d]) {
        throw new OneModelError(
          'InvalidInput',
          `input '${name}' dimension ${i} ('${d}') is fixed to ${overrides[d]} by ` +
            `freeDimensionOverrides, got dims [${t.dims!.join(',')}]`,
        );
      }
    });
  }
  if (t.type === 'bool') {
    for (let i = 0; i < tensorData.length; i++) {
      if (tensorData[i] !== 0 && tensorData[i] !== 1) {
        throw new OneModelError(
          'InvalidInput',
          `bool input '${name}' holds ${String(tensorData[i])} at element ${i} (only 0 and 1)`,
        );
      }
    }
  }
  return { dtype: typeCode(t.type), dims: [...t.dims], data: tensorData };
}

/**
 * Checks the value fed for input `name` in runValues: a Tensor for a tensor input, an array of Tensors for a
 * sequence input, and for an optional input its content or null (empty).
 */
function checkValue(name: string, value: unknown, info: NativeValueInfo, overrides: Overrides): CheckedFeed {
  const isOptional = info.kind === 'optional';
  const wantsSequence = info.kind === 'sequence' || (isOptional && info.elementKind === 'sequence');
  const feed = (kind: ValueCode, items: NativeTensor[]): CheckedFeed => ({ name, kind, elem: info.dtype, items });
  if (value === null) {
    if (!isOptional)
      throw new OneModelError('InvalidInput', `input '${name}' is not optional; null is not a value for it`);
    return feed(ValueCode.emptyOptional, []);
  }
  if (Array.isArray(value)) {
    if (!wantsSequence && info.kind !== 'unknown' && !(isOptional && info.elementKind === 'unknown')) {
      throw new OneModelError('InvalidInput', `input '${name}' is not a sequence; pass a Tensor`);
    }
    const items = value.map((t: unknown, k) => checkTensor(`${name}[${k}]`, t, { ...info, hasShape: false }));
    const types = new Set(items.map((t) => t.dtype));
    if (types.size > 1) throw new OneModelError('InvalidInput', `sequence input '${name}' mixes element types`);
    return feed(isOptional ? ValueCode.optionalSequence : ValueCode.sequence, items);
  }
  if (wantsSequence) throw new OneModelError('InvalidInput', `input '${name}' is a sequence; pass an array of Tensors`);
  const tensor = checkTensor(name, value, info.kind === 'tensor' ? info : { ...info, hasShape: false }, overrides);
  return feed(isOptional ? ValueCode.optionalTensor : ValueCode.tensor, [tensor]);
}
