// The worker of worker mode (env.wasm.proxy = true, web/src/proxy.ts): it owns the wasm engine and the
// sessions made through it, so a run never blocks the page. Self-contained (no imports): the page passes the
// URLs of the wasm loader and the .wasm (the ones the browser entry would use itself), and bundlers that
// recognise `new Worker(new URL(...))` emit this file as it is.
//
// Protocol: the page posts {id, op, ...}; the worker answers {id, value} or {id, error}, where error is the
// binding's plain error object (bindings/README.md) or {kind: 'Internal', message}. Output buffers are
// transferred, not copied.

interface Message {
  id: number;
  op: 'create' | 'run' | 'runValues' | 'release' | 'ctcGreedy' | 'ctcBeamSearch' | 'convert';
  mjs?: string;
  wasm?: string;
  /** The engine's thread count (in the first message). */
  engineThreads?: number;
  /** `create`: threads the session asks for, 0 for all of the engine's. */
  threads?: number;
  wasmBinary?: Uint8Array;
  bytes?: Uint8Array;
  source?: string;
  mode?: number;
  level?: number;
  plans?: number;
  weightStorage?: number;
  sid?: number;
  args?: unknown[];
}

type AnySession = Record<string, (...args: unknown[]) => unknown>;
type AnyModule = {
  onemodelStartWorkers?(count: number): Promise<unknown>;
  WasmSession: { create(...args: unknown[]): AnySession };
  ctcGreedy(...args: unknown[]): unknown;
  ctcBeamSearch(...args: unknown[]): unknown;
  convert(...args: unknown[]): unknown;
};

const scope = self as unknown as {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((e: { data: Message }) => void) | null;
};

let engine: Promise<AnyModule> | undefined;
let engineThreads = 1;
const sessions = new Map<number, AnySession>();
let nextSession = 1;

function buffersOf(value: unknown, out: ArrayBuffer[] = []): ArrayBuffer[] {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer && !out.includes(value.buffer)) out.push(value.buffer);
  } else if (Array.isArray(value)) {
    for (const v of value) buffersOf(v, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) buffersOf(v, out);
  }
  return out;
}

async function handle(m: Message): Promise<unknown> {
  if (engine === undefined) {
    const { mjs, wasm, wasmBinary } = m;
    engine = (async () => {
      const imported = (await import(/* webpackIgnore: true */ /* @vite-ignore */ mjs!)) as {
        default: (a: Record<string, unknown>) => Promise<AnyModule>;
      };
      const mod = await imported.default({
        locateFile: (file: string) => (file.endsWith('.wasm') ? wasm : new URL(file, mjs).href),
        mainScriptUrlOrBlob: mjs,
        ...(wasmBinary !== undefined ? { wasmBinary } : {}),
      });
      // The module's own Workers, as in the page (web/src/native.ts wasmEngineOnThreads).
      const threads = m.engineThreads ?? 1;
      if (threads > 1) {
        try {
          if (mod.onemodelStartWorkers === undefined) throw new Error('this wasm build has no threads');
          await mod.onemodelStartWorkers(threads - 1);
          engineThreads = threads;
        } catch (e) {
          console.warn(`onemodel: the wasm engine's Workers did not start (${String(e)}); sessions run on one thread`);
        }
      }
      return mod;
    })();
  }
  const mod = await engine;
  if (m.op === 'create') {
    const threads = !m.threads ? engineThreads : Math.min(m.threads, engineThreads);
    const s = mod.WasmSession.create(m.bytes, m.source, m.mode, threads, m.level, m.plans, m.weightStorage);
    const sid = nextSession++;
    sessions.set(sid, s);
    return {
      sid,
      inputs: s.inputs!(),
      outputs: s.outputs!(),
      kernelPath: s.kernelPath!(),
      threads: s.threads!(),
      opsets: s.opsets!(),
    };
  }
  if (m.op === 'ctcGreedy' || m.op === 'ctcBeamSearch' || m.op === 'convert') return mod[m.op](...(m.args ?? []));
  const s = sessions.get(m.sid!);
  if (s === undefined) throw { kind: 'Disposed', message: 'the session was released' };
  if (m.op === 'release') {
    sessions.delete(m.sid!);
    s.release!();
    s.delete!();
    return null;
  }
  return s[m.op]!(...(m.args ?? []));
}

scope.onmessage = (e) => {
  const m = e.data;
  handle(m).then(
    (value) => scope.postMessage({ id: m.id, value }, buffersOf(value)),
    (error: unknown) => {
      const plain =
        typeof error === 'object' && error !== null && 'kind' in error
          ? error
          : { kind: 'Internal', message: String(error instanceof Error ? error.message : error) };
      scope.postMessage({ id: m.id, error: plain });
    },
  );
};
