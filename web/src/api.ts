// The public API both entries export (web/src/index.ts for browsers, node/src/index.ts for Node): one list, so
// the two entries cannot drift apart. Each entry adds only how it loads its engines.
export { OneModelError } from './errors.js';
export { env } from './env.js';
export type { ImageToTensorOptions, TensorToImageOptions, ImageNormalization, ImageChannels } from './image.js';
export type { Env, WasmEnv } from './env.js';
export type { OneModelErrorKind, OneModelErrorDetails } from './errors.js';
export { Tensor } from './tensor.js';
export type { TensorType, TensorData, TensorDataTypeMap, TypedTensor } from './tensor.js';
export { InferenceSession } from './session.js';
export { ctcGreedyDecode, ctcBeamSearch } from './ctc.js';
export { convert } from './convert.js';
export { GraphBuilder, GraphValue } from './builder.js';
export { EagerValue, Tracer, setEagerMode } from './trace.js';
export type { Dim, BuilderSessionOptions } from './builder.js';
export type { AttributeValue, ConvAttributes } from './operators.js';
export type { ConvertOptions, WeightStorage } from './convert.js';
export type {
  CtcScores,
  CtcGreedyOptions,
  CtcBeamSearchOptions,
  CtcRun,
  CtcGreedyResult,
  CtcHypothesis,
} from './ctc.js';
export type { OneInputValues } from './happy.js';
export type { Profile } from './native.js';
export type {
  SessionOptions,
  RunOptions,
  FetchesType,
  ExecutionMode,
  GraphOptimizationLevel,
  ValueMetadata,
  TensorValueMetadata,
  NonTensorValueMetadata,
  OnnxValue,
} from './session.js';
