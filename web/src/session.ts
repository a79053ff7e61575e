// InferenceSession: the public API over one engine session, shaped like onnxruntime-common's so that code
// written for onnxruntime-web/-node moves over with an import change. All option defaults and all argument
// checks live here; the wasm binding only converts values (bindings/README.md).
import { noticesEnabled, wasmEnvNotices } from './env.js';
import { OneModelError, fromNative } from './errors.js';
import { checkFeeds } from './feeds.js';
import { type OneInputValues, oneInputFeeds } from './happy.js';
import type { Engine, NativeSession, NativeValueInfo, Platform, Profile } from './native.js';
import { Tensor, type TensorType, isTensorType, typeName } from './tensor.js';

export type ExecutionMode = 'fast' | 'exact';
export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'layout' | 'all';

export interface SessionOptions {
  /** 'fast' (default) or 'exact': exact mode gives the same bits on every platform. */
  mode?: ExecutionMode;
  /**
   * Threads for one run: an integer 0..256, 0 (default) meaning one per logical core for the native engine
   * (Node) and all of the wasm engine's (env.wasm.numThreads, which also caps it there). `session.threads` says
   * what a session got. Results never depend on it.
   */
  intraOpNumThreads?: number;
  /**
   * Engines to try, in order (ORT's names; a name may also be given as `{ name }`): 'cpu' is the native
   * engine in Node (a Node-API addon) and the wasm build in a browser; 'wasm' is the wasm build everywhere.
   * Names of execution providers OneModel does not have ('webgpu', 'cuda', ...) are skipped with a one-time
   * warning. Default: ['cpu', 'wasm'] in Node (or the list in the ONEMODEL_EXECUTION_PROVIDERS environment
   * variable, comma-separated), ['wasm'] in browsers. When none of the named engines can load, the wasm build
   * runs (with a one-time warning); `kernelPath` tells which engine a session got.
   */
  executionProviders?: readonly (string | { readonly name: string })[];
  /**
   * Graph rewrites before running (default 'all'): in fast mode 'all' folds Conv+BatchNormalization and fuses
   * GELU chains and attention (docs/architecture.md, "Graph passes"); 'disabled' and 'basic' run the graph as
   * imported, and 'extended' equals 'all'. Exact mode runs no rewrite that changes bits, at any level.
   */
  graphOptimizationLevel?: GraphOptimizationLevel;
  /** Execution plans kept per session, one per set of input types and shapes (default 16, at least 1). */
  maxCachedPlans?: number;
  /**
   * How float32 weights are kept (default 'float32', as the model has them). 'float16' and 'bfloat16' keep the
   * weights of MatMul, Gemm and Conv with at least 1024 values rounded to 16 bits and widen them for each use:
   * about half the weights' memory, a widening and repacking per run, and the outputs of the model with those
   * weights rounded beforehand (docs/fp16.md section 6).
   */
  weightStorage?: WeightStorage;
  /**
   * Called as the model is read (a path or URL): `loaded` bytes so far of `total` (0 when a server does not
   * say). Starts with (0, total) and ends with (total, total); a model given as bytes reports once, complete.
   */
  onProgress?: (loaded: number, total: number) => void;
  /**
   * ORT's fixing of symbolic dimensions by name ({ batch: 1 }): feeds must then have that extent there
   * (InvalidInput otherwise). Plans are per input shape anyway, so nothing else changes.
   */
  freeDimensionOverrides?: { readonly [dimension: string]: number };
  /** ORT's options that OneModel accepts and ignores (web/README.md says why for each). */
  executionMode?: 'sequential' | 'parallel';
  interOpNumThreads?: number;
  enableCpuMemArena?: boolean;
  enableMemPattern?: boolean;
  enableProfiling?: boolean;
  profileFilePrefix?: string;
  logId?: string;
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
  logVerbosityLevel?: number;
  optimizedModelFilePath?: string;
  preferredOutputLocation?: string | { readonly [name: string]: string };
  enableGraphCapture?: boolean;
  extra?: Record<string, unknown>;
}

