// Tensor: an element type name, a typed array and dims, in the shape of onnxruntime-common's Tensor so code
// written against that API ports with an import change. Data is row-major; nothing is copied on construction
// when a typed array is given (the caller's array is the tensor's data).
import { OneModelError } from './errors.js';
import { canvas, floatToPixels, pixelsToFloat, sourcePixels } from './image.js';
import type { ImageToTensorOptions, TensorToImageOptions } from './image.js';

export type TensorType =
  | 'float32'
  | 'float64'
  | 'int8'
  | 'uint8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'uint64'
  | 'bool'
  | 'float16'
  | 'bfloat16';

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

type ArrayConstructorOf = {
  new (length: number): TensorData;
  new (values: ArrayLike<number> | ArrayLike<bigint>): TensorData;
};

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
  [0, 'undefined'],
  [8, 'string'],
  [14, 'complex64'],
  [15, 'complex128'],
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

const Float16ArrayCtor = (globalThis as { Float16Array?: Function }).Float16Array;

/** A Float16Array (where the runtime has one) viewed as the raw bits the tensor stores. */
function float16View(data: unknown): Uint16Array | undefined {
  if (Float16ArrayCtor === undefined || !(data instanceof Float16ArrayCtor)) return undefined;
  const v = data as unknown as ArrayBufferView & { length: number };
  return new Uint16Array(v.buffer, v.byteOffset, v.length);
}

/** Element type of a plain array for `new Tensor(values, dims)` (ORT's rule: numbers are float32). */
function typeOfPlainArray(values: readonly unknown[]): TensorType {
  if (values.every((v) => typeof v === 'boolean')) return 'bool';
  if (values.every((v) => typeof v === 'bigint')) return 'int64';
  if (values.some((v) => typeof v === 'string'))
    throw new OneModelError('Unsupported', 'string tensors are not supported');
  return 'float32';
}

/** Element type inferred from a typed array, for `new Tensor(data, dims)` (Uint8Array means uint8). */
function typeOfArray(data: unknown): TensorType | undefined {
  if (float16View(data) !== undefined) return 'float16';
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

const f64 = new Float64Array(1);
const f64Words = new Uint32Array(f64.buffer); // little-endian: [low, high]
const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** Rounds x to the nearest integer, ties to even (x >= 0). */
function roundHalfEven(x: number): number {
  const f = Math.floor(x);
  const r = x - f;
  return r > 0.5 || (r === 0.5 && f % 2 === 1) ? f + 1 : f;
}

/**
 * IEEE binary16 bits of a JS number, rounded once from the double with ties to even (what a Float16Array
 * stores). NaN becomes the quiet NaN 0x7E00.
 */
export function float16Bits(x: number): number {
  if (Number.isNaN(x)) return 0x7e00;
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a >= 65520) return sign | 0x7c00; // 65520 is halfway between 65504 and 2^16: even rounds up to infinity
  if (a < 2 ** -14) return sign | roundHalfEven(a * 2 ** 24); // subnormal (1024 carries into the normals)
  f64[0] = a;
  const hi = f64Words[1]!;
  const lo = f64Words[0]!;
  const e = ((hi >>> 20) & 0x7ff) - 1023;
  const m = (hi >>> 10) & 0x3ff; // the top 10 of the 52 mantissa bits
  const rest = (hi & 0x3ff) * 4294967296 + lo; // the other 42, exact in a double
  const halfway = 2 ** 41;
  let bits = ((e + 15) << 10) | m;
  if (rest > halfway || (rest === halfway && (m & 1) === 1)) bits += 1; // a carry moves into the exponent
  return sign | bits;
}

