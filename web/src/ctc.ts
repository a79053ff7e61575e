// CTC decoding of recogniser outputs (docs/ctc.md): ctcGreedyDecode and ctcBeamSearch. The decoding itself is
// the engine's (engine/decode/, through the bindings), so native and wasm give the same bits; this file checks
// the arguments, fills in the defaults and shapes the results.
import { OneModelError, fromNative } from './errors.js';
import { chooseEngine, providerNames } from './session.js';
import { Tensor } from './tensor.js';

/** What the scores are: logits (normalised per step by the decoder) or natural-log probabilities. */
export type CtcScores = 'logits' | 'logProbabilities';

export interface CtcGreedyOptions {
  /** The blank class (default 0). */
  blank?: number;
  /** Default 'logits'. */
  scores?: CtcScores;
  /** The engine that decodes, as for InferenceSession (default: the platform's order). Results never depend on it. */
  executionProviders?: readonly (string | { readonly name: string })[];
}

export interface CtcBeamSearchOptions extends CtcGreedyOptions {
  /** Prefixes kept after each step, 1..4096 (default 10). */
  beamWidth?: number;
  /** Hypotheses returned per batch item, best first, 1..beamWidth (default 1). */
  topN?: number;
}

/**
 * One emitted label of the best path: its class, the steps it spans ([firstStep, lastStep]) and its best step
 * probability.
 */
export interface CtcRun {
  readonly label: number;
  readonly firstStep: number;
  readonly lastStep: number;
  readonly confidence: number;
}

export interface CtcGreedyResult {
  readonly labels: number[];
  readonly runs: CtcRun[];
  /** The probability of each step's chosen class, the blank's included. */
  readonly stepProbabilities: Float32Array;
  /** The mean run confidence; 0 when nothing is emitted. */
  readonly confidence: number;
}

export interface CtcHypothesis {
  readonly labels: number[];
  /** Natural log of the probability of the labels, summed over all their alignments. */
  readonly logProbability: number;
  /** exp(logProbability / labels.length), the per-label geometric mean; 0 for no labels. */
  readonly confidence: number;
}

const SCORE_CODES: Readonly<Record<CtcScores, number>> = { logits: 0, logProbabilities: 1 };
const GREEDY_KEYS = new Set(['blank', 'scores', 'executionProviders']);
const BEAM_KEYS = new Set([...GREEDY_KEYS, 'beamWidth', 'topN']);
const MAX_BEAM_WIDTH = 4096; // docs/ctc.md section 1

function invalidArgument(message: string): OneModelError {
  return new OneModelError('InvalidArgument', message);
}

