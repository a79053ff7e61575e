// ORT's `env`: process-wide settings, so that `import { env } from 'onemodel'` links and ORT-style set-up code
// (`env.wasm.numThreads = 1`, `env.logLevel = 'error'`) runs unchanged. OneModel reads what it can honour
// and says once, at the first session that would be affected, when a setting cannot be honoured
// (web/README.md lists each field).
export interface WasmEnv {
  /**
   * Threads of the wasm engine, read once when it is loaded (ORT's rule): 0 or unset means min(4, half the
   * logical cores, rounded up). More than one needs SharedArrayBuffer: Node, or a cross-origin isolated page
   * (COOP/COEP headers); elsewhere sessions run on one thread, with a one-time notice. Exact-mode results are
   * the same bits at every thread count.
   */
  numThreads?: number;
  /** ORT's switch between SIMD and non-SIMD builds; the OneModel wasm build always uses SIMD128. */
  simd?: boolean;
  /**
   * ORT's worker mode: sessions made after this is set run in a Web Worker, so run() never blocks the page
   * (browser pages; read when the wasm engine is first loaded). Elsewhere (Node, inside a worker) a notice.
   */
  proxy?: boolean;
  /**
   * Where the wasm files are served from (ORT's option): a URL prefix holding `onemodel-web.mjs` and
   * `onemodel.wasm`, or `{ mjs, wasm }` URLs of each. Browser entry only; Node reads them from the package.
   */
  wasmPaths?: string | { mjs?: string; wasm?: string };
  /** The .wasm's bytes, fetched by the application (ORT's option); browser entry only. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** ORT's timeout for loading the wasm module, in ms; ignored. */
  initTimeout?: number;
  trace?: boolean;
}

export interface Env {
  wasm: WasmEnv;
  /** ORT's log level; OneModel logs only its one-time notices, which `'error'` and `'fatal'` silence. */
  logLevel?: 'verbose' | 'info' | 'warning' | 'error' | 'fatal';
  debug?: boolean;
}

export const env: Env = { wasm: { numThreads: 0, simd: true, proxy: false }, logLevel: 'warning', debug: false };

/** Whether this environment can run the wasm engine on threads: shared memory that can go to a Worker. */
function wasmThreadsPossible(): boolean {
  const g = globalThis as { SharedArrayBuffer?: unknown; crossOriginIsolated?: boolean };
  return typeof g.SharedArrayBuffer === 'function' && g.crossOriginIsolated !== false;
}

/** The most threads the wasm engine takes (each one is a Worker holding an instance of the module). */
const MAX_WASM_THREADS = 64;

/**
 * The thread count of the wasm engine about to be loaded, from env.wasm.numThreads (docs/wasm-threads.md
 * section 1): ORT's default when unset or 0, one where threads are not possible.
 */
export function wasmThreads(): number {
  if (!wasmThreadsPossible()) return 1;
  const n = env.wasm?.numThreads;
  if (typeof n === 'number' && Number.isInteger(n) && n > 0) return Math.min(n, MAX_WASM_THREADS);
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  const cores = nav?.hardwareConcurrency ?? 1;
  return Math.max(1, Math.min(4, Math.ceil(cores / 2)));
}

/** The notices the wasm settings call for when a wasm session is made. */
export function wasmEnvNotices(): { key: string; message: string }[] {
  const out: { key: string; message: string }[] = [];
  const w = env.wasm ?? {};
  if (typeof w.numThreads === 'number' && w.numThreads > 1 && !wasmThreadsPossible()) {
    out.push({
      key: 'env.wasm.numThreads',
      message:
        `env.wasm.numThreads = ${w.numThreads}: threads need SharedArrayBuffer, which this page has only when ` +
        'it is cross-origin isolated (COOP/COEP headers); sessions run on one thread',
    });
  }
  const g = globalThis as { Worker?: unknown; document?: unknown };
  if (w.proxy && (typeof g.Worker !== 'function' || g.document === undefined)) {
    out.push({
      key: 'env.wasm.proxy',
      message: 'env.wasm.proxy (worker mode) needs a browser page; sessions run on this thread',
    });
  }
  return out;
}

/** false when env.logLevel asks for errors only. */
export function noticesEnabled(): boolean {
  return env.logLevel !== 'error' && env.logLevel !== 'fatal';
}
