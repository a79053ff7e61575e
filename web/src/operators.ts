// The operator vocabulary of building models in code (docs/model-building.md sections 7 and 9), written once for
// GraphValue (lazy: appends a node) and EagerValue (computes now and, while tracing, records), as the C++ side's
// Operators<V> (engine/include/onemodel/operators.h). A subclass says what applying an operator means.
import { OneModelError } from './errors.js';
import { isTensorType, typeCode } from './tensor.js';
import type { TensorType } from './tensor.js';

/** An attribute of `op()`: integers as numbers (floats as `{ float: x }`), strings, integer lists, `{ floats }`. */
export type AttributeValue =
  number | string | readonly number[] | { readonly float: number } | { readonly floats: readonly number[] };

/** Convolution and pooling attributes (ONNX names); absent = the operator's default. */
export interface ConvAttributes {
  strides?: readonly number[];
  pads?: readonly number[];
  dilations?: readonly number[];
  kernelShape?: readonly number[];
  outputPadding?: readonly number[];
  group?: number;
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

/** Attributes as the bindings take them: [{ name, kind, value }]. */
export function encodeAttributes(
  attrs: Readonly<Record<string, AttributeValue>>,
): { name: string; kind: string; value: unknown }[] {
  return Object.entries(attrs).map(([name, v]) => {
    if (typeof v === 'string') return { name, kind: 'string', value: v };
    if (typeof v === 'number') {
      if (!Number.isInteger(v))
        throw new OneModelError(
          'InvalidArgument',
          `attribute '${name}': ${v} is not an integer (write { float: ${v} })`,
        );
      return { name, kind: 'int', value: v };
    }
    if (Array.isArray(v)) {
      if (!v.every((x) => Number.isInteger(x)))
        throw new OneModelError('InvalidArgument', `attribute '${name}': integers expected (write { floats: [...] })`);
      return { name, kind: 'ints', value: [...v] };
    }
    if (typeof v === 'object' && v !== null && 'float' in v && typeof v.float === 'number')
      return { name, kind: 'float', value: v.float };
    if (typeof v === 'object' && v !== null && 'floats' in v && Array.isArray(v.floats))
      return { name, kind: 'floats', value: [...v.floats] };
    throw new OneModelError('InvalidArgument', `attribute '${name}': unsupported value ${String(v)}`);
  });
}

export abstract class Operators<V> {
  /** Applies `opType` to this value followed by `inputs` (null: an omitted optional input). */
  protected abstract apply(opType: string, inputs: (V | null)[], attrs: Record<string, AttributeValue>): V;
  /** An int64 constant beside this value (axes, shapes). */
  protected abstract ints(values: readonly number[]): V;

  private op1(opType: string, inputs: (V | null)[], attrs: Record<string, AttributeValue> = {}): V {
    return this.apply(opType, inputs, attrs);
  }
  private opInts(opType: string, ints: readonly number[], attrs: Record<string, AttributeValue> = {}): V {
    return this.apply(opType, [this.ints(ints)], attrs);
  }