/** bfloat16 bits of a JS number: rounded to float32 first, then to bfloat16 with ties to even; NaN 0x7FC0. */
export function bfloat16Bits(x: number): number {
  if (Number.isNaN(x)) return 0x7fc0;
  f32[0] = x;
  const b = f32Bits[0]!;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
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
  // Numbers are values: a float16/bfloat16 tensor stores their rounded bits, never the numbers truncated.
  if (type === 'float16') return new ctor(nums.map(float16Bits));
  if (type === 'bfloat16') return new ctor(nums.map(bfloat16Bits));
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
  constructor(
    type: T,
    data: TensorDataTypeMap[T] | readonly number[] | readonly bigint[] | readonly boolean[],
    dims?: readonly number[],
  );
  constructor(data: TensorDataTypeMap[T], dims?: readonly number[]);
  constructor(a: unknown, b?: unknown, c?: unknown) {
    let type: TensorType;
    let data: unknown;
    let dims: unknown;
    if (typeof a === 'string') {
      if (a === 'string') throw new OneModelError('Unsupported', 'string tensors are not supported');
      if (!isTensorType(a)) throw invalid(`unknown tensor type '${a}'`);
      type = a;
      data = b;
      dims = c;
    } else if (Array.isArray(a)) {
      type = typeOfPlainArray(a);
      data = a;
      dims = b;
    } else {
      const inferred = typeOfArray(a);
      if (inferred === undefined) throw invalid('tensor data must be a typed array when no type is given');
      type = inferred;
      data = a;
      dims = b;
    }
    let typed: TensorData;
    const half = type === 'float16' ? float16View(data) : undefined;
    if (Array.isArray(data)) {
      typed = fromPlainArray(type, data);
    } else if (half !== undefined) {
      typed = half;
    } else if (data instanceof TYPES[type].ctor) {
      typed = data as TensorData;
    } else {
      throw invalid(`data of a ${type} tensor must be a ${TYPES[type].ctor.name} or a plain array`);
    }
    if (dims === undefined) dims = [typed.length];
    if (!Array.isArray(dims)) throw invalid('dims must be an array of integers');
    const size = elementCount(dims);
    if (size !== typed.length) {
      throw invalid(
        `a ${type} tensor with dims [${dims.join(',')}] needs ${size} elements, the data holds ${typed.length}`,
      );
    }
    this.type = type as T;
    this.data = typed as TensorDataTypeMap[T];
    this.dims = Object.freeze([...(dims as number[])]);
    this.size = size;
  }

  /** Where the data lives (ORT's field): always 'cpu' here. */
  get location(): 'cpu' {
    return 'cpu';
  }

  /** ORT's accessor: resolves to `data` (the data is always in JS memory here). */
  async getData(_releaseData?: boolean): Promise<TensorDataTypeMap[T]> {
    return this.data;
  }

  /** ORT's release of GPU data; a CPU tensor holds nothing to release, so this does nothing. */
  dispose(): void {}

  /**
   * ORT's Tensor.fromImage: a float32 [1, C, H, W] tensor of an image, value = (pixel + bias) / mean per
   * channel (defaults 255 and 0). Takes ImageData or any {data, width, height} of RGBA bytes, a pixel buffer with
   * `options.width` / `height` (and `format` 'RGBA' or 'RGB'), and in browsers an image element, bitmap or URL.
   */
  static async fromImage(source: unknown, options: ImageToTensorOptions = {}): Promise<Tensor<'float32'>> {
    const { pixels, width, height, format } = await sourcePixels(source, options);
    const { data, dims } = pixelsToFloat(pixels, width, height, { ...options, format });
    return new Tensor('float32', data, dims);
  }

  /**
   * ORT's toImageData: the RGBA pixels of a float32 image tensor, pixel = (value - bias) * mean per channel
   * (alpha 255 when the tensor has 3 channels). An ImageData where the runtime has one, else an object with
   * the same fields ({data, width, height, colorSpace}).
   */
  toImageData(options: TensorToImageOptions = {}): { data: Uint8ClampedArray; width: number; height: number } {
    if (this.type !== 'float32') throw invalid(`toImageData needs a float32 tensor, this one is ${this.type}`);
    const { rgba, width, height } = floatToPixels(this.data as unknown as Float32Array, this.dims, options);
    const ImageDataCtor = (
      globalThis as {
        ImageData?: new (
          d: Uint8ClampedArray,
          w: number,
          h: number,
        ) => { data: Uint8ClampedArray; width: number; height: number };
      }
    ).ImageData;
    if (ImageDataCtor !== undefined) return new ImageDataCtor(rgba, width, height);
    return { data: rgba, width, height, colorSpace: 'srgb' } as {
      data: Uint8ClampedArray;
      width: number;
      height: number;
    };
  }

  /** ORT's toDataURL: the image as a PNG data URL (needs a canvas: browsers). */
  toDataURL(options: TensorToImageOptions = {}): string {
    const image = this.toImageData(options);
    const { canvas: c, ctx } = canvas(image.width, image.height);
    ctx.putImageData(image, 0, 0);
    if (typeof c.toDataURL !== 'function')
      throw new OneModelError('Unsupported', 'this canvas cannot make a data URL (an OffscreenCanvas in a worker)');
    return c.toDataURL();
  }

  /** A tensor of the same type over the same data with other dims (same element count). */
  reshape(dims: readonly number[]): Tensor<T> {
    if (!Array.isArray(dims)) throw invalid('dims must be an array of integers');
    const size = elementCount(dims);
    if (size !== this.size) {
      throw invalid(`cannot reshape [${this.dims.join(',')}] (${this.size} elements) to [${dims.join(',')}] (${size})`);
    }
    return new Tensor(this.type, this.data as never, dims);
  }
}

// ORT's type names on the class (Tensor.Type, Tensor.DataType, Tensor.ElementTypeMap), so ORT-typed code compiles.
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace Tensor {
  type Type = TensorType;
  type DataType = TensorData;
  type DataTypeMap = TensorDataTypeMap;
}

/** ORT's name for a tensor of a known element type. */
export type TypedTensor<T extends TensorType> = Tensor<T>;

/** The typed-array constructor of a type (used when validating feeds that are not Tensor instances). */
export function arrayConstructor(t: TensorType): Function {
  return TYPES[t].ctor;
}
