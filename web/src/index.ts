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
      locateFile: (file: string) => new URL(`../wasm/${file}`, import.meta.url).href,
    }));
  },
  async readModel(location: string) {
    let response: Response;
    try {
      response = await fetch(location);
    } catch (e) {
      throw new OneModelError('Io', `cannot fetch the model: ${String(e)}`, { source: location, cause: e });
    }
    if (!response.ok) {
      throw new OneModelError('Io', `fetching the model failed with HTTP ${response.status}`, { source: location });
    }
    return new Uint8Array(await response.arrayBuffer());
  },
});
