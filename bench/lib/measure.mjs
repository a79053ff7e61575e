// The timing routine of docs/bench-method.md for the JavaScript engines, the same procedure as
// `onemodel bench` (engine/cli/bench.cc) so native and JS rows are measured alike:
// one cold call, up to 3 untimed warm-up calls (stopping once they used `seconds`), then `reps`
// repetitions of back-to-back calls for about `seconds` each (at least 1 call, at most 1000); a
// repetition's value is its mean time per call.
import { performance } from 'node:perf_hooks';

/** Runs `call` (async, returns the outputs) by the method; resolves to { first_ms, reps_ms, outputs }. */
export async function measure(call, { seconds = 1, reps = 3 } = {}) {
  const budget = seconds * 1000;
  let t0 = performance.now();
  let outputs = await call();
  const first = performance.now() - t0;

  t0 = performance.now();
  for (let i = 0; i < 3; i++) {
    outputs = await call();
    if (performance.now() - t0 >= budget) break;
  }

  const repsMs = [];
  for (let r = 0; r < reps; r++) {
    let calls = 0;
    let elapsed = 0;
    t0 = performance.now();
    do {
      outputs = await call();
      calls++;
      elapsed = performance.now() - t0;
    } while (elapsed < budget && calls < 1000);
    repsMs.push(elapsed / calls);
  }
  return { first_ms: first, reps_ms: repsMs, outputs };
}

/**
 * The first call after switching to inputs of a new shape (a new plan) and the fastest of up to 20 calls
 * after it (at most `seconds`), as `onemodel bench --reshape` times them; resolves to { first_ms, min_ms }.
 */
export async function measureReshape(call, { seconds = 1 } = {}) {
  let t0 = performance.now();
  await call();
  const first = performance.now() - t0;
  let min = Infinity;
  const all = performance.now();
  for (let i = 0; i < 20 && (i === 0 || performance.now() - all < seconds * 1000); i++) {
    t0 = performance.now();
    await call();
    min = Math.min(min, performance.now() - t0);
  }
  return { first_ms: first, min_ms: min };
}

/** { median, min, max } of a list of repetition values. */
export function summarize(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  const median = n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { median, min: s[0], max: s[n - 1] };
}

/** The one result line every engine prints (the format of `onemodel bench`); `reshape` from measureReshape. */
export function resultLine(loadMs, firstMs, repsMs, reshape) {
  const { median, min, max } = summarize(repsMs);
  const line =
    `load_ms=${loadMs.toFixed(3)} first_ms=${firstMs.toFixed(3)} median_ms=${median.toFixed(4)} ` +
    `min_ms=${min.toFixed(4)} max_ms=${max.toFixed(4)}`;
  return reshape
    ? `${line} reshape_first_ms=${reshape.first_ms.toFixed(3)} reshape_min_ms=${reshape.min_ms.toFixed(4)}`
    : line;
}

/** Parses that line back into numbers; undefined if the text holds no such line. */
export function parseResultLine(text) {
  const m = /load_ms=([\d.]+) first_ms=([\d.]+) median_ms=([\d.]+) min_ms=([\d.]+) max_ms=([\d.]+)/.exec(text);
  if (!m) return undefined;
  const [load, first, median, min, max] = m.slice(1).map(Number);
  const r = { load_ms: load, first_ms: first, median_ms: median, min_ms: min, max_ms: max };
  const s = /reshape_first_ms=([\d.]+) reshape_min_ms=([\d.]+)/.exec(text);
  if (s) [r.reshape_first_ms, r.reshape_min_ms] = s.slice(1).map(Number);
  return r;
}
