// The whole-model rows of the bar runner (issue 10): the real models of tools/models/fetch.sh at the input
// sizes their users run, with deterministic inputs written once as .npy files next to the bench models.
// Rows whose model file is missing (fetch.sh not run, or no torch for the torchvision exports) are left out
// and listed, so a partial cache never fails the run silently.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { cases, generator, nchw } from '../tools/models/cases.mjs';
import { writeNpy } from './lib/npy.mjs';

// An ImageNet-normalised NCHW image: smooth shapes plus noise, so activations are at working scale.
function photo(dims, seed) {
  return nchw(dims, seed, (b, ch, y, x, rand) => {
    const v = 0.5 + 0.35 * Math.sin(x / (11 + ch) + b) * Math.cos(y / 17) + 0.1 * (rand() - 0.5);
    return (v - 0.45) / 0.25;
  });
}

// 16 kHz audio: a voiced tone with vibrato plus a little noise, as int16-range floats (openWakeWord's
// melspectrogram takes raw int16 sample values as float32).
function audio(samples, seed, scale) {
  const rand = generator(seed);
  const data = new Float32Array(samples);
  for (let i = 0; i < samples; ++i) {
    const t = i / 16000;
    data[i] =
      scale *
      (0.4 * Math.sin(2 * Math.PI * 220 * t * (1 + 0.01 * Math.sin(2 * Math.PI * 5 * t))) + 0.02 * (rand() - 0.5));
  }
  return { type: 'float32', data, dims: [1, samples] };
}

// openWakeWord's embedding input: 76 frames of 32 mel bins (its melspectrogram's output scaled as the
// library does, x / 10 + 2), smooth in time and frequency.
function melFrames(seed) {
  const rand = generator(seed);
  const data = new Float32Array(76 * 32);
  for (let f = 0; f < 76; ++f)
    for (let m = 0; m < 32; ++m) data[f * 32 + m] = 1.5 + Math.sin(f / 7 + m / 5) + 0.2 * (rand() - 0.5);
  return { type: 'float32', data, dims: [1, 76, 32, 1] };
}

function fromCases(dir, model, label) {
  const c = cases(dir).find((k) => k.model === model && k.label === label);
  return c.steps()[0].feeds;
}

// Each row: name, model file (in the fetch.sh cache), a function making its feeds, and optionally one making
// the second feeds of a row timed at a new input shape too (`--reshape` of the engines). `converted: true`
// adds a row NAME_onemodel: the same model converted to the OneModel format (docs/format.md) and run by our
// engines, ONNX Runtime running the ONNX file, so its load column sits next to the ONNX row's.
function definitions(dir) {
  return [
    {
      name: 'ppocr_det_640',
      file: 'ppocr_det.onnx',
      feeds: () => fromCases(dir, 'det', 'x 1x3x640x640'),
      converted: true,
    },
    // reshape: the recogniser's next text line at another width (a new plan: the first call at a new shape).
    {
      name: 'ppocr_rec_48x320',
      file: 'ppocr_rec.onnx',
      feeds: () => fromCases(dir, 'rec', 'x 1x3x48x320'),
      reshape: () => ({ x: photo([1, 3, 48, 448], 16) }),
    },
    { name: 'ppocr_cls_48x192', file: 'ppocr_cls.onnx', feeds: () => fromCases(dir, 'cls', 'x 1x3x48x192') },
    {
      name: 'silero_vad_512',
      file: 'silero_vad_v5.onnx',
      feeds: () => fromCases(dir, 'vad', '12 chunks of 512, state carried'),
    },
    { name: 'oww_melspec_1760', file: 'oww_melspectrogram.onnx', feeds: () => ({ input: audio(1760, 11, 8000) }) },
    { name: 'oww_embedding', file: 'oww_embedding.onnx', feeds: () => ({ input_1: melFrames(12) }) },
    {
      name: 'minilm_b1_s128',
      file: 'minilm_l6_like.onnx',
      feeds: () => fromCases(dir, 'minilm', 'batch 1 x seq 128'),
      converted: true,
    },
    {
      name: 'minilm_b8_s128',
      file: 'minilm_l6_like.onnx',
      feeds: () => fromCases(dir, 'minilm', 'batch 8 x seq 128, padded'),
    },
    {
      name: 'resnet50_224',
      file: 'resnet50.onnx',
      feeds: () => ({ input: photo([1, 3, 224, 224], 13) }),
      converted: true,
    },
    { name: 'mobilenetv3_224', file: 'mobilenetv3_large.onnx', feeds: () => ({ input: photo([1, 3, 224, 224], 14) }) },
    // Dynamic int8: quantizing every activation turns a one-ulp float difference into a quantization step, so its
    // error bound is ONNX Runtime's own change under a one-ulp nudge of the input (bench-method.md section 5).
    {
      name: 'isnet_int8_1024',
      file: 'isnet_small.onnx',
      feeds: () => ({ input: photo([1, 3, 1024, 1024], 15) }),
      nudge: true,
    },
  ];
}

