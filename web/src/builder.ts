// Building models in code from JavaScript (docs/model-building.md section 7): the same lazy GraphBuilder as the C++
// API, over the engine's own builder in the wasm module (bindings/builder_embind.cc), so every type and shape comes
// from the operators' `infer` and errors are the engine's (GraphBuild, Compile). The wasm module is the builder's
// engine everywhere (also in Node, where sessions may then run on the native addon): `await GraphBuilder.ready()`
// once before `new GraphBuilder()`, or use `await GraphBuilder.create()`.
import { convert } from './convert.js';
import { OneModelError, fromNative } from './errors.js';
import type { BuildingModule, NativeBuilder } from './native.js';
import { InferenceSession, chooseEngine, setDefaultFeeds } from './session.js';
import type { SessionOptions } from './session.js';
import { Operators, encodeAttributes } from './operators.js';
import type { AttributeValue } from './operators.js';
import { Tensor, isTensorType, typeCode, typeName } from './tensor.js';
import type { TensorType } from './tensor.js';

/** A dimension: a fixed extent, or a symbolic one (a name when declared; an expression's text when derived). */
export type Dim = number | string;

export interface BuilderSessionOptions extends SessionOptions {
  /** Extents that fix the symbolic axes of the inputs they name (checked again: Compile errors). */
  inputSpecs?: Readonly<Record<string, readonly number[]>>;
}

let building: BuildingModule | undefined;

/** @internal The wasm module's builder and tracer classes; InvalidArgument before GraphBuilder.ready(). */
export function builderEngine(): BuildingModule {
  if (building === undefined) throw invalid('await GraphBuilder.ready() (or GraphBuilder.create()) first');
  return building;
}

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

function int64Tensor(values: readonly number[]): Tensor {
  return new Tensor('int64', BigInt64Array.from(values.map((v) => BigInt(v))), [values.length]);
}

/** A value of a GraphBuilder: immutable; each method appends one node and returns its output. */
export class GraphValue extends Operators<GraphValue> {
  /** @internal */
  constructor(
    readonly builder: GraphBuilder,
    readonly id: number,
  ) {
    super();
  }

  /** The element type. */
  get type(): TensorType {
    return typeName(this.builder.native.value(this.id).dtype) as TensorType;
  }
  /** The dimensions: numbers where fixed, symbol names or expressions (`'(S + T)'`, `'8*S'`) where symbolic. */
  get dims(): Dim[] {
    return call(() => this.builder.native.value(this.id).dims);
  }

  protected apply(opType: string, inputs: (GraphValue | null)[], attrs: Record<string, AttributeValue>): GraphValue {
    return this.builder.op(opType, [this, ...inputs], attrs)[0]!;
  }
  protected ints(values: readonly number[]): GraphValue {
    return this.builder.constant(int64Tensor(values));
  }
}

/** Builds a graph lazily: values are nodes of one growing graph; export with toOnnx(), run with createSession(). */
export class GraphBuilder {
  /** @internal */
  readonly native: NativeBuilder;
  readonly #leaves = new Map<string, Tensor>();

  /** Loads the engine the builder states shapes with (the wasm module). */
  static async ready(): Promise<void> {
    if (building !== undefined) return;
    const engine = await chooseEngine(['wasm']);
    if (engine.building === undefined) {
      throw new OneModelError(
        'Unsupported',
        'GraphBuilder needs the wasm module in this thread (not the worker proxy)',
      );
    }
    building = engine.building;
  }

  static async create(options?: { opset?: number }): Promise<GraphBuilder> {
    await GraphBuilder.ready();
    return new GraphBuilder(options);
  }

  /** `opset`: the ai.onnx opset of the graph (default 20, the least: Gelu is an opset-20 operator). */
  constructor(options?: { opset?: number }) {
    const engine = builderEngine();
    const opset = options?.opset ?? 20;
    if (!Number.isInteger(opset)) throw invalid('GraphBuilder: opset must be an integer');
    this.native = call(() => engine.WasmBuilder.create(opset));
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

  /** The same model in the OneModel file format (docs/format.md): `convert(toOnnx(outputs))`. */
  async toOneModel(outputs: Readonly<Record<string, GraphValue>>): Promise<Uint8Array> {
    return convert(this.toOnnx(outputs));
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
