// Building models in code from JavaScript (docs/model-building.md section 7): the same lazy GraphBuilder as the C++
// API, over the engine's own builder in the wasm module (bindings/builder_embind.cc), so every type and shape comes
// from the operators' `infer` and errors are the engine's (GraphBuild, Compile). The wasm module is the builder's
// engine everywhere (also in Node, where sessions may then run on the native addon): `await GraphBuilder.ready()`
// once before `new GraphBuilder()`, or use `await GraphBuilder.create()`.
import { OneModelError, fromNative } from './errors.js';
import type { NativeBuilder } from './native.js';
import { InferenceSession, chooseEngine, setDefaultFeeds } from './session.js';
import type { SessionOptions } from './session.js';
import { Tensor, isTensorType, typeCode, typeName } from './tensor.js';
import type { TensorType } from './tensor.js';

/** A dimension: a fixed extent, or a symbolic one (a name when declared; an expression's text when derived). */
export type Dim = number | string;

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

export interface BuilderSessionOptions extends SessionOptions {
  /** Extents that fix the symbolic axes of the inputs they name (checked again: Compile errors). */
  inputSpecs?: Readonly<Record<string, readonly number[]>>;
}

let factory: ((opset: number) => NativeBuilder) | undefined;

function invalid(message: string): OneModelError {
  return new OneModelError('InvalidArgument', message);
}

function call<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw fromNative(e);
  }
}

function encodeAttributes(
  attrs: Readonly<Record<string, AttributeValue>>,
): { name: string; kind: string; value: unknown }[] {
  return Object.entries(attrs).map(([name, v]) => {
    if (typeof v === 'string') return { name, kind: 'string', value: v };
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) throw invalid(`attribute '${name}': ${v} is not an integer (write { float: ${v} })`);
      return { name, kind: 'int', value: v };
    }
    if (Array.isArray(v)) {
      if (!v.every((x) => Number.isInteger(x)))
        throw invalid(`attribute '${name}': integers expected (write { floats: [...] })`);
      return { name, kind: 'ints', value: [...v] };
    }
    if (typeof v === 'object' && v !== null && 'float' in v && typeof v.float === 'number')
      return { name, kind: 'float', value: v.float };
    if (typeof v === 'object' && v !== null && 'floats' in v && Array.isArray(v.floats))
      return { name, kind: 'floats', value: [...v.floats] };
    throw invalid(`attribute '${name}': unsupported value ${String(v)}`);
  });
}

