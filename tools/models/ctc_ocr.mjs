// End-to-end check of CTC decoding (docs/ctc.md section 6): text lines rendered in headless Chromium are read
// by PP-OCRv4 recognition (ppocr_rec.onnx) through the built package, and ctcGreedyDecode and ctcBeamSearch
// with its dictionary (ppocr_keys_v1.txt: class 0 is the blank, then the dictionary's lines, then the space)
// must give back the rendered text, on the native addon and on wasm, with the same bits on both.
// Prints one line per text line and engine; exits 1 when a line is misread or the engines differ.
//
//   node tools/models/ctc_ocr.mjs
// Needs: tools/models/fetch.sh (models and dictionary in ~/.cache/onemodel/models), `npm run build` (dist/),
// Chromium (tools/chromium.mjs).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { InferenceSession, Tensor, ctcBeamSearch, ctcGreedyDecode } from 'onemodel';

import { launchChromium } from '../chromium.mjs';

const dir = join(process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel'), 'models');
const HEIGHT = 48; // PP-OCRv4 recognition reads lines 48 pixels high

// Latin letters, digits and punctuation: the fonts every Chromium install has cover them.
const LINES = [
  'Hello World',
  'OneModel 2026',
  'CTC decoding works',
  'The quick brown fox jumps over the lazy dog',
  'Invoice No. 4711, total 93.50',
  'onemodel@npm: 0.1.0',
];

// Each line drawn black on white, 32 px sans-serif, in a canvas of height 48 whose width is the text's plus a
// small margin (a multiple of 8); returns the RGBA pixels.
async function render(lines) {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    return await page.evaluate(
      ({ lines, height }) =>
        lines.map((text) => {
          const canvas = document.createElement('canvas');
          const ctx = canvas.getContext('2d');
          const font = '32px sans-serif';
          ctx.font = font;
          const width = Math.ceil((ctx.measureText(text).width + 8) / 8) * 8;
          canvas.width = width;
          canvas.height = height;
          ctx.fillStyle = '#fff';
          ctx.fillRect(0, 0, width, height);
          ctx.fillStyle = '#000';
          ctx.font = font;
          ctx.textBaseline = 'middle';
          ctx.fillText(text, 4, height / 2);
          return { text, width, rgba: Array.from(ctx.getImageData(0, 0, width, height).data) };
        }),
      { lines, height: HEIGHT },
    );
  } finally {
    await browser.close();
  }
}

// PaddleOCR's recogniser input: [1, 3, 48, W], (v / 255 - 0.5) / 0.5 per channel, planar.
function toInput({ width, rgba }) {
  const plane = HEIGHT * width;
  const x = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) x[c * plane + i] = (rgba[4 * i + c] / 255 - 0.5) / 0.5;
  }
  return new Tensor('float32', x, [1, 3, HEIGHT, width]);
}

const keys = readFileSync(join(dir, 'ppocr_keys_v1.txt'), 'utf8').split('\n');
if (keys[keys.length - 1] === '') keys.pop();
const characters = ['', ...keys, ' '];
// The white margins around a line may be read as spaces: the text is compared without them.
const textOf = (labels) =>
  labels
    .map((k) => characters[k])
    .join('')
    .trim();

const rendered = await render(LINES);
let failed = 0;
let passed = 0;
const bits = {};
for (const engine of ['cpu', 'wasm']) {
  const session = await InferenceSession.create(join(dir, 'ppocr_rec.onnx'), {
    executionProviders: [engine],
    mode: 'exact',
  });
  bits[engine] = [];
  for (const line of rendered) {
    const out = (await session.run({ [session.inputNames[0]]: toInput(line) }))[session.outputNames[0]];
    if (out.dims[2] !== characters.length)
      throw new Error(`the model has ${out.dims[2]} classes, the dictionary ${characters.length}`);
    // The model ends in a softmax: its outputs are probabilities, so their logs are log-probabilities.
    const logp = new Tensor('float32', Float32Array.from(out.data, Math.log), out.dims);
    const options = { scores: 'logProbabilities', executionProviders: [engine] };
    const [greedy] = await ctcGreedyDecode(logp, options);
    const [[best]] = await ctcBeamSearch(logp, { ...options, beamWidth: 10 });
    const got = { greedy: textOf(greedy.labels), beam: textOf(best.labels) };
    const ok = got.greedy === line.text && got.beam === line.text;
    if (ok) passed++;
    else failed++;
    console.log(
      `${ok ? 'ok    ' : 'MISSED'} ${engine.padEnd(4)} "${line.text}": greedy "${got.greedy}" (confidence ` +
        `${greedy.confidence.toFixed(4)}), beam "${got.beam}" (confidence ${best.confidence.toFixed(4)})`,
    );
    bits[engine].push(JSON.stringify([greedy, best], (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v)));
  }
  await session.release();
}
const same = bits.cpu.every((b, i) => b === bits.wasm[i]);
console.log(same ? 'native and wasm decode to the same bits' : 'MISSED: native and wasm results differ');
if (!same) failed++;
console.log(`ctc-ocr: ${passed} ok, ${failed} missed`);
process.exit(failed > 0 ? 1 : 0);
