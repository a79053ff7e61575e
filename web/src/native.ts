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
}

export interface NativeOutput {
  name: string;
  dtype: number;
  dims: number[];
  data: ArrayBufferView;
}

export interface NativeSession {
  inputs(): NativeValueInfo[];
  outputs(): NativeValueInfo[];
  kernelPath(): string;
  opsets(): { domain: string; version: number }[];
  run(names: string[], dtypeCodes: number[], dims: number[][], data: ArrayBufferView[], outputNames: string[]): NativeOutput[];
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
