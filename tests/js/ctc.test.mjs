// ctcGreedyDecode and ctcBeamSearch (docs/ctc.md): the seeded cases of testdata/ctc/cases.json (written by
// tools/ctc_reference.py) within the tolerances of docs/ctc.md section 6, argument checks with their error
// kinds, and the same bits from the native addon and the wasm build.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, test } from 'vitest';

import { OneModelError, Tensor, ctcBeamSearch, ctcGreedyDecode } from 'onemodel';

import { ENGINE, ROOT, TESTDATA, bytesHex, rejection } from './helpers.mjs';

const ADDON = join(ROOT, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
const read = (name) => JSON.parse(readFileSync(join(TESTDATA, 'ctc', name), 'utf8')).cases;
const CASES = read('cases.json');
// Tied scores: rankings decided by creation order (docs/ctc.md section 3).
const TIES = read('ties.json');
const CONFIDENCE_TOL = 2e-6;
const LOG_PROBABILITY_TOL = 1e-9;

// The case's scores as a Tensor ([steps, classes] when batch is null); null in the JSON is -inf.
function scoresOf(c) {
  const data = Float32Array.from(c.data, (v) => (v === null ? -Infinity : v));
  return new Tensor('float32', data, c.batch === null ? [c.steps, c.classes] : [c.batch, c.steps, c.classes]);
}

const beamOptions = (c) => ({ scores: c.scores, blank: c.blank, beamWidth: c.beamWidth, topN: c.topN });

function expectNear(actual, expected, tol, what) {
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
}

describe(`CTC decoding against the reference (${ENGINE})`, () => {
  test('there are 40 cases', () => {
    expect(CASES).toHaveLength(40);
  });

  test('greedy: labels and runs equal, confidences within 2e-6', async () => {
    for (const c of CASES) {
      const got = await ctcGreedyDecode(scoresOf(c), { scores: c.scores, blank: c.blank });
      expect(got, c.name).toHaveLength(c.greedy.length);
      got.forEach((r, b) => {
        const want = c.greedy[b];
        expect(r.labels, c.name).toEqual(want.labels);
        expect(
          r.runs.map((run) => [run.label, run.firstStep, run.lastStep]),
          c.name,
        ).toEqual(want.runs.map((run) => run.slice(0, 3)));
        r.runs.forEach((run, i) => expectNear(run.confidence, want.runs[i][3], CONFIDENCE_TOL, `${c.name} run ${i}`));
        expect(r.stepProbabilities).toBeInstanceOf(Float32Array);
        expect(r.stepProbabilities.length).toBe(want.stepProbabilities.length);
        r.stepProbabilities.forEach((p, t) =>
          expectNear(p, want.stepProbabilities[t], CONFIDENCE_TOL, `${c.name} step ${t}`),
        );
        expectNear(r.confidence, want.confidence, CONFIDENCE_TOL, `${c.name} confidence`);
      });
    }
  });

  test('beam search: labels equal, log probabilities within 1e-9; the widest beam finds the enumerated best', async () => {
    for (const c of [...CASES, ...TIES]) {
      const got = await ctcBeamSearch(scoresOf(c), beamOptions(c));
      expect(got, c.name).toHaveLength(c.beam.length);
      got.forEach((list, b) => {
        expect(
          list.map((h) => h.labels),
          c.name,
        ).toEqual(c.beam[b].map((h) => h.labels));
        list.forEach((h, i) => {
          expectNear(h.logProbability, c.beam[b][i].logProbability, LOG_PROBABILITY_TOL, `${c.name} hypothesis ${i}`);
          expectNear(h.confidence, c.beam[b][i].confidence, LOG_PROBABILITY_TOL, `${c.name} confidence ${i}`);
        });
      });
      if (c.exhaustive === undefined) continue;
      const wide = await ctcBeamSearch(scoresOf(c), { scores: c.scores, blank: c.blank, beamWidth: 4096 });
      wide.forEach((list, b) => {
        expect(list[0].labels, c.name).toEqual(c.exhaustive[b].labels);
        expectNear(list[0].logProbability, c.exhaustive[b].logProbability, LOG_PROBABILITY_TOL, c.name);
      });
    }
  });

  test('a Float32Array with dims decodes as the Tensor does; [steps, classes] is one item', async () => {
    const c = CASES.find((x) => x.batch === null && x.steps > 0);
    const t = scoresOf(c);
    const fromTensor = await ctcGreedyDecode(t, { scores: c.scores, blank: c.blank });
    const fromArray = await ctcGreedyDecode(t.data, [c.steps, c.classes], { scores: c.scores, blank: c.blank });
    expect(fromTensor).toHaveLength(1);
    expect(fromArray).toEqual(fromTensor);
    const beam = await ctcBeamSearch(t.data, [1, c.steps, c.classes], beamOptions(c));
    expect(beam).toEqual(await ctcBeamSearch(t, beamOptions(c)));
  });

  test('hand-worked: the best text is not the best path, and defaults are logits, blank 0, top 1', async () => {
    // Two steps of p(blank) 0.6, p(a) 0.4 as logits [ln 0.6, ln 0.4]: best path "" (0.36), best text "a" (0.64).
    const scores = new Float32Array([Math.log(0.6), Math.log(0.4), Math.log(0.6), Math.log(0.4)]);
    const [greedy] = await ctcGreedyDecode(scores, [2, 2]);
    expect(greedy.labels).toEqual([]);
    expect(greedy.confidence).toBe(0);
    const [[best, ...rest]] = await ctcBeamSearch(scores, [2, 2]);
    expect(rest).toEqual([]);
    expect(best.labels).toEqual([1]);
    expectNear(best.logProbability, Math.log(0.64), 1e-6, 'log p("a")');
    expectNear(best.confidence, 0.64, 1e-6, 'confidence');
  });
});

describe(`CTC argument checks (${ENGINE})`, () => {
  const scores = new Float32Array(6);
  const cases = [
    ['scores not float32', () => ctcGreedyDecode(new Tensor('int32', new Int32Array(4), [2, 2])), 'InvalidInput'],
    ['a plain array', () => ctcGreedyDecode([1, 2], [1, 2]), 'InvalidInput'],
    ['rank 1', () => ctcBeamSearch(scores, [6]), 'InvalidInput'],
    ['dims not matching the data', () => ctcGreedyDecode(scores, [2, 2]), 'InvalidInput'],
    ['a fractional dim', () => ctcGreedyDecode(scores, [1.5, 4]), 'InvalidInput'],
    ['blank out of range', () => ctcGreedyDecode(scores, [2, 3], { blank: 3 }), 'InvalidArgument'],
    ['blank not an integer', () => ctcBeamSearch(scores, [2, 3], { blank: 0.5 }), 'InvalidArgument'],
    ['unknown scores kind', () => ctcGreedyDecode(scores, [2, 3], { scores: 'probabilities' }), 'InvalidArgument'],
    ['unknown option', () => ctcBeamSearch(scores, [2, 3], { beam_width: 3 }), 'InvalidArgument'],
    ['beam width 0', () => ctcBeamSearch(scores, [2, 3], { beamWidth: 0 }), 'InvalidArgument'],
    ['beam width 4097', () => ctcBeamSearch(scores, [2, 3], { beamWidth: 4097 }), 'InvalidArgument'],
    ['topN above the width', () => ctcBeamSearch(scores, [2, 3], { beamWidth: 2, topN: 3 }), 'InvalidArgument'],
    ['options not an object', () => ctcGreedyDecode(scores, [2, 3], 5), 'InvalidArgument'],
    ['too many prefixes', () => ctcBeamSearch(new Float32Array(4097), [1, 4097], { beamWidth: 4096 }), 'Unsupported'],
  ];
  for (const [name, call, kind] of cases) {
    test(`${name}: ${kind}`, async () => {
      const e = await rejection(call());
      expect(e).toBeInstanceOf(OneModelError);
      expect(e.kind).toBe(kind);
    });
  }

  test('the engine names a NaN score: InvalidInput', async () => {
    const bad = new Float32Array([0, 0, 0, 0, NaN, 0]);
    const e = await rejection(ctcBeamSearch(bad, [1, 2, 3]));
    expect(e).toBeInstanceOf(OneModelError);
    expect(e.kind).toBe('InvalidInput');
    expect(e.message).toContain('scores[0, 1, 1] is NaN');
  });
});

// Both engines in one process: the results must be the same bits (docs/ctc.md sections 2 and 5).
describe('CTC decoding: native addon and wasm agree bit for bit', () => {
  const f32 = (x) => bytesHex(new Float32Array([x]));
  const f64 = (x) => bytesHex(new Float64Array([x]));
  const greedyBits = (items) =>
    items.map((r) => ({
      labels: r.labels,
      runs: r.runs.map((x) => [x.label, x.firstStep, x.lastStep, f32(x.confidence)]),
      steps: bytesHex(r.stepProbabilities),
      confidence: f32(r.confidence),
    }));
  const beamBits = (items) =>
    items.map((list) => list.map((h) => [h.labels, f64(h.logProbability), f64(h.confidence)]));

  test('every case, greedy and beam search', async () => {
    expect(existsSync(ADDON), ADDON).toBe(true); // else 'cpu' would quietly run wasm too
    for (const c of [...CASES, ...TIES]) {
      const runs = {};
      for (const ep of ['cpu', 'wasm']) {
        const executionProviders = [ep];
        runs[ep] = {
          greedy: greedyBits(
            await ctcGreedyDecode(scoresOf(c), { scores: c.scores, blank: c.blank, executionProviders }),
          ),
          beam: beamBits(await ctcBeamSearch(scoresOf(c), { ...beamOptions(c), executionProviders })),
        };
      }
      expect(runs.wasm, c.name).toEqual(runs.cpu);
    }
  });
});