function int64Tensor(values: readonly number[]): Tensor {
  return new Tensor('int64', BigInt64Array.from(values.map((v) => BigInt(v))), [values.length]);
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

/** A value of a GraphBuilder: immutable; each method appends one node and returns its output. */
export class GraphValue {
  /** @internal */
  constructor(
    readonly builder: GraphBuilder,
    readonly id: number,
  ) {}

  /** The element type. */
  get type(): TensorType {
    return typeName(this.builder.native.value(this.id).dtype) as TensorType;
  }
  /** The dimensions: numbers where fixed, symbol names or expressions (`'(S + T)'`, `'8*S'`) where symbolic. */
  get dims(): Dim[] {
    return call(() => this.builder.native.value(this.id).dims);
  }

  #op(opType: string, inputs: (GraphValue | null)[], attrs: Record<string, AttributeValue> = {}): GraphValue {
    return this.builder.op(opType, [this, ...inputs], attrs)[0]!;
  }
  #ints(opType: string, ints: readonly number[], attrs: Record<string, AttributeValue> = {}): GraphValue {
    return this.#op(opType, [this.builder.constant(int64Tensor(ints))], attrs);
  }

  add(b: GraphValue): GraphValue {
    return this.#op('Add', [b]);
  }
  sub(b: GraphValue): GraphValue {
    return this.#op('Sub', [b]);
  }
  mul(b: GraphValue): GraphValue {
    return this.#op('Mul', [b]);
  }
  div(b: GraphValue): GraphValue {
    return this.#op('Div', [b]);
  }
  pow(b: GraphValue): GraphValue {
    return this.#op('Pow', [b]);
  }
  matMul(b: GraphValue): GraphValue {
    return this.#op('MatMul', [b]);
  }
  neg(): GraphValue {
    return this.#op('Neg', []);
  }
  relu(): GraphValue {
    return this.#op('Relu', []);
  }
  sigmoid(): GraphValue {
    return this.#op('Sigmoid', []);
  }
  tanh(): GraphValue {
    return this.#op('Tanh', []);
  }
  exp(): GraphValue {
    return this.#op('Exp', []);
  }
  log(): GraphValue {
    return this.#op('Log', []);
  }
  sqrt(): GraphValue {
    return this.#op('Sqrt', []);
  }
  abs(): GraphValue {
    return this.#op('Abs', []);
  }
  erf(): GraphValue {
    return this.#op('Erf', []);
  }
  gelu(approximate: 'none' | 'tanh' = 'none'): GraphValue {
    return this.#op('Gelu', [], { approximate });
  }
  softmax(axis = -1): GraphValue {
    return this.#op('Softmax', [], { axis });
  }
  logSoftmax(axis = -1): GraphValue {
    return this.#op('LogSoftmax', [], { axis });
  }
  layerNormalization(scale: GraphValue, bias: GraphValue | null = null, axis = -1, epsilon = 1e-5): GraphValue {
    return this.#op('LayerNormalization', [scale, bias], { axis, epsilon: { float: epsilon } });
  }
  batchNormalization(
    scale: GraphValue,
    bias: GraphValue,
    mean: GraphValue,
    variance: GraphValue,
    epsilon = 1e-5,
  ): GraphValue {
    return this.#op('BatchNormalization', [scale, bias, mean, variance], { epsilon: { float: epsilon } });
  }
  conv(w: GraphValue, b: GraphValue | null = null, attrs: ConvAttributes = {}): GraphValue {
    return this.#op('Conv', [w, b], windowAttributes(attrs, true, false));
  }
  convTranspose(w: GraphValue, b: GraphValue | null = null, attrs: ConvAttributes = {}): GraphValue {
    return this.#op('ConvTranspose', [w, b], windowAttributes(attrs, true, false));
  }
  maxPool(attrs: ConvAttributes): GraphValue {
    return this.#op('MaxPool', [], windowAttributes(attrs, false, false));
  }
  averagePool(attrs: ConvAttributes): GraphValue {
    return this.#op('AveragePool', [], windowAttributes(attrs, false, true));
  }
  /** Resize to explicit sizes (every axis): 'nearest' (asymmetric, floor) or 'linear' (half_pixel). */
  resize(sizes: readonly number[], mode: 'nearest' | 'linear' = 'nearest'): GraphValue {
    const attrs: Record<string, AttributeValue> =
      mode === 'nearest'
        ? { coordinate_transformation_mode: 'asymmetric', mode, nearest_mode: 'floor' }
        : { coordinate_transformation_mode: 'half_pixel', mode };
    return this.#op('Resize', [null, null, this.builder.constant(int64Tensor(sizes))], attrs);
  }
  gather(indices: GraphValue, axis = 0): GraphValue {
    return this.#op('Gather', [indices], { axis });
  }
  reduceSum(axes: readonly number[], keepdims = true): GraphValue {
    return this.#ints('ReduceSum', axes, { keepdims: keepdims ? 1 : 0 });
  }
  reduceMean(axes: readonly number[], keepdims = true): GraphValue {
    return this.#ints('ReduceMean', axes, { keepdims: keepdims ? 1 : 0 });
  }
  transpose(perm: readonly number[]): GraphValue {
    return this.#op('Transpose', [], { perm });
  }
  /** ONNX rules: 0 copies the input's axis, one -1 takes the rest. */
  reshape(dims: readonly number[]): GraphValue {
    return this.#ints('Reshape', dims);
  }
  squeeze(axes: readonly number[]): GraphValue {
    return this.#ints('Squeeze', axes);
  }
  unsqueeze(axes: readonly number[]): GraphValue {
    return this.#ints('Unsqueeze', axes);
  }
  expand(dims: readonly number[]): GraphValue {
    return this.#ints('Expand', dims);
  }
  slice(
    starts: readonly number[],
    ends: readonly number[],
    axes: readonly number[],
    steps?: readonly number[],
  ): GraphValue {
    const c = (v: readonly number[]) => this.builder.constant(int64Tensor(v));
    return this.#op('Slice', [c(starts), c(ends), c(axes), ...(steps ? [c(steps)] : [])]);
  }
  /** The extents as an int64 vector; shape operands computed from it stay symbolic (docs/model-building.md section 3). */
  shape(): GraphValue {
    return this.#op('Shape', []);
  }
  cast(to: TensorType): GraphValue {
    if (!isTensorType(to)) throw invalid(`cast: '${String(to)}' is not a tensor type`);
    return this.#op('Cast', [], { to: typeCode(to) });
  }
}

/** Builds a graph lazily: values are nodes of one growing graph; export with toOnnx(), run with createSession(). */
export class GraphBuilder {
  /** @internal */
  readonly native: NativeBuilder;
  readonly #leaves = new Map<string, Tensor>();

  /** Loads the engine the builder states shapes with (the wasm module). */
  static async ready(): Promise<void> {
    if (factory !== undefined) return;
    const engine = await chooseEngine(['wasm']);
    if (engine.builder === undefined) {
      throw new OneModelError(
        'Unsupported',
        'GraphBuilder needs the wasm module in this thread (not the worker proxy)',
      );
    }
    factory = engine.builder;
  }

