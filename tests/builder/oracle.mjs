// Built models against ONNX Runtime (docs/model-building.md section 6): runs onemodel_build_zoo (every builder
// operator at fixed and symbolic shapes, an MLP, a small CNN, a two-layer transformer encoder, built and traced) and
// tests/builder/js_models.mjs (the three models in JavaScript, built and traced; needs `npm run build`), loads each exported
// model in onnxruntime-node, runs it on the same inputs at every size binding and compares with our fast and exact
// outputs: scaled error max|ours - ort| / max|ort| <= 1e-5 (integer outputs equal). One line per case, binding and
// mode; exits 1 when any misses, fails to load or fails to run.
//
//   node tests/builder/oracle.mjs [ZOO_BINARY]   (default build/native/tests/onemodel_build_zoo)
// Needs onnxruntime-node in bench/ (`npm --prefix bench ci --ignore-scripts`), as tools/models/compare.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { readNpy, scaledError } from '../../bench/lib/npy.mjs';
import { writeJsModels } from './js_models.mjs';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BOUND = 1e-5;
const zoo = process.argv[2] ?? join(ROOT, 'build', 'native', 'tests', 'onemodel_build_zoo');
if (!existsSync(zoo)) throw new Error(`${zoo} is missing: cmake --build build/native --target onemodel_build_zoo`);
const ort = createRequire(join(process.env.ONEMODEL_ORT_DIR ?? join(ROOT, 'bench'), 'package.json'))(
  'onnxruntime-node',
);

const dir = mkdtempSync(join(tmpdir(), 'onemodel-zoo-'));
let ok = 0;
let missed = 0;
try {
  process.stdout.write(execFileSync(zoo, [dir], { encoding: 'utf8' }));
  // The same kinds of models written in JavaScript, built and traced (the npm package's dist/).
  const om = await import(join(ROOT, 'dist', 'node', 'index.mjs'));
  console.log(`JavaScript: ${(await writeJsModels(om, dir)).join(', ')}`);
  for (const name of readdirSync(dir).sort()) {
    const files = readdirSync(join(dir, name));
    let session;
    try {
      session = await ort.InferenceSession.create(readFileSync(join(dir, name, 'model.onnx')), {
        graphOptimizationLevel: 'all',
        intraOpNumThreads: 1,
      });
    } catch (e) {
      console.log(`missed ${name}: onnxruntime-node cannot load the exported model: ${e.message}`);
      missed++;
      continue;
    }
    const bindings = [...new Set(files.filter((f) => f.startsWith('in')).map((f) => /^in(\d+)_/.exec(f)[1]))];
    for (const k of bindings) {
      const feeds = {};
      for (const f of files.filter((f) => f.startsWith(`in${k}_`))) {
        const t = readNpy(join(dir, name, f));
        feeds[f.slice(`in${k}_`.length, -'.npy'.length)] = new ort.Tensor(t.type, t.data, t.dims);
      }
      let outs;
      try {
        outs = await session.run(feeds);
      } catch (e) {
        console.log(`missed ${name} binding ${k}: onnxruntime-node run failed: ${e.message}`);
        missed++;
        continue;
      }
      for (const mode of ['fast', 'exact']) {
        if (!existsSync(join(dir, name, `${mode}${k}_0.npy`))) continue;
        let worst = 0;
        let where = '';
        session.outputNames.forEach((out, i) => {
          const ours = readNpy(join(dir, name, `${mode}${k}_${i}.npy`));
          const ref = { dims: outs[out].dims, data: outs[out].data };
          const err = scaledError(ours, ref);
          if (err > worst || where === '') [worst, where] = [err, out];
        });
        const dims = Object.values(feeds)[0].dims.join('x');
        const good = worst <= BOUND;
        console.log(
          `${good ? 'ok' : 'missed'} ${name} ${mode} binding ${k} (first input ${dims}): worst ${where} ` +
            `scaled error ${worst.toExponential(2)}`,
        );
        if (good) ok++;
        else missed++;
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`built models against onnxruntime-node: ${ok} ok, ${missed} missed`);
process.exit(missed ? 1 : 0);
