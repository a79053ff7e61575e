// Vitest configuration (package.json "test"). The suites import the BUILT package by its name, so the
// package's exports map decides which file loads; everything under dist/ is left to Node's own loader
// (not transformed by Vite), exactly as in an application.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { defineConfig } from 'vitest/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default defineConfig({
  root,
  test: {
    include: ['tests/js/**/*.test.{mjs,cjs,ts}'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { external: [/\/dist\//] } },
  },
});
