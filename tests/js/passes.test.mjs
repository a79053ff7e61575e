// Graph passes in the wasm engine (docs/architecture.md "Graph passes"): attention_bert.onnx
// (tools/gen_pass_models.py) is fused at graphOptimizationLevel 'all' and runs as imported at 'disabled'; in
// fast mode the two agree to float32 rounding, in exact mode bit for bit (no pass that changes bits runs).
import { describe, expect, test } from 'vitest';

import { InferenceSession, Tensor } from 'onemodel';

import { model } from './helpers.mjs';

function feeds() {
  let s = 12345;
  const rand = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s / 4294967296) * 4 - 2;
  };
  const [b, n, h, d] = [2, 37, 3, 8];
  const t = () => new Tensor('float32', Float32Array.from({ length: b * n * h * d }, rand), [b, n, h, d]);
  const mask = new Float32Array(b * n);
  for (let j = n - 11; j < n; ++j) mask[n + j] = -3.4028234663852886e38;
  return { q: t(), k: t(), v: t(), mask: new Tensor('float32', mask, [b, 1, 1, n]) };
}

async function run(mode, graphOptimizationLevel) {
  const session = await InferenceSession.create(model('passes/attention_bert.onnx'), { mode, graphOptimizationLevel });
  const out = await session.run(feeds());
  await session.release();
  return out.y;
}

describe('graph passes', () => {
  test('fast: the fused attention agrees with the imported graph', async () => {
    const fused = await run('fast', 'all');
    const plain = await run('fast', 'disabled');
    expect(fused.dims).toEqual([2, 37, 3, 8]);
    let diff = 0;
    let scale = 0;
    for (let i = 0; i < plain.data.length; ++i) {
      diff = Math.max(diff, Math.abs(fused.data[i] - plain.data[i]));
      scale = Math.max(scale, Math.abs(plain.data[i]));
    }
    expect(scale).toBeGreaterThan(0.1);
    expect(diff / scale).toBeLessThan(1e-5);
    expect(fused.data).not.toEqual(plain.data); // the rewrite ran (its arithmetic differs in the last bits)
  });

  test('exact: the level changes nothing', async () => {
    expect((await run('exact', 'all')).data).toEqual((await run('exact', 'disabled')).data);
  });
});
