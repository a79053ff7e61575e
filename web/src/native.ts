// Types of what the Emscripten module exposes (bindings/embind.cc). Only session.ts talks to these; the
// binding is thin, so every default and every check that can be made in TypeScript lives on this side.

export interface NativeValueInfo {
  name: string;
  /** ONNX TensorProto.DataType code (0 when the model does not say). */
  dtype: number;
  /** Fixed extent, symbolic name, or null for an unknown dimension. */
  dims: (number | string | null)[];
  /** false: the rank is unknown. */
  hasShape: boolean;
  kind: 'tensor' | 'sequence' | 'optional' | 'map' | 'sparse_tensor' | 'opaque' | 'unknown';
  /** For kind 'optional': 'tensor', 'sequence' or 'unknown' (not declared). */
  elementKind: string;
}

/** One tensor crossing the binding in the value form. */
export interface NativeTensor {
  dtype: number;
  dims: number[];
  data: ArrayBufferView;
}

/** One output of runValues: a tensor (one item), a sequence (its items), or an optional (present or not). */
export interface NativeValueOutput {
  name: string;
  kind: 'tensor' | 'sequence' | 'optional';
  /** For optionals: what it holds ('tensor' or 'sequence'; 'unknown' for an empty one that does not say). */
  contentKind?: string;
  present: boolean;
  elemType: number;
  items: NativeTensor[];
}

export interface NativeOutput {
  name: string;
  dtype: number;
  dims: number[];
  data: ArrayBufferView;
}

/** Where the runs between startProfiling() and endProfiling() spent their time (docs/profiling.md). */
export interface Profile {
  readonly runs: number;
  /** Wall time of the profiled runs (engine side), in ms. */
  readonly runMs: number;
  /** Sum of every node's self time. */
  readonly nodesMs: number;
  /** runMs - nodesMs: input checks, plan lookup, copies, step dispatch. */
  readonly overheadMs: number;
  /** Per node, largest self time first; nodes of control-flow bodies are named by their path. */
  readonly nodes: readonly {
    readonly node: string;
    readonly opType: string;
    readonly depth: number;
    readonly calls: number;
    readonly totalMs: number;
    readonly selfMs: number;
    readonly share: number;
  }[];
  /** Per operator type (sums of self times), largest first. */
  readonly opTypes: readonly {
    readonly opType: string;
    readonly calls: number;
    readonly selfMs: number;
    readonly share: number;
  }[];
  /** The two tables as text, as `onemodel bench --profile` prints them. */
  readonly text: string;
}

export interface NativeSession {
  inputs(): NativeValueInfo[];
  outputs(): NativeValueInfo[];
  kernelPath(): string;
  threads(): number;
  opsets(): { domain: string; version: number }[];
  /** Synchronous in the wasm build; the Node addon settles a promise from a worker thread. */
  run(
    names: string[],
    dtypeCodes: number[],
    dims: number[][],
    data: ArrayBufferView[],
    outputNames: string[],
  ): NativeOutput[] | Promise<NativeOutput[]>;
  /** kinds: ValueCode per input. */
  runValues(
    names: string[],
    kinds: ValueCode[],
    elemCodes: number[],
    items: NativeTensor[][],
    outputNames: string[],
  ): NativeValueOutput[] | Promise<NativeValueOutput[]>;
  startProfiling(): void;
  endProfiling(): Profile;
  /** Frees the engine model (later engine calls throw Disposed; runs already under way finish). */
  release(): void;
  /** Frees the handle itself. */
  delete(): void;
}

/**
 * Value-kind codes of runValues inputs: what one input holds, as it crosses the binding. The numbers are a
 * contract with the C++ side: bindings/core.h `InputKind` has the same names and numbers (Tensor,
 * Sequence, EmptyOptional, OptionalTensor, OptionalSequence) and binding::input_value reads them;
 * tests/js/value-codes.test.mjs compares the two tables. Pass these names, never the bare numbers.
 */
export const ValueCode = {
  tensor: 0,
  sequence: 1,
  emptyOptional: 2,
  optionalTensor: 3,
  optionalSequence: 4,
} as const;
export type ValueCode = (typeof ValueCode)[keyof typeof ValueCode];

/** One batch item of greedy CTC decoding as the bindings return it (bindings/ctc.h): per run its label, steps
 * and confidence in parallel arrays. */
