// Assembles dist/ after the two tsc builds (package.json "build"): copies the Node entry wrappers, the wasm
// artifacts of `npm run build:wasm` and the Node addon of the native build (build/native/node/onemodel.node,
// into dist/native/<platform>-<arch>/; without it the package runs wasm in Node), and marks dist/node/cjs as
// CommonJS (the package is "type": "module").
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');
const wasmBuild = process.env.ONEMODEL_WASM_BUILD_DIR ?? join(root, 'build', 'wasm', 'wasm');
const addon = process.env.ONEMODEL_NODE_ADDON ?? join(root, 'build', 'native', 'node', 'onemodel.node');

for (const f of ['index.cjs', 'index.mjs', 'index.d.cts', 'index.d.mts']) {
  copyFileSync(join(root, 'node', 'entry', f), join(dist, 'node', f));
}
writeFileSync(join(dist, 'node', 'cjs', 'package.json'), '{\n  "type": "commonjs"\n}\n');
// The package's API notes (web/README.md: options, engines, the migration table from ONNX Runtime) ship in it.
copyFileSync(join(root, 'web', 'README.md'), join(dist, 'README.md'));

mkdirSync(join(dist, 'wasm'), { recursive: true });
// The .worker.js files are the threads' Worker scripts of the threaded build (docs/wasm-threads.md).
const artifacts = [
  'onemodel-node.cjs',
  'onemodel-node.wasm',
  'onemodel-node.worker.js',
  'onemodel-web.mjs',
  'onemodel-web.wasm',
  'onemodel-web.worker.js',
];
const missing = artifacts.filter((f) => !existsSync(join(wasmBuild, f)));
if (missing.length > 0) {
  console.error(
    `build-dist: missing wasm artifacts in ${wasmBuild}: ${missing.join(', ')} (run npm run build:wasm first)`,
  );
  process.exit(1);
}
// The two links of the same objects give the same .wasm (only the JS loaders differ): the package ships one,
// dist/wasm/onemodel.wasm, which both loaders are pointed at. Half the tarball was a second copy.
const wasmA = readFileSync(join(wasmBuild, 'onemodel-node.wasm'));
const wasmB = readFileSync(join(wasmBuild, 'onemodel-web.wasm'));
if (!wasmA.equals(wasmB)) {
  console.error(
    'build-dist: onemodel-node.wasm and onemodel-web.wasm differ; the package assumes one .wasm for both loaders',
  );
  process.exit(1);
}
for (const f of ['onemodel-node.cjs', 'onemodel-node.worker.js', 'onemodel-web.mjs', 'onemodel-web.worker.js'])
  copyFileSync(join(wasmBuild, f), join(dist, 'wasm', f));
writeFileSync(join(dist, 'wasm', 'onemodel.wasm'), wasmB);
// onemodel-node.worker.js is a CommonJS script, and the package is "type": "module" (.mjs and .cjs files keep
// their own kinds; browsers never read this file).
writeFileSync(join(dist, 'wasm', 'package.json'), '{\n  "type": "commonjs"\n}\n');
let native = 'no native addon';
if (existsSync(addon)) {
  const dir = join(dist, 'native', `${process.platform}-${process.arch}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(addon, join(dir, 'onemodel.node'));
  native = `native addon from ${addon}`;
} else {
  console.warn(`build-dist: ${addon} is missing (cmake --build --preset native builds it); Node will run wasm`);
}
console.log(`build-dist: dist/ assembled (wasm from ${wasmBuild}, ${native})`);
