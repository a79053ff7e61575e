// ES-module entry of the Node build (package.json exports["."].node.import). It re-exports the CommonJS
// build so that `import` and `require` in one process share one wasm instance and one set of classes.
import api from './index.cjs';

export const {
  InferenceSession,
  Tensor,
  OneModelError,
  env,
  ctcGreedyDecode,
  ctcBeamSearch,
  convert,
  GraphBuilder,
  GraphValue,
  EagerValue,
  Tracer,
  setEagerMode,
} = api;