  add(b: V): V {
    return this.op1('Add', [b]);
  }
  sub(b: V): V {
    return this.op1('Sub', [b]);
  }
  mul(b: V): V {
    return this.op1('Mul', [b]);
  }
  div(b: V): V {
    return this.op1('Div', [b]);
  }
  pow(b: V): V {
    return this.op1('Pow', [b]);
  }
  matMul(b: V): V {
    return this.op1('MatMul', [b]);
  }
  neg(): V {
    return this.op1('Neg', []);
  }
  relu(): V {
    return this.op1('Relu', []);
  }
  sigmoid(): V {
    return this.op1('Sigmoid', []);
  }
  tanh(): V {
    return this.op1('Tanh', []);
  }
  exp(): V {
    return this.op1('Exp', []);
  }
  log(): V {
    return this.op1('Log', []);
  }
  sqrt(): V {
    return this.op1('Sqrt', []);
  }
  abs(): V {
    return this.op1('Abs', []);
  }
  erf(): V {
    return this.op1('Erf', []);
  }
  gelu(approximate: 'none' | 'tanh' = 'none'): V {
    return this.op1('Gelu', [], { approximate });
  }
  softmax(axis = -1): V {
    return this.op1('Softmax', [], { axis });
  }
  logSoftmax(axis = -1): V {
    return this.op1('LogSoftmax', [], { axis });
  }
  layerNormalization(scale: V, bias: V | null = null, axis = -1, epsilon = 1e-5): V {
    return this.op1('LayerNormalization', [scale, bias], { axis, epsilon: { float: epsilon } });
  }
  batchNormalization(scale: V, bias: V, mean: V, variance: V, epsilon = 1e-5): V {
    return this.op1('BatchNormalization', [scale, bias, mean, variance], { epsilon: { float: epsilon } });
  }
  conv(w: V, b: V | null = null, attrs: ConvAttributes = {}): V {
    return this.op1('Conv', [w, b], windowAttributes(attrs, true, false));
  }
  convTranspose(w: V, b: V | null = null, attrs: ConvAttributes = {}): V {
    return this.op1('ConvTranspose', [w, b], windowAttributes(attrs, true, false));
  }
  maxPool(attrs: ConvAttributes): V {
    return this.op1('MaxPool', [], windowAttributes(attrs, false, false));
  }
  averagePool(attrs: ConvAttributes): V {
    return this.op1('AveragePool', [], windowAttributes(attrs, false, true));
  }
  /** Resize to explicit sizes (every axis): 'nearest' (asymmetric, floor) or 'linear' (half_pixel). */
  resize(sizes: readonly number[], mode: 'nearest' | 'linear' = 'nearest'): V {
    const attrs: Record<string, AttributeValue> =
      mode === 'nearest'
        ? { coordinate_transformation_mode: 'asymmetric', mode, nearest_mode: 'floor' }
        : { coordinate_transformation_mode: 'half_pixel', mode };
    return this.op1('Resize', [null, null, this.ints(sizes)], attrs);
  }
  gather(indices: V, axis = 0): V {
    return this.op1('Gather', [indices], { axis });
  }
  reduceSum(axes: readonly number[], keepdims = true): V {
    return this.opInts('ReduceSum', axes, { keepdims: keepdims ? 1 : 0 });
  }
  reduceMean(axes: readonly number[], keepdims = true): V {
    return this.opInts('ReduceMean', axes, { keepdims: keepdims ? 1 : 0 });
  }
  transpose(perm: readonly number[]): V {
    return this.op1('Transpose', [], { perm });
  }
  /** ONNX rules: 0 copies the input's axis, one -1 takes the rest. */
  reshape(dims: readonly number[]): V {
    return this.opInts('Reshape', dims);
  }
  squeeze(axes: readonly number[]): V {
    return this.opInts('Squeeze', axes);
  }
  unsqueeze(axes: readonly number[]): V {
    return this.opInts('Unsqueeze', axes);
  }
  expand(dims: readonly number[]): V {
    return this.opInts('Expand', dims);
  }
  slice(starts: readonly number[], ends: readonly number[], axes: readonly number[], steps?: readonly number[]): V {
    const c = (v: readonly number[]) => this.ints(v);
    return this.op1('Slice', [c(starts), c(ends), c(axes), ...(steps ? [c(steps)] : [])]);
  }
  /** The extents as an int64 vector; shape operands computed from it stay symbolic (docs/model-building.md section 3). */
  shape(): V {
    return this.op1('Shape', []);
  }
  cast(to: TensorType): V {
    if (!isTensorType(to)) throw new OneModelError('InvalidArgument', `cast: '${String(to)}' is not a tensor type`);
    return this.op1('Cast', [], { to: typeCode(to) });
  }
}

function windowAttributes(a: ConvAttributes, conv: boolean, average: boolean): Record<string, AttributeValue> {
  const r: Record<string, AttributeValue> = {};
  if (!conv && average) r.count_include_pad = a.countIncludePad ? 1 : 0;
  if (!conv) r.ceil_mode = a.ceilMode ? 1 : 0;
  if (a.dilations) r.dilations = a.dilations;
  if (conv && a.group !== undefined && a.group !== 1) r.group = a.group;
  if (a.kernelShape) r.kernel_shape = a.kernelShape;
  if (a.outputPadding) r.output_padding = a.outputPadding;
  if (a.pads) r.pads = a.pads;
  if (a.strides) r.strides = a.strides;
  return r;
}