export interface NativeCtcGreedy {
  labels: Int32Array;
  firstSteps: Int32Array;
  lastSteps: Int32Array;
  runConfidences: Float32Array;
  stepProbabilities: Float32Array;
  confidence: number;
}

/** One beam-search hypothesis as the bindings return it. */
export interface NativeCtcHypothesis {
  labels: Int32Array;
  logProbability: number;
  confidence: number;
}

/**
 * The CTC decoders of an engine (docs/ctc.md), the same in every binding: `data` holds float32 scores of
 * `dims` [batch, steps, classes]; `kind` 0 logits / 1 log-probabilities. Everything is checked in TypeScript
 * first (web/src/ctc.ts); the engine checks again.
 */
export interface CtcFunctions {
  ctcGreedy(
    data: Float32Array,
    dims: number[],
    kind: number,
    blank: number,
  ): NativeCtcGreedy[] | Promise<NativeCtcGreedy[]>;
  ctcBeamSearch(
    data: Float32Array,
    dims: number[],
    kind: number,
    blank: number,
    beamWidth: number,
    topN: number,
  ): NativeCtcHypothesis[][] | Promise<NativeCtcHypothesis[][]>;
}

/**
 * Conversion to the OneModel format (docs/format.md), the same in every binding: the model's bytes, its name
 * for messages and the weight-storage code (web/src/convert.ts). Resolves to a new array of the file's bytes.
 */
export interface ConvertFunction {
  convert(bytes: Uint8Array, sourceName: string, weightStorage: number): Uint8Array | Promise<Uint8Array>;
}

/** The graph builder of the wasm module (bindings/builder_embind.cc): values are integer ids. */
export interface NativeBuilder {
  input(name: string, dtype: number, dims: (number | string)[]): number;
  constant(name: string, dtype: number, dims: number[], data: ArrayBufferView): number;
  leaf(name: string, dtype: number, dims: number[], data: ArrayBufferView, axisNames: string[]): number;
  /** inputs: ids, -1 for an omitted optional input; attrs: kind 'int' | 'float' | 'string' | 'ints' | 'floats'. */
  op(
    opType: string,
    inputs: number[],
    attrs: { name: string; kind: string; value: unknown }[],
    numOutputs: number,
  ): number[];
  /** dims: fixed extents as numbers, symbolic ones as their expression's text. */
  value(id: number): { dtype: number; dims: (number | string)[] };
  toOnnx(names: string[], ids: number[]): Uint8Array;
  compiledOnnx(names: string[], ids: number[], specNames: string[], specDims: number[][]): Uint8Array;
  delete(): void;
}

/** An eager tensor of the wasm module (bindings/trace_embind.cc). */
export interface NativeEager {
  dtype(): number;
  sizes(): number[];
  value(): { dtype: number; dims: number[]; data: ArrayBufferView };
  delete(): void;
}

/** A trace of the wasm module (bindings/trace_embind.cc). */
export interface NativeTracer {
  input(name: string, dtype: number, dims: number[], data: ArrayBufferView, axisNames: string[]): NativeEager;
  parameter(name: string, weight: NativeEager): void;
  finish(names: string[], values: NativeEager[]): Uint8Array;
  end(): void;
  delete(): void;
}

/** What building models in code needs of the wasm module (web/src/builder.ts, web/src/trace.ts). */
export interface BuildingModule {
  WasmBuilder: { create(opset: number): NativeBuilder };
  WasmEager: {
    constant(dtype: number, dims: number[], data: ArrayBufferView): NativeEager;
    op(
      opType: string,
      inputs: (NativeEager | null)[],
      attrs: { name: string; kind: string; value: unknown }[],
      numOutputs: number,
    ): { size(): number; get(i: number): NativeEager; delete(): void };
  };
  WasmTracer: { begin(): NativeTracer };
  /** 0 fast, 1 exact. */
  setEagerMode(mode: number): void;
}

/** The Emscripten module of the wasm build (bindings/embind.cc). */
export interface NativeModule extends CtcFunctions, ConvertFunction, BuildingModule {
  WasmSession: {
    create(
      bytes: Uint8Array,
      sourceName: string,
      mode: number,
      threads: number,
      optimizationLevel: number,
      maxCachedPlans: number,
      weightStorage: number,
    ): NativeSession;
  };
  /** Threaded builds: starts `count` Workers (bindings/wasm_threads.post.js). */
  onemodelStartWorkers?(count: number): Promise<unknown>;
  version(): string;
}

