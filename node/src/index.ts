// Node entry of the package: loads the CommonJS wasm build (dist/wasm/onemodel-node.cjs) and hands it the
// .wasm bytes read from disk, because Emscripten's loader would otherwise try `fetch` on a file path, which
// fails in Node >= 18. Models given as strings are file paths read with fs.
//
// This file is compiled to CommonJS only (dist/node/cjs); the ES-module entry dist/node/index.mjs re-exports
// it, so `import` and `require` users share one module instance and one set of classes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { OneModelError } from '../../web/src/errors.js';
import type { NativeModule } from '../../web/src/native.js';
import { setPlatform } from '../../web/src/session.js';

export { OneModelError } from '../../web/src/errors.js';
export type { OneModelErrorKind, OneModelErrorDetails } from '../../web/src/errors.js';
export { Tensor } from '../../web/src/tensor.js';
export type { TensorType, TensorData, TensorDataTypeMap } from '../../web/src/tensor.js';
export { InferenceSession } from '../../web/src/session.js';
export type { Profile } from '../../web/src/native.js';
export type {
  SessionOptions, ExecutionMode, GraphOptimizationLevel, ValueMetadata, TensorValueMetadata, NonTensorValueMetadata, OnnxValue,
} from '../../web/src/session.js';

// This file runs from dist/node/cjs/node/src/; the wasm build is in dist/wasm/.
const WASM_DIR = join(__dirname, '..', '..', '..', '..', 'wasm');

type Factory = (args: Record<string, unknown>) => Promise<NativeModule>;

setPlatform({
  async loadModule() {
    const wasmBinary = await readFile(join(WASM_DIR, 'onemodel-node.wasm'));
    const factory = require(join(WASM_DIR, 'onemodel-node.cjs')) as Factory;
    return factory({ wasmBinary });
  },
  async readModel(location: string) {
    try {
      const data = await readFile(location);
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    } catch (e) {
      const code = (e as { code?: string }).code;
      throw new OneModelError('Io', `cannot read the model file${code ? ` (${code})` : ''}`, { source: location, cause: e });
    }
  },
});
