// Vitest configuration (package.json "test"). The suites import the BUILT package by its name, so the
// package's exports map decides which file loads; everything under dist/ is left to Node's own loader
// (not transformed by Vite), exactly as in an application.
//
// Every suite runs twice, once per engine of the Node entry: project "native" (the Node-API addon, the
// default in Node) and project "wasm" (ONEMODEL_EXECUTION_PROVIDERS=wasm). helpers.mjs ENGINE says which.
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
    // --expose-gc: the lifetime tests check that garbage-collected sessions free their engine memory.
    poolOptions: { forks: { execArgv: ['--expose-gc'] } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    server: { deps: { external: [/\/dist\//] } },
    projects: [
      { extends: true, test: { name: 'native', env: { ONEMODEL_EXECUTION_PROVIDERS: 'cpu' } } },
      { extends: true, test: { name: 'wasm', env: { ONEMODEL_EXECUTION_PROVIDERS: 'wasm' } } },
    ],
  },
});