  static async create(options?: { opset?: number }): Promise<GraphBuilder> {
    await GraphBuilder.ready();
    return new GraphBuilder(options);
  }

  /** `opset`: the ai.onnx opset of the graph (default 20, the least: Gelu is an opset-20 operator). */
  constructor(options?: { opset?: number }) {
    if (factory === undefined) throw invalid('await GraphBuilder.ready() (or GraphBuilder.create()) first');
    const opset = options?.opset ?? 20;
    if (!Number.isInteger(opset)) throw invalid('GraphBuilder: opset must be an integer');
    this.native = call(() => factory!(opset));
  }

  /** A graph input without data; dims are extents or symbol names (the same name is the same extent). */
  input(name: string, type: TensorType, dims: readonly Dim[]): GraphValue {
    if (typeof name !== 'string' || name === '') throw invalid('input: a name is required');
    if (!isTensorType(type)) throw invalid(`input '${name}': '${String(type)}' is not a tensor type`);
    for (const d of dims) {
      if (!(typeof d === 'string' ? d !== '' : Number.isInteger(d) && d >= 0))
        throw invalid(`input '${name}': dimension ${String(d)} is not an extent or a symbol name`);
    }
    return new GraphValue(
      this,
      call(() => this.native.input(name, typeCode(type), [...dims])),
    );
  }

  /** A constant (an initializer when exported). */
  constant(tensor: Tensor, name = ''): GraphValue {
    if (!(tensor instanceof Tensor)) throw invalid('constant: a Tensor is required');
    return new GraphValue(
      this,
      call(() => this.native.constant(name, typeCode(tensor.type), [...tensor.dims], tensor.data as ArrayBufferView)),
    );
  }

  /** An input that carries data: sessions run without it (the data is its default) or with another value;
   * `axisNames[i]` makes axis i symbolic. */
  leaf(name: string, tensor: Tensor, axisNames: readonly string[] = []): GraphValue {
    if (!(tensor instanceof Tensor)) throw invalid(`leaf '${name}': a Tensor is required`);
    const id = call(() =>
      this.native.leaf(name, typeCode(tensor.type), [...tensor.dims], tensor.data as ArrayBufferView, [...axisNames]),
    );
    this.#leaves.set(name, tensor);
    return new GraphValue(this, id);
  }

  /** Any operator of the engine by its ONNX name (LSTM, GRU, ...); null for an omitted optional input. */
  op(
    opType: string,
    inputs: readonly (GraphValue | null)[],
    attrs: Readonly<Record<string, AttributeValue>> = {},
    numOutputs = 1,
  ): GraphValue[] {
    const ids = inputs.map((v) => {
      if (v === null) return -1;
      if (!(v instanceof GraphValue) || v.builder !== this)
        throw invalid(`${opType}: an input is not a GraphValue of this builder`);
      return v.id;
    });
    const encoded = encodeAttributes(attrs);
    return call(() => this.native.op(opType, ids, encoded, numOutputs)).map((id) => new GraphValue(this, id));
  }

  concat(values: readonly GraphValue[], axis: number): GraphValue {
    return this.op('Concat', values, { axis })[0]!;
  }

  /** ONNX bytes of what `outputs` need (pruned; deterministic: equal graphs give equal bytes). */
  toOnnx(outputs: Readonly<Record<string, GraphValue>>): Uint8Array {
    const [names, ids] = this.#outputs(outputs);
    return call(() => this.native.toOnnx(names, ids));
  }

  /** A session of what `outputs` need; leaves not fed take their data. */
  async createSession(
    outputs: Readonly<Record<string, GraphValue>>,
    options: BuilderSessionOptions = {},
  ): Promise<InferenceSession> {
    const [names, ids] = this.#outputs(outputs);
    const { inputSpecs = {}, ...sessionOptions } = options;
    const specNames = Object.keys(inputSpecs);
    const bytes = call(() =>
      this.native.compiledOnnx(
        names,
        ids,
        specNames,
        specNames.map((n) => [...inputSpecs[n]!]),
      ),
    );
    const session = await InferenceSession.create(bytes, sessionOptions);
    const defaults: Record<string, Tensor> = {};
    for (const [name, t] of this.#leaves) if (session.inputNames.includes(name)) defaults[name] = t;
    setDefaultFeeds(session, defaults);
    return session;
  }

  #outputs(outputs: Readonly<Record<string, GraphValue>>): [string[], number[]] {
    if (typeof outputs !== 'object' || outputs === null)
      throw invalid('outputs must be an object of name -> GraphValue');
    const entries = Object.entries(outputs);
    for (const [name, v] of entries) {
      if (!(v instanceof GraphValue) || v.builder !== this)
        throw invalid(`output '${name}' is not a GraphValue of this builder`);
    }
    return [entries.map(([n]) => n), entries.map(([, v]) => v.id)];
  }
}