export interface TensorValueMetadata {
  readonly name: string;
  readonly isTensor: true;
  /** Element type name ('float32', 'int64', ...; 'undefined' when the model does not declare one). */
  readonly type: TensorType | string;
  /** Dims as declared: numbers for fixed extents, names for symbolic ones, '?' for unnamed unknown ones. */
  readonly shape: readonly (number | string)[];
  /** false when the model does not declare a rank (shape is then empty). */
  readonly hasShape: boolean;
}

export interface NonTensorValueMetadata {
  readonly name: string;
  readonly isTensor: false;
  /** 'sequence', 'optional', 'map', 'sparse_tensor', 'opaque' or 'unknown'. */
  readonly kind: string;
  /** Sequences: the items' element type; optionals: the content's element type ('undefined' if not declared). */
  readonly type?: TensorType | string;
  /** Optionals: 'tensor' or 'sequence' (what it holds), 'unknown' when not declared. */
  readonly elementKind?: string;
}

/**
 * What runValues takes and returns: a tensor, a sequence (an array of tensors of one element type), or for an
 * optional input or output either its content or null (empty).
 */
export type OnnxValue = Tensor | Tensor[] | null;

export type ValueMetadata = TensorValueMetadata | NonTensorValueMetadata;

/**
 * ORT's per-run options. Accepted and checked to be an object; OneModel has no per-run logging or
 * cancellation, so the fields are ignored (documented in web/README.md).
 */
export interface RunOptions {
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
  logVerbosityLevel?: number;
  terminate?: boolean;
  tag?: string;
  extra?: Record<string, unknown>;
}

/**
 * ORT's fetches: output names, or an object of output name -> null (return it) or a Tensor of the output's
 * type and dims that receives the result (and is what run() returns for that name).
 */
export type FetchesType = readonly string[] | { readonly [name: string]: Tensor | null };

const DEFAULTS = {
  mode: 'fast' as ExecutionMode,
  intraOpNumThreads: 0,
  graphOptimizationLevel: 'all' as GraphOptimizationLevel,
  maxCachedPlans: 16,
  weightStorage: 'float32' as WeightStorage,
  executionProviders: [] as readonly string[], // empty: the platform's default order
  freeDimensionOverrides: {} as { readonly [dimension: string]: number },
};
// Option keys read above, and ORT's keys accepted without effect (no notice: they change nothing a user can
// observe, or ORT itself treats them as hints). Any other key gets a one-time notice naming it.
const OPTION_KEYS = new Set([
  ...Object.keys(DEFAULTS),
  'onProgress',
  'executionMode',
  'interOpNumThreads',
  'enableCpuMemArena',
  'enableMemPattern',
  'logId',
  'logSeverityLevel',
  'logVerbosityLevel',
  'preferredOutputLocation',
  'enableGraphCapture',
  'extra',
  'enableProfiling',
  'profileFilePrefix',
  'optimizedModelFilePath',
  'externalData',
]);
const MODE_CODES: Readonly<Record<ExecutionMode, number>> = { fast: 0, exact: 1 };
/** How float32 weights are stored: as the model has them, or rounded to 16 bits (docs/fp16.md section 6). */
export type WeightStorage = 'float32' | 'float16' | 'bfloat16';
// The bindings' codes (bindings/core.h session_options, convert_model).
export const WEIGHT_STORAGE_CODES: Readonly<Record<WeightStorage, number>> = { float32: 0, float16: 1, bfloat16: 2 };
// Engine OptimizationLevel: None = 0, Basic = 1, All = 2. ORT's 'layout' (basic plus its layout transforms,
// which OneModel does not have) is basic.
const LEVEL_CODES: Readonly<Record<GraphOptimizationLevel, number>> = {
  disabled: 0,
  basic: 1,
  layout: 1,
  extended: 2,
  all: 2,
};
const MAX_THREADS = 256;