function isInteger(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/** The scores as float32 data and [batch, steps, classes] (a batch of 1 for [steps, classes]). */
function scoresOf(what: string, scores: unknown, dims: unknown): { data: Float32Array; dims: number[] } {
  let data: unknown = scores;
  if (scores instanceof Tensor) {
    if (scores.type !== 'float32') {
      throw new OneModelError('InvalidInput', `${what}: scores must be a float32 tensor, not ${scores.type}`);
    }
    data = scores.data;
    dims = scores.dims;
  } else if (!(scores instanceof Float32Array)) {
    throw new OneModelError('InvalidInput', `${what}: scores must be a Tensor or a Float32Array`);
  }
  if (!Array.isArray(dims) || (dims.length !== 2 && dims.length !== 3)) {
    throw new OneModelError('InvalidInput', `${what}: dims must be [steps, classes] or [batch, steps, classes]`);
  }
  const list = dims as unknown[];
  if (!list.every((d) => isInteger(d, 0, 0x7fffffff))) {
    throw new OneModelError('InvalidInput', `${what}: dims [${list.join(', ')}] must be non-negative integers`);
  }
  const full = (list.length === 2 ? [1, ...list] : [...list]) as number[];
  const needed = full[0]! * full[1]! * full[2]!;
  const array = data as Float32Array;
  if (array.length !== needed) {
    throw new OneModelError(
      'InvalidInput',
      `${what}: dims [${list.join(', ')}] need ${needed} scores, got ${array.length}`,
    );
  }
  return { data: array, dims: full };
}

interface Checked {
  data: Float32Array;
  dims: number[];
  kind: number;
  blank: number;
  providers: string[];
  options: CtcBeamSearchOptions;
}

function check(what: string, keys: ReadonlySet<string>, args: unknown[]): Checked {
  const dimsGiven = !(args[0] instanceof Tensor);
  const { data, dims } = scoresOf(what, args[0], dimsGiven ? args[1] : undefined);
  const raw = dimsGiven ? args[2] : args[1];
  if (raw !== undefined && (typeof raw !== 'object' || raw === null))
    throw invalidArgument(`${what}: options must be an object`);
  const options = (raw ?? {}) as CtcBeamSearchOptions;
  for (const key of Object.keys(options)) {
    if (!keys.has(key)) throw invalidArgument(`${what}: unknown option '${key}'`);
  }
  const scores = options.scores ?? 'logits';
  if (!Object.prototype.hasOwnProperty.call(SCORE_CODES, scores)) {
    throw invalidArgument(`${what}: scores '${String(scores)}' is not 'logits' or 'logProbabilities'`);
  }
  const classes = dims[2]!;
  const blank = options.blank ?? 0;
  if (!isInteger(blank, 0, classes - 1)) {
    throw invalidArgument(`${what}: blank ${String(blank)} is not a class index in [0, ${classes})`);
  }
  const providers = providerNames(options.executionProviders ?? []);
  return { data, dims, kind: SCORE_CODES[scores], blank, providers, options };
}

/**
 * Greedy (best-path) CTC decoding (docs/ctc.md section 2): at each step the most likely class, repeats merged,
 * blanks dropped. `scores` is a float32 Tensor [steps, classes] or [batch, steps, classes], or a Float32Array
 * with those dims. Resolves to one result per batch item (one for a [steps, classes] input).
 */
export function ctcGreedyDecode(scores: Tensor, options?: CtcGreedyOptions): Promise<CtcGreedyResult[]>;
export function ctcGreedyDecode(
  scores: Float32Array,
  dims: readonly number[],
  options?: CtcGreedyOptions,
): Promise<CtcGreedyResult[]>;
export async function ctcGreedyDecode(...args: unknown[]): Promise<CtcGreedyResult[]> {
  const c = check('ctcGreedyDecode', GREEDY_KEYS, args);
  const engine = await chooseEngine(c.providers);
  let items;
  try {
    items = await engine.ctcGreedy(c.data, c.dims, c.kind, c.blank);
  } catch (e) {
    throw fromNative(e);
  }
  return items.map((r) => ({
    labels: Array.from(r.labels),
    runs: Array.from(r.labels, (label, i) => ({
      label,
      firstStep: r.firstSteps[i]!,
      lastStep: r.lastSteps[i]!,
      confidence: r.runConfidences[i]!,
    })),
    stepProbabilities: r.stepProbabilities,
    confidence: r.confidence,
  }));
}

/**
 * CTC prefix beam search (docs/ctc.md section 3): the most likely label sequences summed over all their
 * alignments, no language model. Scores as for ctcGreedyDecode. Resolves to, per batch item, the best
 * min(topN, prefixes) hypotheses, best first.
 */
export function ctcBeamSearch(scores: Tensor, options?: CtcBeamSearchOptions): Promise<CtcHypothesis[][]>;
export function ctcBeamSearch(
  scores: Float32Array,
  dims: readonly number[],
  options?: CtcBeamSearchOptions,
): Promise<CtcHypothesis[][]>;
export async function ctcBeamSearch(...args: unknown[]): Promise<CtcHypothesis[][]> {
  const c = check('ctcBeamSearch', BEAM_KEYS, args);
  const width = c.options.beamWidth ?? 10;
  if (!isInteger(width, 1, MAX_BEAM_WIDTH)) {
    throw invalidArgument(`ctcBeamSearch: beamWidth ${String(width)} is not an integer in [1, ${MAX_BEAM_WIDTH}]`);
  }
  const topN = c.options.topN ?? 1;
  if (!isInteger(topN, 1, width)) {
    throw invalidArgument(`ctcBeamSearch: topN ${String(topN)} is not an integer in [1, beamWidth ${width}]`);
  }
  const engine = await chooseEngine(c.providers);
  let items;
  try {
    items = await engine.ctcBeamSearch(c.data, c.dims, c.kind, c.blank, width, topN);
  } catch (e) {
    throw fromNative(e);
  }
  return items.map((list) =>
    list.map((h) => ({ labels: Array.from(h.labels), logProbability: h.logProbability, confidence: h.confidence })),
  );
}
