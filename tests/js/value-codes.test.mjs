// The value-kind codes of runValues cross the binding as plain numbers: bindings/core.h `InputKind` (C++)
// and web/src/native.ts `ValueCode` (TypeScript) must name the same numbers the same way. Both are read as
// source text, so the test needs no build and catches a change made on one side only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { expect, test } from 'vitest';

import { ROOT } from './helpers.mjs';

/** name -> number of a `Name = 3` / `name: 3` list inside the braces that follow `opening`. */
function table(file, opening, separator) {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const start = text.indexOf(opening);
  expect(start, `${opening} in ${file}`).toBeGreaterThanOrEqual(0);
  const body = text.slice(text.indexOf('{', start) + 1, text.indexOf('}', start));
  const entries = body
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((e) => {
      const [name, value] = e.split(separator).map((s) => s.trim());
      return [name.toLowerCase(), Number(value)];
    });
  return Object.fromEntries(entries);
}

test('runValues kind codes are the same table in C++ and TypeScript', () => {
  const cpp = table('bindings/core.h', 'enum class InputKind', '=');
  const ts = table('web/src/native.ts', 'export const ValueCode', ':');
  expect(Object.keys(cpp)).toHaveLength(5);
  expect(ts).toEqual(cpp);
  // The codes are 0..n-1, so an out-of-range code is the one thing binding::input_value has to refuse.
  expect(Object.values(cpp).sort()).toEqual([0, 1, 2, 3, 4]);
});