let platform: Platform | undefined;
const enginePromises = new Map<'wasm' | 'cpu', Promise<Engine>>();
const warned = new Set<string>();

/** Called once by each entry point before anything else runs. */
export function setPlatform(p: Platform): void {
  platform = p;
}

// Feeds a session adds when the caller omits them: the data of a GraphBuilder's leaves (web/src/builder.ts).
const defaultFeeds = new WeakMap<InferenceSession, Readonly<Record<string, Tensor>>>();

export function setDefaultFeeds(session: InferenceSession, feeds: Readonly<Record<string, Tensor>>): void {
  if (Object.keys(feeds).length > 0) defaultFeeds.set(session, feeds);
}

function withDefaults<T>(session: InferenceSession, feeds: T): T {
  const d = defaultFeeds.get(session);
  return d !== undefined && typeof feeds === 'object' && feeds !== null ? ({ ...d, ...feeds } as T) : feeds;
}

function getPlatform(): Platform {
  if (platform === undefined) throw new OneModelError('Internal', 'no platform entry point was loaded');
  return platform;
}

/** Prints `onemodel: message` once per key (unless env.logLevel silences notices). */
export function warnOnce(key: string, message: string): void {
  if (warned.has(key) || !noticesEnabled()) return;
  warned.add(key);
  console.warn(`onemodel: ${message}`);
}

function getEngine(name: 'wasm' | 'cpu'): Promise<Engine> {
  let promise = enginePromises.get(name);
  if (promise === undefined) {
    promise = getPlatform()
      .loadEngine(name)
      .catch((e: unknown) => {
        enginePromises.delete(name); // let a later call retry (e.g. after a network error)
        throw e instanceof OneModelError
          ? e
          : new OneModelError(
              'Io',
              `cannot load the OneModel ${name === 'cpu' ? 'native addon' : 'wasm module'}: ${String(e)}`,
              { cause: e },
            );
      });
    enginePromises.set(name, promise);
  }
  return promise;
}

// The first engine of `providers` (or the platform's default order) that loads. Unknown names are skipped
// with a one-time warning; when nothing named loads, the wasm build runs. Sessions and the CTC decoders
// (ctc.ts) choose the same way.
export async function chooseEngine(providers: readonly string[]): Promise<Engine> {
  const p = getPlatform();
  const names = providers.length > 0 ? providers : p.defaultProviders();
  const engines: ('wasm' | 'cpu')[] = [];
  for (const name of names) {
    const engine = p.engineFor(name);
    if (engine === undefined) {
      warnOnce(`provider:${name}`, `execution provider '${name}' is not available in OneModel; it is skipped`);
    } else if (!engines.includes(engine)) {
      engines.push(engine);
    }
  }
  let failure: unknown;
  for (const engine of engines) {
    try {
      return await getEngine(engine);
    } catch (e) {
      failure = e;
      warnOnce(`engine:${engine}`, `${e instanceof Error ? e.message : String(e)}; trying the next engine`);
    }
  }
  if (engines.includes('wasm')) throw failure;
  if (engines.length === 0) {
    warnOnce(
      'no-provider',
      `none of the execution providers [${names.join(', ')}] is available; running the wasm build`,
    );
  }
  return getEngine('wasm');
}

function invalidArgument(message: string): OneModelError {
  return new OneModelError('InvalidArgument', message);
}

/** The names of an executionProviders option (names or { name }); InvalidArgument for anything else. */
export function providerNames(eps: unknown): string[] {
  if (!Array.isArray(eps)) throw invalidArgument('executionProviders must be an array');
  return eps.map((ep: unknown) => {
    const name = typeof ep === 'object' && ep !== null ? (ep as { name?: unknown }).name : ep;
    if (typeof name !== 'string')
      throw invalidArgument(`executionProviders entry ${String(ep)} is not a name or { name }`);
    return name;
  });
}

