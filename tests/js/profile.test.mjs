// session.startProfiling() / endProfiling() in the wasm engine (docs/profiling.md), on
// testdata/ctrlflow/if_captures_constants.onnx (tools/gen_ctrlflow_models.py): the If's then branch is
// x . W + C = [14, 26] for x = [1, 1], its else branch x - C = [-9, -19].
import { describe, expect, test } from 'vitest';

import { InferenceSession, OneModelError, Tensor } from 'onemodel';

import { model } from './helpers.mjs';

const feeds = (cond) => ({
  cond: new Tensor('bool', new Uint8Array([cond ? 1 : 0]), []),
  x: new Tensor('float32', new Float32Array([1, 1]), [1, 2]),
});

describe('profiling', () => {
  test('counts runs, nodes and body nodes; results unchanged', async () => {
    const session = await InferenceSession.create(model('ctrlflow/if_captures_constants.onnx'));
    const before = await session.run(feeds(true));
    session.startProfiling();
    const during = await session.run(feeds(true));
    await session.run(feeds(true));
    const other = await session.run(feeds(false));
    const p = session.endProfiling();
    expect(Array.from(before.y.data)).toEqual([14, 26]);
    expect(Array.from(during.y.data)).toEqual([14, 26]);
    expect(Array.from(other.y.data)).toEqual([-9, -19]);
    expect(p.runs).toBe(3);
    expect(p.runMs).toBeGreaterThan(0);
    const byName = new Map(p.nodes.map((n) => [n.node, n]));
    expect(byName.get('the_if')).toMatchObject({ opType: 'If', depth: 0, calls: 3 });
    expect(byName.get('the_if/then_branch/then_matmul')).toMatchObject({ opType: 'MatMul', depth: 1, calls: 2 });
    expect(byName.get('the_if/else_branch/else_sub')).toMatchObject({ opType: 'Sub', depth: 1, calls: 1 });
    const selfSum = p.nodes.reduce((a, n) => a + n.selfMs, 0);
    expect(selfSum).toBeCloseTo(p.nodesMs, 9);
    expect(p.nodesMs).toBeLessThanOrEqual(p.runMs + 1e-9);
    expect(p.opTypes.map((t) => t.opType).sort()).toEqual(['Add', 'If', 'MatMul', 'Sub']);
    expect(p.text).toContain('profile: 3 runs');
    expect(session.endProfiling().runs).toBe(0); // ended: nothing more was recorded
    await session.release();
    expect(() => session.startProfiling()).toThrow(OneModelError);
  });
});
