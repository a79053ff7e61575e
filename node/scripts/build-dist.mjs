// Assembles dist/ after the two tsc builds (package.json "build"): copies the Node entry wrappers and the
// wasm artifacts of `npm run build:wasm`, and marks dist/node/cjs as CommonJS (the package is "type": "module").
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');
const wasmBuild = process.env.ONEMODEL_WASM_BUILD_DIR ?? join(root, 'build', 'wasm', 'wasm');

for (const f of ['index.cjs', 'index.mjs', 'index.d.cts', 'index.d.mts']) {
  copyFileSync(join(root, 'node', 'entry', f), join(dist, 'node', f));
}
writeFileSync(join(dist, 'node', 'cjs', 'package.json'), '{\n  "type": "commonjs"\n}\n');

mkdirSync(join(dist, 'wasm'), { recursive: true });
const artifacts = ['onemodel-node.cjs', 'onemodel-node.wasm', 'onemodel-web.mjs', 'onemodel-web.wasm'];
const missing = artifacts.filter((f) => !existsSync(join(wasmBuild, f)));
if (missing.length > 0) {
  console.error(`build-dist: missing wasm artifacts in ${wasmBuild}: ${missing.join(', ')} (run npm run build:wasm first)`);
  process.exit(1);
}
for (const f of artifacts) copyFileSync(join(wasmBuild, f), join(dist, 'wasm', f));
console.log(`build-dist: dist/ assembled (wasm from ${wasmBuild})`);