// The feeds with every float32 value moved one ulp towards +inf (the error floor of bench-method.md section 5).
function nudged(feeds) {
  const out = {};
  for (const [name, t] of Object.entries(feeds)) {
    if (t.type !== 'float32') {
      out[name] = t;
      continue;
    }
    const data = new Float32Array(t.data);
    const bits = new Int32Array(data.buffer);
    for (let i = 0; i < data.length; ++i) {
      const x = data[i];
      if (!Number.isFinite(x)) continue;
      if (x === 0) bits[i] = 1;
      else bits[i] += x > 0 ? 1 : -1;
    }
    out[name] = { ...t, data };
  }
  return out;
}

// `model` converted to the OneModel format by the CLI into `dir` (once; kept between runs), or undefined.
function convertedFile(cli, model, dir, name) {
  const out = join(dir, `${name}.onemodel`);
  if (existsSync(out)) return out;
  if (!cli || !existsSync(cli)) return undefined;
  const r = spawnSync(cli, ['convert', model, out], { encoding: 'utf8' });
  return r.status === 0 && existsSync(out) ? out : undefined;
}

/**
 * The whole-model rows present in `modelDir` (fetch.sh's cache), their inputs written to `inputDir`
 * (kept between runs), the converted models too (by the CLI `cli`). Returns { rows, missing }: rows as
 * bench/run.mjs takes them (absolute paths, group 'models'; a converted row's `refModel` is the ONNX file
 * ONNX Runtime runs), missing the names of rows whose model file is absent or could not be converted.
 */
export function wholeModelRows(modelDir, inputDir, cli) {
  mkdirSync(inputDir, { recursive: true });
  const rows = [];
  const missing = [];
  for (const d of definitions(modelDir)) {
    const model = join(modelDir, d.file);
    if (!existsSync(model)) {
      missing.push(d.name);
      continue;
    }
    const write = (feeds, stem) => {
      // stem.NAME.npy (bench/alternate.sh globs the row's feeds as ROW.*.npy)
      const files = {};
      for (const [name, tensor] of Object.entries(feeds)) {
        const file = join(inputDir, `${stem}.${name}.npy`);
        if (!existsSync(file)) writeNpy(file, tensor);
        files[name] = file;
      }
      return files;
    };
    const inputs = write(d.feeds(), d.name); // made once per row (ISNet's is 3 M values); written only when missing
    const row = { name: d.name, group: 'models', model, inputs, macs: 0 };
    if (d.reshape) row.reshape = write(d.reshape(), `${d.name}-reshape`);
    if (d.nudge) row.nudged = write(nudged(d.feeds()), `${d.name}-nudged`);
    rows.push(row);
    if (d.converted) {
      const file = convertedFile(cli, model, inputDir, d.name);
      if (file) rows.push({ ...row, name: `${d.name}_onemodel`, model: file, refModel: model });
      else missing.push(`${d.name}_onemodel`);
    }
  }
  return { rows, missing };
}
