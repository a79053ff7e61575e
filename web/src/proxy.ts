// Worker mode (ORT's env.wasm.proxy = true; browser entry only): sessions live in one dedicated module worker
// (web/src/proxy-worker.ts) that owns the wasm engine, so run() never blocks the page. The page side is an
// Engine like the others (web/src/native.ts): create() and the runs are messages; a session's metadata is
// fetched once at creation, so the synchronous members stay synchronous. Inputs are copied to the worker
// (the caller keeps its arrays), outputs are transferred back.
import { OneModelError } from './errors.js';
import type {
  Engine,
  NativeCtcGreedy,
  NativeCtcHypothesis,
  NativeOutput,
  NativeSession,
  NativeTensor,
  NativeValueInfo,
  NativeValueOutput,
  Profile,
  ValueCode,
} from './native.js';

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

class ProxyWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  #next = 1;
  readonly #urls: { mjs: string; wasm: string; engineThreads: number; wasmBinary?: Uint8Array };

  constructor(worker: Worker, urls: { mjs: string; wasm: string; engineThreads: number; wasmBinary?: Uint8Array }) {
    this.#worker = worker;
    this.#urls = urls;
    worker.onmessage = (e: MessageEvent<{ id: number; value?: unknown; error?: unknown }>) => {
      const p = this.#pending.get(e.data.id);
      if (p === undefined) return;
      this.#pending.delete(e.data.id);
      if ('error' in e.data && e.data.error !== undefined) p.reject(e.data.error);
      else p.resolve(e.data.value);
    };
    worker.onerror = (e: ErrorEvent) => {
      const error = { kind: 'Internal', message: `the OneModel worker failed: ${e.message}` };
      for (const p of this.#pending.values()) p.reject(error);
      this.#pending.clear();
    };
  }

  call(message: Record<string, unknown>): Promise<unknown> {
    const id = this.#next++;
    // The engine's location (and a .wasm given as bytes) goes with the first message only: the worker loads
    // the engine then, and messages arrive in order.
    const first = id === 1 ? this.#urls : {};
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...message, id, ...first });
    });
  }
}

interface Created {
  sid: number;
  inputs: NativeValueInfo[];
  outputs: NativeValueInfo[];
  kernelPath: string;
  threads: number;
  opsets: { domain: string; version: number }[];
}

function proxySession(w: ProxyWorker, c: Created): NativeSession {
  const unavailable = () => {
    throw new OneModelError('Unsupported', 'profiling is not available in worker mode (env.wasm.proxy)');
  };
  return {
    inputs: () => c.inputs,
    outputs: () => c.outputs,
    kernelPath: () => c.kernelPath,
    threads: () => c.threads,
    opsets: () => c.opsets,
    run: (names: string[], codes: number[], dims: number[][], data: ArrayBufferView[], outputNames: string[]) =>
      w.call({ op: 'run', sid: c.sid, args: [names, codes, dims, data, outputNames] }) as Promise<NativeOutput[]>,
    runValues: (names: string[], kinds: ValueCode[], elems: number[], items: NativeTensor[][], outputNames: string[]) =>
      w.call({ op: 'runValues', sid: c.sid, args: [names, kinds, elems, items, outputNames] }) as Promise<
        NativeValueOutput[]
      >,
    startProfiling: unavailable,
    endProfiling: unavailable as () => Profile,
    release: () => {
      // Queued behind the session's pending runs; its own failure has nobody to report to.
      w.call({ op: 'release', sid: c.sid }).catch(() => {});
    },
    delete: () => {},
  };
}

/** The worker-mode engine: one worker, made on first use from `workerUrl`, loading the wasm from `urls`. */
export function proxyEngine(
  makeWorker: () => Worker,
  urls: { mjs: string; wasm: string; engineThreads: number; wasmBinary?: Uint8Array },
): Engine {
  let w: ProxyWorker | undefined;
  const worker = () => (w ??= new ProxyWorker(makeWorker(), urls));
  return {
    provider: 'wasm',
    threaded: urls.engineThreads > 1,
    readsFiles: false,
    async create(model, sourceName, mode, threads, level, plans, _externalDataDir, weightStorage) {
      if (typeof model === 'string') throw new OneModelError('Internal', 'the wasm engine takes model bytes');
      const c = (await worker().call({
        op: 'create',
        bytes: model.slice(),
        source: sourceName,
        mode,
        threads,
        level,
        plans,
        weightStorage,
      })) as Created;
      return proxySession(worker(), c);
    },
    // The scores are copied to the worker (the caller keeps its array).
    ctcGreedy: (data, dims, kind, blank) =>
      worker().call({ op: 'ctcGreedy', args: [data.slice(), dims, kind, blank] }) as Promise<NativeCtcGreedy[]>,
    ctcBeamSearch: (data, dims, kind, blank, width, topN) =>
      worker().call({ op: 'ctcBeamSearch', args: [data.slice(), dims, kind, blank, width, topN] }) as Promise<
        NativeCtcHypothesis[][]
      >,
    // The model is copied to the worker (the caller keeps its array).
    convert: (bytes, sourceName, weightStorage) =>
      worker().call({ op: 'convert', args: [bytes.slice(), sourceName, weightStorage] }) as Promise<Uint8Array>,
  };
}
