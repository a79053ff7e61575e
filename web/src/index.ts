// Browser (and worker) entry of the package: loads the ES-module wasm build that sits beside this file in the
// package (dist/wasm/onemodel-web.mjs + .wasm) and reads models given as URLs with fetch.
import { env, wasmThreads } from './env.js';
import { OneModelError } from './errors.js';
import { wasmEngineOnThreads } from './native.js';
import { proxyEngine } from './proxy.js';
import type { NativeModule } from './native.js';
import { setPlatform, warnOnce } from './session.js';

export * from './api.js';

type Factory = (args: Record<string, unknown>) => Promise<NativeModule>;

// Where the wasm loader and the .wasm are: env.wasm.wasmPaths when set (ORT's option: a URL prefix, or
// { mjs, wasm } URLs), else beside this file in the package. Vite's dev server pre-bundles dependencies
// into /node_modules/.vite/deps/ without the files they reference by URL (vitejs/vite#8427); this file then
// runs from there, and the package's own copy, which the dev server still serves, is used instead.
// The package's own dist/ when this file runs from Vite's pre-bundled copy, else undefined.
function packageDistInViteDev(): URL | undefined {
  const here = new URL(import.meta.url);
  const at = here.pathname.indexOf('/node_modules/.vite/');
  return at < 0 ? undefined : new URL(`${here.pathname.slice(0, at)}/node_modules/onemodel/dist/`, here);
}

function wasmUrls(): { mjs: string; wasm: string } {
  const paths = env.wasm.wasmPaths;
  if (typeof paths === 'string') {
    const base = new URL(paths.endsWith('/') ? paths : `${paths}/`, globalThis.location?.href ?? import.meta.url);
    return { mjs: new URL('onemodel-web.mjs', base).href, wasm: new URL('onemodel.wasm', base).href };
  }
  // The two `new URL('../wasm/...', import.meta.url)` literals are what bundlers (Vite, webpack 5) recognise
  // to emit the files with a build: keep them literal.
  let mjs = new URL('../wasm/onemodel-web.mjs', import.meta.url).href;
  let wasm = new URL('../wasm/onemodel.wasm', import.meta.url).href;
  const dist = packageDistInViteDev();
  if (dist !== undefined) {
    mjs = new URL('wasm/onemodel-web.mjs', dist).href;
    wasm = new URL('wasm/onemodel.wasm', dist).href;
  }
  return { mjs: paths?.mjs ?? mjs, wasm: paths?.wasm ?? wasm };
}

setPlatform({
  // ORT-web's names: 'cpu' is its wasm backend too.
  defaultProviders: () => ['wasm'],
  engineFor: (provider) => (provider === 'wasm' || provider === 'cpu' ? 'wasm' : undefined),
  async loadEngine() {
    const { mjs, wasm } = wasmUrls();
    const binary0 = env.wasm.wasmBinary;
    if (env.wasm.proxy && typeof Worker === 'function' && typeof document !== 'undefined') {
      // Worker mode: the literal `new Worker(new URL(...))` is what bundlers recognise to emit the worker.
      return proxyEngine(
        () => {
          const dist = packageDistInViteDev();
          // Made apart from `new Worker(...)`: bundlers analyse only a literal inside it.
          if (dist !== undefined) return new Worker(new URL('web/proxy-worker.js', dist), { type: 'module' });
          return new Worker(new URL('./proxy-worker.js', import.meta.url), { type: 'module' });
        },
        {
          mjs,
          wasm,
          engineThreads: wasmThreads(),
          ...(binary0 !== undefined
            ? { wasmBinary: binary0 instanceof Uint8Array ? binary0 : new Uint8Array(binary0) }
            : {}),
        },
      );
    }
    const imported = (await import(/* webpackIgnore: true */ /* @vite-ignore */ mjs)) as { default: Factory };
    const binary = env.wasm.wasmBinary;
    const mod = await imported.default({
      // One .wasm serves both loaders (node/scripts/build-dist.mjs); the threads' Worker script
      // (onemodel-web.worker.js) sits beside the loader, and imports it by this URL.
      locateFile: (file: string) => (file.endsWith('.wasm') ? wasm : new URL(file, mjs).href),
      mainScriptUrlOrBlob: mjs,
      ...(binary !== undefined ? { wasmBinary: binary instanceof Uint8Array ? binary : new Uint8Array(binary) } : {}),
    });
    return wasmEngineOnThreads(mod, wasmThreads(), (m) => warnOnce('wasm-threads', m));
  },
  directoryOf: () => '',
  async readModel(location: string, onProgress?: (loaded: number, total: number) => void) {
    let response: Response;
    try {
      response = await fetch(location);
    } catch (e) {
      throw new OneModelError('Io', `cannot fetch the model: ${String(e)}`, { source: location, cause: e });
    }
    if (!response.ok) {
      throw new OneModelError('Io', `fetching the model failed with HTTP ${response.status}`, { source: location });
    }
    if (onProgress === undefined || response.body === null) {
      const bytes = new Uint8Array(await response.arrayBuffer());
      onProgress?.(bytes.length, bytes.length);
      return bytes;
    }
    // Streamed, reporting each piece; total is Content-Length (0 when the server does not send it).
    const total = Number(response.headers.get('content-length') ?? 0) || 0;
    const pieces: Uint8Array[] = [];
    let loaded = 0;
    onProgress(0, total);
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pieces.push(value);
      loaded += value.length;
      onProgress(loaded, Math.max(total, loaded));
    }
    const bytes = new Uint8Array(loaded);
    let at = 0;
    for (const p of pieces) {
      bytes.set(p, at);
      at += p.length;
    }
    return bytes;
  },
});
