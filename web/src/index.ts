// Browser (and worker) entry of the package: loads the ES-module wasm build that sits beside this file in the
// package (dist/wasm/onemodel-web.mjs + .wasm) and reads models given as URLs with fetch.
import { OneModelError } from './errors.js';
import { wasmEngine } from './native.js';
import type { NativeModule } from './native.js';
import { setPlatform } from './session.js';

export { OneModelError } from './errors.js';
export { env } from './env.js';
export type { ImageToTensorOptions, TensorToImageOptions, ImageNormalization, ImageChannels } from './image.js';
export type { Env, WasmEnv } from './env.js';
export type { OneModelErrorKind, OneModelErrorDetails } from './errors.js';
export { Tensor } from './tensor.js';
export type { TensorType, TensorData, TensorDataTypeMap, TypedTensor } from './tensor.js';
export { InferenceSession } from './session.js';
export type { Profile } from './native.js';
export type {
  SessionOptions, RunOptions, FetchesType, ExecutionMode, GraphOptimizationLevel, ValueMetadata, TensorValueMetadata, NonTensorValueMetadata, OnnxValue,
} from './session.js';

type Factory = (args: Record<string, unknown>) => Promise<NativeModule>;

setPlatform({
  // ORT-web's names: 'cpu' is its wasm backend too.
  defaultProviders: () => ['wasm'],
  engineFor: (provider) => (provider === 'wasm' || provider === 'cpu' ? 'wasm' : undefined),
  async loadEngine() {
    // Resolved against this file so it works from any server path and from bundlers that keep the layout.
    const url = new URL('../wasm/onemodel-web.mjs', import.meta.url);
    const imported = (await import(/* @vite-ignore */ url.href)) as { default: Factory };
    return wasmEngine(await imported.default({
      // One .wasm serves both loaders (node/scripts/build-dist.mjs).
      locateFile: (file: string) => new URL(`../wasm/${file.endsWith('.wasm') ? 'onemodel.wasm' : file}`, import.meta.url).href,
    }));
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
