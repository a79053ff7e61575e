// Helpers shared by the Vitest suites.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TESTDATA = join(ROOT, 'testdata');
export const model = (name) => join(TESTDATA, name);

/** The engine this Vitest project runs on (vitest.config.mjs): 'native' (the Node addon) or 'wasm'. */
export const ENGINE = process.env.ONEMODEL_EXECUTION_PROVIDERS === 'wasm' ? 'wasm' : 'native';
/** kernelPath values of each engine. */
export const NATIVE_KERNEL_PATHS = ['Avx512', 'Avx2', 'Sse4', 'Neon', 'Scalar'];
export function expectEngineKernelPath(expect, kernelPath) {
  if (ENGINE === 'wasm') expect(kernelPath).toBe('Wasm128');
  else expect(NATIVE_KERNEL_PATHS).toContain(kernelPath);
}

/** Asserts every element of `actual` is within `tol` of `expected` (and the lengths agree). */
export function expectClose(expect, actual, expected, tol) {
  expect(Array.from(actual, Number)).toHaveLength(expected.length);
  Array.from(actual, Number).forEach((v, i) => {
    expect(Math.abs(v - expected[i]), `element ${i}: ${v} vs ${expected[i]}`).toBeLessThanOrEqual(tol);
  });
}

/** Runs `promise` and returns the error it rejects with (fails the test if it resolves). */
export async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection, the promise resolved');
}

/** Calls `fn` and returns what it throws (fails the test if it returns). */
export function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw, the call returned');
}

export function bytesHex(typed) {
  return Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength).toString('hex');
}
