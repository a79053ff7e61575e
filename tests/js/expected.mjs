// Expected values shared by the Vitest suite and the browser test. They come from numpy, not from the engine:
// classifier.onnx is x -> Gemm(W1,b1,transB) -> Relu -> Gemm(W2,b2,transB) -> Softmax(axis 1); with the
// initializers read by onnx.numpy_helper, numpy gives [0.23228599 0.28132826 0.4863858] for the input below.
// scorer.onnx is score = features @ [[1,0],[0,1],[1,1]] + bias, best = max over axis 1, by hand:
// [1,2,3] -> [1+3, 2+3] + [0.5, 1.5] = [4.5, 6.5]; [4,5,6] -> [10, 11] + [0.5, 1.5] = [10.5, 12.5].
export const TOLERANCE = 1e-4;
export const CLASSIFIER_INPUT = [5.1, 3.5, 1.4, 0.2];
export const CLASSIFIER_PROBS = [0.23228599, 0.28132826, 0.4863858];
export const SCORER_FEATURES = [1, 2, 3, 4, 5, 6];
export const SCORER_BIAS = [0.5, 1.5];
export const SCORER_SCORE = [4.5, 6.5, 10.5, 12.5];
export const SCORER_BEST = [6.5, 12.5];
export const UNSUPPORTED_OPERATORS = ['DeformConv (opset 22)', 'ImageDecoder (opset 22)'];
