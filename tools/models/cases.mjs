// The real-model cases of issue 5 and their deterministic inputs (the same bytes on every run and machine).
import { join } from 'node:path';

// A small deterministic generator (32-bit xorshift), so inputs never depend on the JS engine's Math.random.
function generator(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

// An image-like NCHW float32 tensor normalised as PP-OCR does ((pixel / 255 - 0.5) / 0.5): smooth strokes plus noise.
function image(dims, seed) {
  const [n, c, h, w] = dims;
  const rand = generator(seed);
  const data = new Float32Array(n * c * h * w);
  let i = 0;
  for (let b = 0; b < n; ++b)
    for (let ch = 0; ch < c; ++ch)
      for (let y = 0; y < h; ++y)
        for (let x = 0; x < w; ++x) {
          const stroke = Math.sin((x + 7 * b) / 9 + ch) * Math.cos(y / 5) > 0.6 ? 0.9 : 0.1;
          const pixel = Math.min(1, Math.max(0, stroke + 0.15 * (rand() - 0.5)));
          data[i++] = (pixel - 0.5) / 0.5;
        }
  return { type: 'float32', data, dims };
}

// Encoder inputs: random token ids, row b padded after 128 - 13 * b tokens (mask 0, id 0), two segments.
function encoderFeeds(batch, seq, seed) {
  const rand = generator(seed);
  const ids = new BigInt64Array(batch * seq);
  const mask = new BigInt64Array(batch * seq);
  const types = new BigInt64Array(batch * seq);
  for (let b = 0; b < batch; ++b) {
    const len = Math.max(8, seq - 13 * b);
    for (let t = 0; t < seq; ++t) {
      const i = b * seq + t;
      const real = t < len;
      ids[i] = real ? BigInt(t === 0 ? 101 : 1000 + Math.floor(rand() * 29000)) : 0n;
      mask[i] = real ? 1n : 0n;
      types[i] = real && t >= len / 2 ? 1n : 0n;
    }
  }
  const dims = [batch, seq];
  return {
    input_ids: { type: 'int64', data: ids, dims },
    attention_mask: { type: 'int64', data: mask, dims },
    token_type_ids: { type: 'int64', data: types, dims },
  };
}

// Silero VAD: 512-sample chunks at 16 kHz (a tone that starts in chunk 3, plus noise), state carried along.
function vadSteps(chunks) {
  const rand = generator(99);
  const steps = [];
  for (let k = 0; k < chunks; ++k) {
    const data = new Float32Array(512);
    for (let i = 0; i < 512; ++i) {
      const t = (k * 512 + i) / 16000;
      const voice = k >= 3 ? 0.4 * Math.sin(2 * Math.PI * 220 * t) * (1 + 0.5 * Math.sin(2 * Math.PI * 3 * t)) : 0;
      data[i] = voice + 0.01 * (rand() - 0.5);
    }
    const feeds = { input: { type: 'float32', data, dims: [1, 512] }, sr: { type: 'int64', data: BigInt64Array.of(16000n), dims: [] } };
    if (k === 0) feeds.state = { type: 'float32', data: new Float32Array(2 * 128), dims: [2, 1, 128] };
    steps.push({ feeds, carry: (out) => ({ state: { type: out.stateN.type, data: out.stateN.data, dims: out.stateN.dims } }) });
  }
  return steps;
}

export function cases(dir) {
  const one = (feeds) => () => [{ feeds }];
  return [
    { model: 'det', file: join(dir, 'ppocr_det.onnx'), label: 'x 1x3x640x640', steps: one({ x: image([1, 3, 640, 640], 1) }) },
    { model: 'det', file: join(dir, 'ppocr_det.onnx'), label: 'x 1x3x480x800', steps: one({ x: image([1, 3, 480, 800], 2) }) },
    { model: 'rec', file: join(dir, 'ppocr_rec.onnx'), label: 'x 1x3x48x320', steps: one({ x: image([1, 3, 48, 320], 3) }) },
    { model: 'rec', file: join(dir, 'ppocr_rec.onnx'), label: 'x 8x3x48x320', steps: one({ x: image([8, 3, 48, 320], 4) }) },
    { model: 'cls', file: join(dir, 'ppocr_cls.onnx'), label: 'x 1x3x48x192', steps: one({ x: image([1, 3, 48, 192], 5) }) },
    { model: 'cls', file: join(dir, 'ppocr_cls.onnx'), label: 'x 8x3x48x192', steps: one({ x: image([8, 3, 48, 192], 6) }) },
    { model: 'minilm', file: join(dir, 'minilm_l6_like.onnx'), label: 'batch 1 x seq 128', steps: one(encoderFeeds(1, 128, 7)) },
    { model: 'minilm', file: join(dir, 'minilm_l6_like.onnx'), label: 'batch 8 x seq 128, padded', steps: one(encoderFeeds(8, 128, 8)) },
    { model: 'vad', file: join(dir, 'silero_vad_v5.onnx'), label: '12 chunks of 512, state carried', steps: () => vadSteps(12) },
  ];
}