/** Options after checking: every field set, execution providers as names. */
export type CheckedSessionOptions = {
  readonly mode: ExecutionMode;
  readonly intraOpNumThreads: number;
  readonly graphOptimizationLevel: GraphOptimizationLevel;
  readonly maxCachedPlans: number;
  readonly weightStorage: WeightStorage;
  readonly executionProviders: readonly string[];
  readonly freeDimensionOverrides: { readonly [dimension: string]: number };
};

function checkOptions(options: unknown): CheckedSessionOptions {
  if (options === undefined || options === null) return { ...DEFAULTS };
  if (typeof options !== 'object') throw invalidArgument('session options must be an object');
  const o = options as SessionOptions;
  for (const key of Object.keys(o)) {
    if (!OPTION_KEYS.has(key))
      warnOnce(`option:${key}`, `session option '${key}' is not known to OneModel; it is ignored`);
  }
  if (o.enableProfiling) {
    warnOnce(
      'option:enableProfiling',
      'enableProfiling writes no trace file here; use session.startProfiling() and endProfiling()',
    );
  }
  if (o.optimizedModelFilePath !== undefined)
    warnOnce('option:optimizedModelFilePath', 'optimizedModelFilePath is ignored: OneModel writes no optimized model');
  if ((o as { externalData?: unknown }).externalData !== undefined) {
    warnOnce(
      'option:externalData',
      'externalData is not supported yet; the native engine in Node reads external data files beside a model path',
    );
  }
  const overrides = o.freeDimensionOverrides ?? DEFAULTS.freeDimensionOverrides;
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    throw invalidArgument('freeDimensionOverrides must be an object of dimension name -> extent');
  }
  for (const [name, v] of Object.entries(overrides)) {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
      throw invalidArgument(`freeDimensionOverrides['${name}'] = ${String(v)} is not a non-negative integer`);
    }
  }
  const mode = o.mode ?? DEFAULTS.mode;
  if (!Object.prototype.hasOwnProperty.call(MODE_CODES, mode)) {
    throw invalidArgument(`mode '${String(mode)}' is not 'fast' or 'exact'`);
  }
  const level = o.graphOptimizationLevel ?? DEFAULTS.graphOptimizationLevel;
  if (!Object.prototype.hasOwnProperty.call(LEVEL_CODES, level)) {
    throw invalidArgument(`graphOptimizationLevel '${String(level)}' is not 'disabled', 'basic', 'extended' or 'all'`);
  }
  const threads = o.intraOpNumThreads ?? DEFAULTS.intraOpNumThreads;
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 0 || threads > MAX_THREADS) {
    throw invalidArgument(`intraOpNumThreads ${String(threads)} is not an integer from 0 to ${MAX_THREADS}`);
  }
  const plans = o.maxCachedPlans ?? DEFAULTS.maxCachedPlans;
  if (typeof plans !== 'number' || !Number.isInteger(plans) || plans < 1 || plans > 0x7fffffff) {
    throw invalidArgument(`maxCachedPlans ${String(plans)} is not a positive integer`);
  }
  const storage = o.weightStorage ?? DEFAULTS.weightStorage;
  if (!Object.prototype.hasOwnProperty.call(WEIGHT_STORAGE_CODES, storage)) {
    throw invalidArgument(`weightStorage '${String(storage)}' is not 'float32', 'float16' or 'bfloat16'`);
  }
  const providers = providerNames(o.executionProviders ?? DEFAULTS.executionProviders);
  return {
    mode,
    graphOptimizationLevel: level,
    intraOpNumThreads: threads,
    maxCachedPlans: plans,
    weightStorage: storage,
    executionProviders: Object.freeze(providers),
    freeDimensionOverrides: Object.freeze({ ...overrides }),
  };
}

