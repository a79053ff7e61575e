// Node entry of the package. Two engines:
// - 'cpu': the native engine as a Node-API addon (dist/native/<platform>-<arch>/onemodel.node, built from
//   bindings/node/ by CMake), with the native kernels and thread pool; runs happen on libuv worker threads.
// - 'wasm': the CommonJS wasm build (dist/wasm/onemodel-node.cjs), handed the .wasm bytes read from disk,
//   because Emscripten's loader would otherwise try `fetch` on a file path, which fails in Node >= 18; its
//   threads (env.wasm.numThreads) are worker_threads running dist/wasm/onemodel-node.worker.js.
// The default order is ['cpu', 'wasm'] (or ONEMODEL_EXECUTION_PROVIDERS, comma-separated); when the addon is
// absent or cannot load, sessions run on wasm (web/src/session.ts chooseEngine warns once).
//
// This file is compiled to CommonJS only (dist/node/cjs); the ES-module entry dist/node/index.mjs re-exports
// it, so `import` and `require` users share one module instance and one set of classes.
import { open, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

import { wasmThreads } from '../../web/src/env.js';
import { OneModelError } from '../../web/src/errors.js';
import { wasmEngineOnThreads } from '../../web/src/native.js';
import type { AddonModule, Engine, NativeModule } from '../../web/src/native.js';
import { setPlatform, warnOnce } from '../../web/src/session.js';

export * from '../../web/src/api.js';

// This file runs from dist/node/cjs/node/src/; the builds are in dist/wasm/ and dist/native/.
const DIST = join(__dirname, '..', '..', '..', '..');
/** Where the addon for this platform sits in the package. */
const nativeAddonPath = join(DIST, 'native', `${process.platform}-${process.arch}`, 'onemodel.node');

type Factory = (args: Record<string, unknown>) => Promise<NativeModule>;

// Bytes per read when load progress is reported.
const READ_PIECE = 1 << 20;

function loadAddon(): Engine {
  let addon: AddonModule;
  try {
    addon = require(nativeAddonPath) as AddonModule;
  } catch (e) {
    const reason = (e as { code?: string }).code === 'MODULE_NOT_FOUND' ? 'not in the package' : String(e);
    throw new OneModelError(
      'Io',
      `the native addon for ${process.platform}-${process.arch} cannot be loaded (${reason})`,
      { source: nativeAddonPath, cause: e },
    );
  }
  return {
    provider: 'cpu',
    threaded: true,
    readsFiles: true,
    create: (model, sourceName, mode, threads, level, plans, dataDir, weightStorage) =>
      addon.create(model, sourceName, mode, threads, level, plans, dataDir, weightStorage),
    ctcGreedy: (data, dims, kind, blank) => addon.ctcGreedy(data, dims, kind, blank),
    ctcBeamSearch: (data, dims, kind, blank, width, topN) => addon.ctcBeamSearch(data, dims, kind, blank, width, topN),
    // Bytes carry no directory: external data is refused, as for models given as bytes.
    convert: (bytes, sourceName, weightStorage) => addon.convert(bytes, sourceName, weightStorage, ''),
  };
}

function defaultProviders(): readonly string[] {
  const listed = (process.env.ONEMODEL_EXECUTION_PROVIDERS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return listed.length > 0 ? listed : ['cpu', 'wasm'];
}

setPlatform({
  defaultProviders,
  engineFor: (provider) => (provider === 'cpu' || provider === 'wasm' ? provider : undefined),
  async loadEngine(engine) {
    if (engine === 'cpu') return loadAddon();
    const wasmBinary = await readFile(join(DIST, 'wasm', 'onemodel.wasm'));
    const factory = require(join(DIST, 'wasm', 'onemodel-node.cjs')) as Factory;
    return wasmEngineOnThreads(await factory({ wasmBinary }), wasmThreads(), (m) => warnOnce('wasm-threads', m));
  },
  directoryOf: (location: string) => dirname(resolve(location)),
  async readModel(location: string, onProgress?: (loaded: number, total: number) => void) {
    try {
      if (onProgress === undefined) {
        const data = await readFile(location);
        return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      }
      // In pieces, reporting each (a large model takes seconds to read from a slow disk).
      const file = await open(location, 'r');
      try {
        const total = (await file.stat()).size;
        const out = new Uint8Array(total);
        let loaded = 0;
        onProgress(0, total);
        while (loaded < total) {
          const { bytesRead } = await file.read(out, loaded, Math.min(READ_PIECE, total - loaded), loaded);
          if (bytesRead === 0) break;
          loaded += bytesRead;
          onProgress(loaded, total);
        }
        return loaded === total ? out : out.subarray(0, loaded);
      } finally {
        await file.close();
      }
    } catch (e) {
      const code = (e as { code?: string }).code;
      throw new OneModelError('Io', `cannot read the model file${code ? ` (${code})` : ''}`, {
        source: location,
        cause: e,
      });
    }
  },
});
