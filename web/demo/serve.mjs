#!/usr/bin/env node
// The demo page's server: `node web/demo/serve.mjs [--port 8080]` after ./tools/setup.sh (the package in dist/,
// the native CLI) and tools/models/fetch.sh (the PP-OCRv4 detector in ~/.cache/onemodel/models). Open the
// printed address. It serves the page, the built package, the model, and POST /native-hash?dims=1,3,H,W: the
// native CLI's exact-mode SHA-256 of the detector's output for the float32 input in the body, which the page
// shows next to its own.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { cliExactHashes, findCli, writeNpy } from '../../tests/js/native-cli.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const models = join(process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel'), 'models');
const MODEL = join(models, 'ppocr_det.onnx');
const OUTPUT = 'sigmoid_0.tmp_0';
const MIME = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};
const mounts = { '/pkg/dist/': join(root, 'dist'), '/golden/': join(root, 'tools', 'golden'), '/models/': models };
const pages = {
  '/': join(here, 'index.html'),
  '/index.html': join(here, 'index.html'),
  '/demo.js': join(here, 'demo.js'),
};

// Cross-origin isolated (COOP/COEP on every response): SharedArrayBuffer, so the wasm engine's threads.
const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

function file(res, path) {
  try {
    if (!statSync(path).isFile()) return false;
    res.writeHead(200, { ...ISOLATION, 'content-type': MIME[extname(path)] ?? 'application/octet-stream' });
    res.end(readFileSync(path));
    return true;
  } catch {
    return false;
  }
}

async function nativeHash(req, url) {
  const dims = (url.searchParams.get('dims') ?? '').split(',').map(Number);
  if (dims.length !== 4 || !dims.every((d) => Number.isSafeInteger(d) && d > 0 && d <= 4096))
    throw new Error('dims must be 1,3,H,W');
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  if (body.length !== dims.reduce((a, b) => a * b, 4)) throw new Error(`${body.length} bytes for dims ${dims}`);
  const cli = findCli();
  if (!cli) throw new Error('the native CLI is not built (tools/setup.sh)');
  const dir = mkdtempSync(join(tmpdir(), 'onemodel-demo-'));
  try {
    const npy = join(dir, 'x.npy');
    writeNpy(npy, 'float32', new Float32Array(body.buffer, body.byteOffset, body.length / 4), dims);
    return cliExactHashes(cli, MODEL, { x: npy })[OUTPUT];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function startDemo(port = 8080) {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/native-hash') {
      nativeHash(req, url).then(
        (h) => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(h);
        },
        (e) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(e.message ?? e));
        },
      );
      return;
    }
    if (pages[url.pathname] && file(res, pages[url.pathname])) return;
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (!url.pathname.startsWith(prefix)) continue;
      const path = normalize(join(dir, decodeURIComponent(url.pathname.slice(prefix.length))));
      if (path.startsWith(dir + sep) && file(res, path)) return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  try {
    statSync(MODEL);
  } catch {
    console.error(`serve: ${MODEL} is missing: run tools/models/fetch.sh`);
    process.exit(1);
  }
  const server = await startDemo(port);
  console.log(`OneModel demo at http://127.0.0.1:${server.address().port}/`);
}