function toMetadata(info: NativeValueInfo): ValueMetadata {
  if (info.kind === 'sequence' || info.kind === 'optional') {
    return Object.freeze({
      name: info.name,
      isTensor: false as const,
      kind: info.kind,
      type: typeName(info.dtype),
      ...(info.kind === 'optional' ? { elementKind: info.elementKind } : {}),
    });
  }
  if (info.kind !== 'tensor') return Object.freeze({ name: info.name, isTensor: false as const, kind: info.kind });
  return Object.freeze({
    name: info.name,
    isTensor: true as const,
    type: typeName(info.dtype),
    shape: Object.freeze(info.dims.map((d) => (d === null ? '?' : d))),
    hasShape: info.hasShape,
  });
}

/** The package's name of an output's element type; Unsupported for a type JS cannot hold. */
function outputType(name: string, code: number): TensorType {
  const type = typeName(code);
  if (!isTensorType(type)) throw new OneModelError('Unsupported', `output '${name}' has element type ${type}`);
  return type;
}

// Frees engine sessions whose InferenceSession was garbage-collected without release().
const finalizer =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<NativeSession>((native) => {
        try {
          native.release();
          native.delete();
        } catch {
          // Nothing to report to: the owner is gone.
        }
      })
    : undefined;

export class InferenceSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly ValueMetadata[];
  readonly outputMetadata: readonly ValueMetadata[];
  /** The kernels this session runs on: "Wasm128" for the wasm build; "Avx512", "Avx2", "Sse4", "Neon" or "Scalar" for the native engine. */
  readonly kernelPath: string;
  /**
   * The threads a run of this session uses, the calling one included (a OneModel addition): intraOpNumThreads
   * resolved, and for the wasm engine at most the env.wasm.numThreads it was loaded with (docs/wasm-threads.md).
   */
  readonly threads: number;
  /** Opset imports of the model; the empty domain is ai.onnx. */
  readonly opsets: readonly { readonly domain: string; readonly version: number }[];
  readonly options: Readonly<CheckedSessionOptions>;

  #native: NativeSession | undefined;
  readonly #inputs: ReadonlyMap<string, NativeValueInfo>;
  readonly #outputs: ReadonlySet<string>;
  readonly #outputKinds: ReadonlyMap<string, string>;

  private constructor(native: NativeSession, options: CheckedSessionOptions) {
    this.#native = native;
    const inputs = native.inputs();
    const outputs = native.outputs();
    this.inputNames = Object.freeze(inputs.map((i) => i.name));
    this.outputNames = Object.freeze(outputs.map((o) => o.name));
    this.inputMetadata = Object.freeze(inputs.map(toMetadata));
    this.outputMetadata = Object.freeze(outputs.map(toMetadata));
    this.kernelPath = native.kernelPath();
    this.threads = native.threads();
    this.opsets = Object.freeze(native.opsets().map((o) => Object.freeze({ ...o })));
    this.options = Object.freeze({ ...options });
    this.#inputs = new Map(inputs.map((i) => [i.name, i]));
    this.#outputs = new Set(outputs.map((o) => o.name));
    this.#outputKinds = new Map(outputs.map((o) => [o.name, o.kind]));
    finalizer?.register(this, native, this);
  }

  /**
   * Loads a model: a path (Node) or URL (browser), or the model's bytes (ONNX or the OneModel format, told apart by the first eight bytes; docs/format.md).
   * Bytes are copied into the engine; the caller may reuse the buffer afterwards. The native engine reads a
   * path itself, with any external data files beside the model.
   */
  static async create(
    model: string | Uint8Array | ArrayBufferLike,
    options?: SessionOptions,
  ): Promise<InferenceSession>;
  /** ORT's form: the model is `byteLength` bytes (default: to the end) of `buffer` from `byteOffset`. */
  static async create(
    buffer: ArrayBufferLike,
    byteOffset: number,
    byteLength?: number,
    options?: SessionOptions,
  ): Promise<InferenceSession>;
  static async create(arg0: unknown, arg1?: unknown, arg2?: unknown, arg3?: unknown): Promise<InferenceSession> {
    const isBuffer = (b: unknown): b is ArrayBufferLike =>
      b instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && b instanceof SharedArrayBuffer);
    let model: string | Uint8Array;
    let options: unknown = arg1;
    if (typeof arg1 === 'number') {
      if (!isBuffer(arg0))
        throw invalidArgument('with a byteOffset the model must be an ArrayBuffer or SharedArrayBuffer');
      const total = arg0.byteLength;
      if (!Number.isSafeInteger(arg1) || arg1 < 0 || arg1 > total) {
        throw invalidArgument(`byteOffset ${arg1} is out of range [0, ${total}]`);
      }
      const length = arg2 === undefined ? total - arg1 : arg2;
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0 || arg1 + length > total) {
        throw invalidArgument(`byteLength ${String(arg2)} is out of range [0, ${total - arg1}]`);
      }
      model = new Uint8Array(arg0, arg1, length);
      options = arg3;
    } else if (typeof arg0 === 'string' || arg0 instanceof Uint8Array) {
      model = arg0;
    } else if (isBuffer(arg0)) {
      model = new Uint8Array(arg0);
    } else {
      throw invalidArgument(
        'a model must be given as a path or URL string, a Uint8Array, an ArrayBuffer or a SharedArrayBuffer',
      );
    }
    const opts = checkOptions(options);
    const onProgress = (options as SessionOptions | undefined)?.onProgress;
    if (onProgress !== undefined && typeof onProgress !== 'function')
      throw invalidArgument('onProgress must be a function');
    const engine = await chooseEngine(opts.executionProviders);
    if (engine.provider === 'wasm') for (const n of wasmEnvNotices()) warnOnce(n.key, n.message);
    let input: Uint8Array | string;
    let source: string;
    let dataDir = '';
    if (typeof model === 'string') {
      // An engine that reads files reads the path itself, unless progress is wanted: then the bytes are read
      // here, in pieces, and the engine gets the model's directory for its external data.
      if (engine.readsFiles && onProgress === undefined) {
        input = model;
      } else {
        input = await getPlatform().readModel(model, onProgress);
        if (engine.readsFiles) dataDir = getPlatform().directoryOf(model);
      }
      source = model;
    } else {
      input = model;
      source = '<bytes>';
      onProgress?.(model.length, model.length);
    }
    let native: NativeSession;
    try {
      native = await engine.create(
        input,
        source,
        MODE_CODES[opts.mode],
        opts.intraOpNumThreads,
        LEVEL_CODES[opts.graphOptimizationLevel],
        opts.maxCachedPlans,
        dataDir,
        WEIGHT_STORAGE_CODES[opts.weightStorage],
      );
    } catch (e) {
      throw fromNative(e);
    }
    try {
      return new InferenceSession(native, opts);
    } catch (e) {
      native.release();
      native.delete();
      throw fromNative(e);
    }
  }

  /**
   * Runs the model, with ORT's signatures: run(feeds, options?) or run(feeds, fetches, options?). `feeds` holds
   * every model input by name; `fetches` names the outputs wanted (all, in model order, when omitted) as an
   * array, or as an object of name -> null | preallocated Tensor (filled in place and returned). Resolves to
   * the outputs by name.
   */
  async run(
    feeds: Readonly<Record<string, Tensor>>,
    fetchesOrOptions?: FetchesType | RunOptions,
    options?: RunOptions,
  ): Promise<Record<string, Tensor>> {
    const native = this.#live();
    feeds = withDefaults(this, feeds);
    const fed = checkFeeds(feeds, this.#inputs, this.inputNames, this.options.freeDimensionOverrides, false);
    const { wanted, into } = this.#runArguments(fetchesOrOptions, options);
    for (const o of wanted.length > 0 ? wanted : this.outputNames) {
      const kind = this.#outputKinds.get(o);
      if (kind === 'sequence' || kind === 'optional') {
        throw new OneModelError(
          'InvalidInput',
          `output '${o}' is ${kind === 'sequence' ? 'a sequence' : 'an optional'}; use runValues()`,
        );
      }
    }
    const tensors = fed.map((f) => f.items[0]!);
    let results;
    try {
      results = await native.run(
        fed.map((f) => f.name),
        tensors.map((t) => t.dtype),
        tensors.map((t) => t.dims),
        tensors.map((t) => t.data),
        wanted,
      );
    } catch (e) {
      throw fromNative(e);
    }
    const out: Record<string, Tensor> = {};
    for (const r of results) {
      const type = outputType(r.name, r.dtype);
      const target = into.get(r.name);
      if (target === undefined) {
        out[r.name] = new Tensor(type, r.data as never, r.dims);
        continue;
      }
      if (target.type !== type || target.dims.length !== r.dims.length || target.dims.some((d, i) => d !== r.dims[i])) {
        throw new OneModelError(
          'InvalidInput',
          `the tensor given for output '${r.name}' is ${target.type} ` +
            `[${target.dims.join(',')}], the output is ${type} [${r.dims.join(',')}]`,
        );
      }
      (target.data as unknown as { set(a: ArrayLike<number | bigint>): void }).set(
        r.data as unknown as ArrayLike<number | bigint>,
      );
      out[r.name] = target;
    }
    return out;
  }

  /**
   * The one-line happy path (docs/graph-runtime.md section 4, as the C++ Model::run): `values` feed the model's
   * one input, or a text encoder's token ids with `attention_mask` filled with ones and `token_type_ids` with
   * zeros in the same dims. Without `dims` the declared dims are used: one symbolic or unknown extent absorbs
   * the count, and [batch, sequence] with neither fixed is one sequence. Resolves to the single output.
   */
  async runOne(values: OneInputValues, dims?: readonly number[]): Promise<Tensor> {
    const out = await this.run(oneInputFeeds(this.inputMetadata, this.outputNames.length, values, dims));
    return out[this.outputNames[0]!]!;
  }

  /**
   * Runs a model whose inputs or outputs include sequences or optionals (works for tensor-only models too).
   * Feeds: a Tensor for a tensor input, an array of Tensors for a sequence input, and for an optional input
   * its content (a Tensor, or an array for an optional sequence) or null when empty. Outputs come back the
   * same way: sequences as arrays of Tensors, an empty optional as null.
   */
  async runValues(
    feeds: Readonly<Record<string, OnnxValue>>,
    fetches?: readonly string[],
  ): Promise<Record<string, OnnxValue>> {
    const native = this.#live();
    feeds = withDefaults(this, feeds);
    const fed = checkFeeds(feeds, this.#inputs, this.inputNames, this.options.freeDimensionOverrides, true);
    const wanted = this.#checkFetches(fetches);
    let results;
    try {
      results = await native.runValues(
        fed.map((f) => f.name),
        fed.map((f) => f.kind),
        fed.map((f) => f.elem),
        fed.map((f) => f.items),
        wanted,
      );
    } catch (e) {
      throw fromNative(e);
    }
    const out: Record<string, OnnxValue> = {};
    for (const r of results) {
      const tensors = r.items.map((t) => new Tensor(outputType(r.name, t.dtype), t.data as never, t.dims));
      const sequence = r.kind === 'sequence' || (r.kind === 'optional' && r.contentKind === 'sequence');
      if (r.kind === 'optional' && !r.present) out[r.name] = null;
      else out[r.name] = sequence ? tensors : tensors[0]!;
    }
    return out;
  }

  /**
   * Starts recording the time of every node in the following runs (ORT's name; docs/profiling.md).
   * Starting again clears what was recorded.
   */
  startProfiling(): void {
    const native = this.#live();
    try {
      native.startProfiling();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /**
   * Stops recording and returns where the runs since startProfiling() spent their time, per node and per
   * operator type (ORT writes a trace file instead and returns nothing; ignoring our result is the same use).
   */
  endProfiling(): Profile {
    const native = this.#live();
    try {
      return native.endProfiling();
    } catch (e) {
      throw fromNative(e);
    }
  }

  /** Frees the model. Later run() calls reject with kind 'Disposed'; releasing twice is harmless. */
  async release(): Promise<void> {
    const native = this.#native;
    if (native === undefined) return;
    this.#native = undefined;
    finalizer?.unregister(this);
    try {
      native.release();
    } catch (e) {
      throw fromNative(e);
    } finally {
      native.delete();
    }
  }

  /** The engine session, or Disposed after release(). */
  #live(): NativeSession {
    const native = this.#native;
    if (native === undefined) throw new OneModelError('Disposed', 'the session was released');
    return native;
  }

  // ORT's reading of run()'s second and third arguments: an array is fetches (then options); an object with
  // an output name mapped to null or a Tensor is fetches (then options); any other object is the options.
  #runArguments(arg1: unknown, arg2: unknown): { wanted: string[]; into: Map<string, Tensor> } {
    const into = new Map<string, Tensor>();
    const checkOptions = (o: unknown, which: string) => {
      if (o !== undefined && (typeof o !== 'object' || o === null || Array.isArray(o))) {
        throw new OneModelError('InvalidArgument', `${which} must be a RunOptions object`);
      }
    };
    if (arg1 === undefined || arg1 === null) {
      checkOptions(arg2, 'the third argument');
      return { wanted: [], into };
    }
    if (Array.isArray(arg1)) {
      if (arg1.length === 0) throw new OneModelError('InvalidArgument', "'fetches' cannot be an empty array");
      checkOptions(arg2, 'the third argument');
      return { wanted: this.#checkFetches(arg1), into };
    }
    if (typeof arg1 !== 'object' || arg1 instanceof Tensor) {
      throw new OneModelError(
        'InvalidArgument',
        "the second argument must be 'fetches' (an array or object of output names) or RunOptions",
      );
    }
    const record = arg1 as Record<string, unknown>;
    const named = this.outputNames.filter(
      (n) => Object.prototype.hasOwnProperty.call(record, n) && (record[n] === null || record[n] instanceof Tensor),
    );
    if (named.length === 0) {
      if (arg2 !== undefined)
        throw new OneModelError('InvalidArgument', 'the third argument is not expected after RunOptions');
      return { wanted: [], into };
    }
    checkOptions(arg2, 'the third argument');
    for (const n of named) if (record[n] instanceof Tensor) into.set(n, record[n] as Tensor);
    return { wanted: this.#checkFetches(named), into };
  }

  #checkFetches(fetches: unknown): string[] {
    if (fetches === undefined) return [];
    if (!Array.isArray(fetches)) throw new OneModelError('InvalidInput', 'fetches must be an array of output names');
    const wanted: string[] = [];
    for (const f of fetches) {
      if (typeof f !== 'string' || !this.#outputs.has(f)) {
        throw new OneModelError(
          'InvalidInput',
          `'${String(f)}' is not an output of the model (outputs: ${this.outputNames.join(', ')})`,
        );
      }
      if (!wanted.includes(f)) wanted.push(f);
    }
    if (wanted.length === 0) throw new OneModelError('InvalidInput', 'fetches names no output');
    return wanted;
  }
}

// ORT's type names on the class (InferenceSession.SessionOptions, .FeedsType, ...), so ORT-typed code compiles.
type SessionOptionsType = SessionOptions;
type RunOptionsType = RunOptions;
type FetchesTypeAlias = FetchesType;
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace InferenceSession {
  type SessionOptions = SessionOptionsType;
  type RunOptions = RunOptionsType;
  type FetchesType = FetchesTypeAlias;
  type FeedsType = { readonly [name: string]: Tensor };
  type ReturnType = { readonly [name: string]: Tensor };
  type OnnxValueMapType = { readonly [name: string]: Tensor };
  type NullableOnnxValueMapType = { readonly [name: string]: Tensor | null };
}
