// Runs the sample classifier through the npm package exactly as a user would (self-reference by name).
import { InferenceSession, Tensor } from 'onemodel';

const session = await InferenceSession.create(new URL('../testdata/classifier.onnx', import.meta.url).pathname);
const x = new Tensor('float32', new Float32Array([5.1, 3.5, 1.4, 0.2]), [1, 4]);
const { probs } = await session.run({ x });
console.log('probs', Array.from(probs.data, (p) => p.toFixed(4)).join(', '));
console.log('kernels', session.kernelPath);
await session.release();
