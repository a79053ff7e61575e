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
    readonly node: string; readonly opType: string; readonly depth: number; readonly calls: number;
    readonly totalMs: number; readonly selfMs: number; readonly share: number;
  }[];
  /** Per operator type (sums of self times), largest first. */
  readonly opTypes: readonly { readonly opType: string; readonly calls: number; readonly selfMs: number; readonly share: number }[];
  /** The two tables as text, as `onemodel bench --profile` prints them. */
  readonly text: string;
}

export interface NativeSession {
  inputs(): NativeValueInfo[];
  outputs(): NativeValueInfo[];
  kernelPath(): string;
  opsets(): { domain: string; version: number }[];
  run(names: string[], dtypeCodes: number[], dims: number[][], data: ArrayBufferView[], outputNames: string[]): NativeOutput[];
  /** kinds: 0 tensor, 1 sequence, 2 empty optional, 3 optional of a tensor, 4 optional of a sequence. */
  runValues(names: string[], kinds: number[], elemCodes: number[], items: NativeTensor[][],
    outputNames: string[]): NativeValueOutput[];
  startProfiling(): void;
  endProfiling(): Profile;
  /** Frees the engine model (later engine calls throw Disposed). */
  release(): void;
  /** Frees the Embind handle itself. */
  delete(): void;
}

export interface NativeModule {
  WasmSession: {
    create(bytes: Uint8Array, sourceName: string, mode: number, threads: number, optimizationLevel: number,
      maxCachedPlans: number): NativeSession;
  };
  version(): string;
}

/** What an entry point (web/src/index.ts, node/src/index.ts) supplies to the shared session code. */
export interface Platform {
  /** Instantiates the wasm module (called once, lazily). */
  loadModule(): Promise<NativeModule>;
  /** Reads a model given by path (Node) or URL (browser). */
  readModel(location: string): Promise<Uint8Array>;
}