/**
 * What creating a session takes, in the bindings' order: the model (bytes, copied before create returns, or a
 * file path for engines that read files), its name for messages, the mode, thread, optimization-level and
 * plan-cache codes, where external data files are looked up for a model given as bytes ('' = none), and the
 * weight-storage code.
 */
export type CreateArgs = [
  model: Uint8Array | string,
  sourceName: string,
  mode: number,
  threads: number,
  optimizationLevel: number,
  maxCachedPlans: number,
  externalDataDir: string,
  weightStorage: number,
];

/** The Node-API addon (bindings/node/addon.cc). */
export interface AddonModule extends CtcFunctions {
  create(...args: CreateArgs): Promise<NativeSession>;
  convert(bytes: Uint8Array, sourceName: string, weightStorage: number, externalDataDir: string): Promise<Uint8Array>;
  version(): string;
}

/** One engine build a session can run on: the wasm module, or the native addon in Node. */
export interface Engine extends CtcFunctions, ConvertFunction {
  /** The execution provider it serves: 'wasm', or 'cpu' for the native addon. */
  readonly provider: 'wasm' | 'cpu';
  /** false: sessions run on one thread whatever intraOpNumThreads says (a wasm engine loaded with one). */
  readonly threaded: boolean;
  /** true: create() also takes a file path, and reads it (and external data beside it) itself. */
  readonly readsFiles: boolean;
  create(...args: CreateArgs): NativeSession | Promise<NativeSession>;
  /** Building models in code (web/src/builder.ts, trace.ts); only the wasm module in this thread has it. */
  building?: BuildingModule;
}

/** What an entry point (web/src/index.ts, node/src/index.ts) supplies to the shared session code. */
export interface Platform {
  /** Execution providers to try when the options name none, in order (the last one always loads). */
  defaultProviders(): readonly string[];
  /** The engine an execution provider name runs on here ('cpu' is wasm in the browser), or undefined. */
  engineFor(provider: string): 'wasm' | 'cpu' | undefined;
  /** Loads an engine (called once per engine, lazily). */
  loadEngine(engine: 'wasm' | 'cpu'): Promise<Engine>;
  /** Reads a model given by path (Node) or URL (browser), reporting bytes read so far when asked. */
  readModel(location: string, onProgress?: (loaded: number, total: number) => void): Promise<Uint8Array>;
  /** The directory of a model path, for its external data (Node); '' where there is none. */
  directoryOf(location: string): string;
}

/**
 * The wasm engine on `threads` threads: starts the module's Workers first (docs/wasm-threads.md section 2).
 * When they cannot start, it runs on one thread and says so once through `notice`.
 */
export async function wasmEngineOnThreads(
  mod: NativeModule,
  threads: number,
  notice: (message: string) => void,
): Promise<Engine> {
  if (threads > 1) {
    try {
      if (mod.onemodelStartWorkers === undefined) throw new Error('this wasm build has no threads');
      await mod.onemodelStartWorkers(threads - 1);
    } catch (e) {
      notice(`the wasm engine's ${threads - 1} Workers did not start (${String(e)}); sessions run on one thread`);
      threads = 1;
    }
  }
  return wasmEngine(mod, threads);
}

/**
 * The wasm module as an Engine. `threads` is the thread count it was loaded with (its Workers are started):
 * a session asks for at most that many, intraOpNumThreads 0 meaning all of them.
 */
export function wasmEngine(mod: NativeModule, threads = 1): Engine {
  return {
    provider: 'wasm',
    threaded: threads > 1,
    readsFiles: false,
    create(model, sourceName, mode, requested, level, plans, _externalDataDir, weightStorage) {
      if (typeof model === 'string') throw new Error('the wasm engine takes model bytes');
      const n = requested === 0 ? threads : Math.min(requested, threads);
      return mod.WasmSession.create(model, sourceName, mode, n, level, plans, weightStorage);
    },
    ctcGreedy: (data, dims, kind, blank) => mod.ctcGreedy(data, dims, kind, blank),
    ctcBeamSearch: (data, dims, kind, blank, width, topN) => mod.ctcBeamSearch(data, dims, kind, blank, width, topN),
    convert: (bytes, sourceName, weightStorage) => mod.convert(bytes, sourceName, weightStorage),
    building: mod,
  };
}
