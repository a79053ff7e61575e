// Tensor: an element type name, a typed array and dims, in the shape of onnxruntime-common's Tensor so code
// written against that API ports with an import change. Data is row-major; nothing is copied on construction
// when a typed array is given (the caller's array is the tensor's data).
import { OneModelError } from './errors.js';

export type TensorType =
  | 'float32' | 'float64' | 'int8' | 'uint8' | 'int16' | 'uint16' | 'int32' | 'uint32'
  | 'int64' | 'uint64' | 'bool' | 'float16' | 'bfloat16';

/** The typed array each element type is stored in (float16/bfloat16 hold raw IEEE bits, bool holds 0/1). */
export interface TensorDataTypeMap {
  float32: Float32Array;
  float64: Float64Array;
  int8: Int8Array;
  uint8: Uint8Array;
  int16: Int16Array;
  uint16: Uint16Array;
  int32: Int32Array;
  uint32: Uint32Array;
  int64: BigInt64Array;
  uint64: BigUint64Array;
  bool: Uint8Array;
  float16: Uint16Array;
  bfloat16: Uint16Array;
}

export type TensorData = TensorDataTypeMap[TensorType];

type ArrayConstructorOf = { new (length: number): TensorData; new (values: ArrayLike<number> | ArrayLike<bigint>): TensorData };

/** Element type name -> ONNX TensorProto.DataType code (the engine's DType) and typed-array constructor. */
const TYPES: Readonly<Record<TensorType, { code: number; ctor: ArrayConstructorOf }>> = {
  float32: { code: 1, ctor: Float32Array as unknown as ArrayConstructorOf },
  uint8: { code: 2, ctor: Uint8Array as unknown as ArrayConstructorOf },
  int8: { code: 3, ctor: Int8Array as unknown as ArrayConstructorOf },
  uint16: { code: 4, ctor: Uint16Array as unknown as ArrayConstructorOf },
  int16: { code: 5, ctor: Int16Array as unknown as ArrayConstructorOf },
  int32: { code: 6, ctor: Int32Array as unknown as ArrayConstructorOf },
  int64: { code: 7, ctor: BigInt64Array as unknown as ArrayConstructorOf },
  bool: { code: 9, ctor: Uint8Array as unknown as ArrayConstructorOf },
  float16: { code: 10, ctor: Uint16Array as unknown as ArrayConstructorOf },
  float64: { code: 11, ctor: Float64Array as unknown as ArrayConstructorOf },
  uint32: { code: 12, ctor: Uint32Array as unknown as ArrayConstructorOf },
  uint64: { code: 13, ctor: BigUint64Array as unknown as ArrayConstructorOf },
  bfloat16: { code: 16, ctor: Uint16Array as unknown as ArrayConstructorOf },
};

const NAMES_BY_CODE: ReadonlyMap<number, string> = new Map<number, string>([
  ...Object.entries(TYPES).map(([name, t]) => [t.code, name] as [number, string]),
  [0, 'undefined'], [8, 'string'], [14, 'complex64'], [15, 'complex128'],
]);

export function isTensorType(t: unknown): t is TensorType {
  return typeof t === 'string' && Object.prototype.hasOwnProperty.call(TYPES, t);
}

export function typeCode(t: TensorType): number {
  return TYPES[t].code;
}

/** Name of an engine element-type code; ONNX names for the types the package cannot hold. */
export function typeName(code: number): string {
  return NAMES_BY_CODE.get(code) ?? `unknown(${code})`;
}

/** Element type inferred from a typed array, for `new Tensor(data, dims)` (Uint8Array means uint8). */
function typeOfArray(data: unknown): TensorType | undefined {
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint8Array) return 'uint8';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof BigUint64Array) return 'uint64';
  return undefined;
}

function invalid(message: string): OneModelError {
  return new OneModelError('InvalidInput', message);
}

/** Converts a plain JS array to the typed array of `type`; numbers for 64-bit types must be safe integers. */
function fromPlainArray(type: TensorType, values: readonly unknown[]): TensorData {
  const ctor = TYPES[type].ctor;
  if (type === 'int64' || type === 'uint64') {
    const big = values.map((v, i) => {
      if (typeof v === 'bigint') return v;
      if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
      throw invalid(`element ${i} of a ${type} tensor is not a bigint or a safe integer`);
    });
    return new ctor(big);
  }
  if (type === 'bool') {
    return new ctor(values.map((v) => (v ? 1 : 0)));
  }
  const nums = values.map((v, i) => {
    if (typeof v !== 'number') throw invalid(`element ${i} of a ${type} tensor is not a number`);
    return v;
  });
  return new ctor(nums);
}

/** Checks that `dims` is an array of non-negative safe integers and returns its element count. */
export function elementCount(dims: readonly unknown[]): number {
  let n = 1;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw invalid(`dimension ${i} (${String(d)}) is not a non-negative integer`);
    }
    n *= d;
  }
  if (!Number.isSafeInteger(n)) throw invalid(`dims [${dims.join(',')}] describe too many elements`);
  return n;
}

export class Tensor<T extends TensorType = TensorType> {
  readonly type: T;
  readonly data: TensorDataTypeMap[T];
  readonly dims: readonly number[];
  /** Number of elements (the product of dims; 1 for a scalar). */
  readonly size: number;

  /** `new Tensor('float32', [1, 2, 3, 4], [2, 2])` or `new Tensor(float32Array, [2, 2])`. Dims default to [length]. */
  constructor(type: T, data: TensorDataTypeMap[T] | readonly number[] | readonly bigint[] | readonly boolean[], dims?: readonly number[]);
  constructor(data: TensorDataTypeMap[T], dims?: readonly number[]);
  constructor(a: unknown, b?: unknown, c?: unknown) {
    let type: TensorType;
    let data: unknown;
    let dims: unknown;
    if (typeof a === 'string') {
      if (!isTensorType(a)) throw invalid(`unknown tensor type '${a}'`);
      type = a;
      data = b;
      dims = c;
    } else {
      const inferred = typeOfArray(a);
      if (inferred === undefined) throw invalid('tensor data must be a typed array when no type is given');
      type = inferred;
      data = a;
      dims = b;
    }
    let typed: TensorData;
    if (Array.isArray(data)) {
      typed = fromPlainArray(type, data);
    } else if (data instanceof TYPES[type].ctor) {
      typed = data as TensorData;
    } else {
      throw invalid(`data of a ${type} tensor must be a ${TYPES[type].ctor.name} or a plain array`);
    }
    if (dims === undefined) dims = [typed.length];
    if (!Array.isArray(dims)) throw invalid('dims must be an array of integers');
    const size = elementCount(dims);
    if (size !== typed.length) {
      throw invalid(`a ${type} tensor with dims [${dims.join(',')}] needs ${size} elements, the data holds ${typed.length}`);
    }
    this.type = type as T;
    this.data = typed as TensorDataTypeMap[T];
    this.dims = Object.freeze([...(dims as number[])]);
    this.size = size;
  }
}

/** The typed-array constructor of a type (used when validating feeds that are not Tensor instances). */
export function arrayConstructor(t: TensorType): Function {
  return TYPES[t].ctor;
}
