// The legacy Silero VAD on a pure tone (issue 13, docs/models.md): where exact mode's 1.3e-2 difference from
// ONNX Runtime comes from. Prints, for the chunk 0.8 sin(0.0137 i) with zero state:
//   our exact and fast `cn` and `output` against ONNX Runtime's;
//   ONNX Runtime's graph from the STFT magnitude on (vad_legacy_tone.py's cut.onnx) fed its own magnitudes, our
//   exact mode's and the float64 ones: the difference follows the magnitudes;
//   ONNX Runtime on the chunk with about a third of the samples moved by one ulp (its own sensitivity).
//
//   node tools/models/vad_legacy_tone.mjs
// Needs what tools/models/compare.mjs needs (the model cache, the native CLI, onnxruntime-node in bench/ or
// $ONEMODEL_ORT_DIR) and /usr/bin/python3 with onnx and numpy.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT } from '../../tests/js/helpers.mjs';
import { findCli, writeNpy } from '../../tests/js/native-cli.mjs';
import { generator } from './cases.mjs';
import { readNpy } from './npy.mjs';

const model = join(
  execFileSync(join(ROOT, 'tools', 'models', 'fetch.sh'), { encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop(),
  'silero_vad_legacy.onnx',
);
const cli = findCli();
if (!cli) throw new Error('no native CLI: build it with `cmake --preset native && cmake --build --preset native`');
const ort = createRequire(join(process.env.ONEMODEL_ORT_DIR ?? join(ROOT, 'bench'), 'package.json'))(
  'onnxruntime-node',
);
const work = mkdtempSync(join(tmpdir(), 'onemodel-vad-tone-'));
try {
  execFileSync('/usr/bin/python3', [join(ROOT, 'tools', 'models', 'vad_legacy_tone.py'), model, work]);
  const tone = readNpy(join(work, 'tone.npy')).data;
  const zeros = () => new ort.Tensor('float32', new Float32Array(128), [2, 1, 64]);
  const state = { h: zeros(), c: zeros() };
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: 1 });
  const runOrt = (x) =>
    session.run({
      input: new ort.Tensor('float32', x, [1, 1536]),
      sr: new ort.Tensor('int64', BigInt64Array.of(16000n), []),
      ...state,
    });
  const ref = await runOrt(tone);
  const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);
  const report = (label, cn, output) =>
    console.log(
      `${label.padEnd(44)} cn[0,0,58] ${cn[58].toFixed(5)}  max|cn - ORT| ${maxDiff(cn, ref.cn.data).toExponential(2)}  ` +
        `output ${output.toExponential(4)} (ORT ${ref.output.data[0].toExponential(4)})`,
    );

  // Ours, natively, on the whole model and on flat.onnx (for the magnitude).
  writeNpy(join(work, 'sr.npy'), 'int64', BigInt64Array.of(16000n), []);
  writeNpy(join(work, 'zeros.npy'), 'float32', new Float32Array(128), [2, 1, 64]);
  const ours = (file, mode, inputs) => {
    const dir = join(work, `${mode}-${file.replace(/\W/g, '')}`);
    const args = ['run', file, '--mode', mode, '--threads', '1', '--save-outputs', dir];
    for (const [k, v] of Object.entries(inputs)) args.push('--input', `${k}=${join(work, v)}`);
    execFileSync(cli, args);
    return (name) => readNpy(join(dir, `${name}.npy`)).data;
  };
  const feeds = { input: 'tone.npy', h: 'zeros.npy', c: 'zeros.npy' };
  for (const mode of ['fast', 'exact']) {
    const out = ours(model, mode, { ...feeds, sr: 'sr.npy' });
    report(`ours, ${mode}`, out('cn'), out('output')[0]);
  }
  const exactMag = ours(join(work, 'flat.onnx'), 'exact', feeds)('magnitude');
  const cut = await ort.InferenceSession.create(join(work, 'cut.onnx'), { intraOpNumThreads: 1, logSeverityLevel: 3 });
  const flat = await ort.InferenceSession.create(join(work, 'flat.onnx'), {
    intraOpNumThreads: 1,
    logSeverityLevel: 3,
  });
  const ortMag = (await flat.run({ input: new ort.Tensor('float32', tone, [1, 1536]), ...state })).magnitude.data;

  // How many magnitudes are noise, and what the model's log(1 + 2^20 |bin|) makes of it.
  const mag64 = readNpy(join(work, 'mag64.npy')).data;
  const bound = readNpy(join(work, 'bound.npy')).data;
  const feature = (m) => Math.log(1 + 1048576 * m);
  const featureDiff = (mag) => mag.reduce((d, m, i) => Math.max(d, Math.abs(feature(m) - feature(mag64[i]))), 0);
  console.log(
    `magnitudes below 16 units of float32 rounding: ${mag64.filter((m, i) => m < bound[i]).length} of ${mag64.length}`,
  );
  console.log(
    `log features against float64: ORT max diff ${featureDiff(ortMag).toFixed(3)}, exact mode ${featureDiff(exactMag).toFixed(3)}`,
  );

  // ONNX Runtime from the magnitude on.
  for (const [label, mag] of [
    ['ORT after the STFT, on its own magnitudes', ortMag],
    ['ORT after the STFT, on exact mode magnitudes', exactMag],
    ['ORT after the STFT, on float64 magnitudes', mag64],
  ]) {
    const out = await cut.run({ magnitude: new ort.Tensor('float32', mag, [1, 129, 24]), ...state });
    report(label, out.c0.data, out.out.data[0]);
  }

  // ONNX Runtime's own sensitivity: each sample times 1 + 1e-7 u, u uniform in [-0.5, 0.5].
  for (let seed = 1; seed <= 4; ++seed) {
    const rand = generator(seed);
    const x = tone.map((v) => v * (1 + 1e-7 * (rand() - 0.5)));
    const moved = x.reduce((n, v, i) => n + (v !== tone[i]), 0);
    const out = await runOrt(x);
    report(`ORT, ${moved} samples moved by one ulp`, out.cn.data, out.output.data[0]);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
