// The demo page's logic (web/demo/README in web/README.md): image -> PP-OCRv4 det (fast mode) -> boxes drawn;
// the same input in exact mode -> SHA-256 of the output, compared with the native build's (POST /native-hash).
import { InferenceSession, Tensor, env } from '/pkg/dist/web/index.js';
import { tensorSha256 } from '/golden/run-case.mjs';

const MODEL = '/models/ppocr_det.onnx';
const OUTPUT = 'sigmoid_0.tmp_0';
const LIMIT = 640; // longest side fed to the detector, a multiple of 32
const THRESHOLD = 0.3; // PP-OCR's binarization threshold

const imageCanvas = document.getElementById('image');
const overlay = document.getElementById('overlay');
const facts = document.getElementById('facts');
let sessions;
// The server makes the page cross-origin isolated (COOP/COEP), so the wasm engine can run on threads
// (docs/wasm-threads.md): up to 4, as many as the machine has.
env.wasm.numThreads = Math.min(4, navigator.hardwareConcurrency || 1);

function show(rows) {
  facts.innerHTML = rows.map(([k, v, cls]) => `<tr><td>${k}</td><td class="${cls ?? ''}">${v}</td></tr>`).join('');
}

function sample() {
  const c = document.createElement('canvas');
  c.width = 640;
  c.height = 160;
  const g = c.getContext('2d');
  g.fillStyle = 'white';
  g.fillRect(0, 0, c.width, c.height);
  g.fillStyle = 'black';
  g.font = '40px "DejaVu Sans", sans-serif';
  g.fillText('Hello OneModel 2026', 20, 60);
  g.font = '36px "DejaVu Sans", sans-serif';
  g.fillText('quick brown fox', 20, 130);
  return c;
}

// The image drawn at a size the detector takes (sides multiples of 32, the longest at most LIMIT).
function fit(source) {
  const scale = Math.min(1, LIMIT / Math.max(source.width, source.height));
  const w = Math.max(32, Math.round((source.width * scale) / 32) * 32);
  const h = Math.max(32, Math.round((source.height * scale) / 32) * 32);
  imageCanvas.width = w;
  imageCanvas.height = h;
  overlay.width = w;
  overlay.height = h;
  const g = imageCanvas.getContext('2d');
  g.drawImage(source, 0, 0, w, h);
  return g.getImageData(0, 0, w, h);
}

// Connected regions of the probability map above THRESHOLD (4-neighbour), as bounding boxes.
function boxes(prob, w, h) {
  const seen = new Uint8Array(w * h);
  const out = [];
  const stack = [];
  for (let start = 0; start < w * h; start++) {
    if (seen[start] || prob[start] <= THRESHOLD) continue;
    let x0 = w,
      y0 = h,
      x1 = -1,
      y1 = -1,
      area = 0;
    seen[start] = 1;
    stack.push(start);
    while (stack.length) {
      const p = stack.pop();
      const x = p % w,
        y = (p - x) / w;
      area++;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
      for (const q of [x > 0 ? p - 1 : -1, x < w - 1 ? p + 1 : -1, y > 0 ? p - w : -1, y < h - 1 ? p + w : -1]) {
        if (q >= 0 && !seen[q] && prob[q] > THRESHOLD) {
          seen[q] = 1;
          stack.push(q);
        }
      }
    }
    if (area < 16) continue;
    // DB's unclip: the map marks shrunk text kernels; grow each by area * 1.5 / perimeter (PP-OCR's ratio).
    const bw = x1 - x0 + 1,
      bh = y1 - y0 + 1;
    const d = Math.round((bw * bh * 1.5) / (2 * (bw + bh)));
    out.push({
      x0: Math.max(0, x0 - d),
      y0: Math.max(0, y0 - d),
      x1: Math.min(w - 1, x1 + d),
      y1: Math.min(h - 1, y1 + d),
    });
  }
  return out;
}

async function detect(source) {
  const pixels = fit(source);
  // PP-OCR's normalization, (pixel / 255 - mean) / std, as fromImage's (pixel + bias) / mean per channel.
  const mean = [0.485, 0.456, 0.406],
    std = [0.229, 0.224, 0.225];
  const x = await Tensor.fromImage(pixels, {
    norm: { mean: std.map((s) => 255 * s), bias: mean.map((m) => -255 * m) },
  });
  sessions ??= {
    fast: await InferenceSession.create(MODEL),
    exact: await InferenceSession.create(MODEL, { mode: 'exact' }),
  };
  const t0 = performance.now();
  const out = (await sessions.fast.run({ x }))[OUTPUT];
  const ms = performance.now() - t0;
  const found = boxes(out.data, pixels.width, pixels.height);
  const g = overlay.getContext('2d');
  g.clearRect(0, 0, overlay.width, overlay.height);
  g.strokeStyle = 'rgb(255, 0, 0)';
  g.lineWidth = 3;
  for (const b of found) g.strokeRect(b.x0, b.y0, b.x1 - b.x0 + 1, b.y1 - b.y0 + 1);

  const exact = (await sessions.exact.run({ x }))[OUTPUT];
  const hash = await tensorSha256(
    'float32',
    exact.dims,
    new Uint8Array(exact.data.buffer, exact.data.byteOffset, exact.data.byteLength),
  );
  const rows = [
    ['boxes', String(found.length)],
    ['detector time (fast mode)', `${ms.toFixed(1)} ms at ${pixels.width}x${pixels.height}`],
    ['kernel path', sessions.fast.kernelPath],
    [
      'threads',
      `${sessions.fast.threads}${self.crossOriginIsolated ? '' : ' (the page is not cross-origin isolated)'}`,
    ],
    ['exact-mode hash (this page)', hash.slice(0, 16)],
  ];
  show([...rows, ['exact-mode hash (native)', 'asking the server...']]);
  let native = 'unavailable';
  try {
    const r = await fetch(`/native-hash?dims=${x.dims.join(',')}`, { method: 'POST', body: x.data });
    native = r.ok ? (await r.text()).trim() : `unavailable (${r.status})`;
  } catch (e) {
    native = `unavailable (${e})`;
  }
  const same = native === hash;
  show([
    ...rows,
    [
      'exact-mode hash (native)',
      `${native.slice(0, 16)} ${same ? '(equal)' : '(NOT equal)'}`,
      same ? 'equal' : 'unequal',
    ],
  ]);
  window.__demo = {
    boxes: found,
    ms,
    kernelPath: sessions.fast.kernelPath,
    threads: sessions.fast.threads,
    hash,
    native,
    same,
  };
}

document.getElementById('file').addEventListener('change', async (e) => {
  const f = e.target.files?.[0];
  if (f) await detect(await createImageBitmap(f));
});
const drop = document.getElementById('drop');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('over');
});
drop.addEventListener('dragleave', () => drop.classList.remove('over'));
drop.addEventListener('drop', async (e) => {
  e.preventDefault();
  drop.classList.remove('over');
  const f = e.dataTransfer.files?.[0];
  if (f) await detect(await createImageBitmap(f));
});
detect(sample()).catch((e) => {
  show([['error', String((e && e.message) || e), 'unequal']]);
  window.__demo = { error: String((e && e.stack) || e) };
});
