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
      return imported.default({ locateFile: () => wasm, ...(wasmBinary !== undefined ? { wasmBinary } : {}) });
    })();
  }
  const mod = await engine;
  if (m.op === 'create') {
    const s = mod.WasmSession.create(m.bytes, m.source, m.mode, 1, m.level, m.plans, m.weightStorage);
    const sid = nextSession++;
    sessions.set(sid, s);
    return { sid, inputs: s.inputs!(), outputs: s.outputs!(), kernelPath: s.kernelPath!(), opsets: s.opsets!() };
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
