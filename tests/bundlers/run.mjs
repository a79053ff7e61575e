#!/usr/bin/env node
// The npm package in web applications built by bundlers, checked in headless Chromium (issue 11, "Bundlers"):
// a scratch application (in ${ONEMODEL_CACHE:-~/.cache/onemodel}/bundlers) that installs the `npm pack`
// tarball and runs classifier.onnx in a page, built and served four ways:
//   vite dev      the Vite dev server with default settings (dependency pre-bundling on)
//   vite build    `vite build` with default settings, served by `vite preview`
//   esbuild       `esbuild --bundle` with default settings plus the one documented line
//                 (env.wasm.wasmPaths pointing at the package's dist/wasm/, served beside the page)
//   webpack       `webpack --mode production` with default settings (no configuration file)
// Vite, esbuild and webpack are the root package's dev tools. Prints one line per check and `bundlers: N passed, M failed`.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { checks } from '../checks.mjs';
import { launchChromium } from '../../tools/chromium.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const app = join(process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel'), 'bundlers', 'app');
const EXPECTED = [0.2323, 0.2813, 0.4864]; // tests/js/expected.mjs CLASSIFIER_PROBS to 4 digits

const { check, summary } = checks('bundlers');

const MAIN = (setup) => `import { InferenceSession, Tensor, env } from 'onemodel';
${setup}
const s = await InferenceSession.create('/classifier.onnx');
const out = await s.run({ x: new Tensor('float32', Float32Array.from([5.1, 3.5, 1.4, 0.2]), [1, 4]) });
document.getElementById('out').textContent = 'probs ' + Array.from(out.probs.data).map((v) => v.toFixed(4)).join(',') + ' ' + s.kernelPath;
void env;
`;

function makeApp() {
  rmSync(app, { recursive: true, force: true });
  mkdirSync(join(app, 'public'), { recursive: true });
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: root, encoding: 'utf8' }),
  );
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'bundler-app',
        private: true,
        type: 'module',
        dependencies: { onemodel: `file:./${packed[0].filename}` },
      },
      null,
      1,
    ),
  );
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: app,
    stdio: 'ignore',
    timeout: 300_000,
  });
  writeFileSync(
    join(app, 'index.html'),
    '<!doctype html><html><body><pre id="out">pending</pre><script type="module" src="/main.js"></script></body></html>\n',
  );
  writeFileSync(join(app, 'main.js'), MAIN(''));
  cpSync(join(root, 'testdata', 'classifier.onnx'), join(app, 'public', 'classifier.onnx'));
}

// Starts a server command and waits until it answers on `port`.
async function serve(cmd, args, cwd, port) {
  const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => {
    log += d;
  });
  child.stderr.on('data', (d) => {
    log += d;
  });
  for (let i = 0; i < 100; i++) {
    try {
      await fetch(`http://localhost:${port}/`);
      return { child, log: () => log };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  child.kill();
  throw new Error(`server did not start: ${log}`);
}

async function pageResult(browser, url) {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(url);
  try {
    await page.waitForFunction(() => document.getElementById('out').textContent !== 'pending', null, {
      timeout: 30_000,
    });
  } catch {
    errors.push('timed out');
  }
  const out = await page.textContent('#out');
  await page.close();
  return { out, errors };
}

function good(r) {
  const m = /^probs ([0-9.,]+) Wasm128$/.exec(r.out ?? '');
  return (
    m !== null && m[1].split(',').every((v, i) => Math.abs(Number(v) - EXPECTED[i]) <= 1e-4) && r.errors.length === 0
  );
}

async function main() {
  if (!existsSync(join(root, 'dist', 'web', 'index.js')))
    return check('package built', false, 'dist/ is missing (npm run build)');
  makeApp();
  const browser = await launchChromium();
  try {
    const runs = [
      [
        'vite dev server (default settings)',
        async () => serve(bin('vite'), ['--port', '5301', '--strictPort'], app, 5301),
        5301,
      ],
      [
        'vite dev server, worker mode (env.wasm.proxy)',
        async () => {
          writeFileSync(join(app, 'main.js'), MAIN('env.wasm.proxy = true;'));
          return serve(bin('vite'), ['--port', '5305', '--strictPort'], app, 5305);
        },
        5305,
      ],
      [
        'vite build, worker mode, served by vite preview',
        async () => {
          execFileSync(bin('vite'), ['build'], { cwd: app, stdio: 'ignore', timeout: 300_000 });
          writeFileSync(join(app, 'main.js'), MAIN(''));
          return serve(bin('vite'), ['preview', '--port', '5306', '--strictPort'], app, 5306);
        },
        5306,
      ],
      [
        'vite build (default settings), served by vite preview',
        async () => {
          execFileSync(bin('vite'), ['build'], { cwd: app, stdio: 'ignore', timeout: 300_000 });
          return serve(bin('vite'), ['preview', '--port', '5302', '--strictPort'], app, 5302);
        },
        5302,
      ],
      [
        'esbuild --bundle with env.wasm.wasmPaths (one documented line)',
        async () => {
          const out = join(app, 'esb');
          rmSync(out, { recursive: true, force: true });
          mkdirSync(out, { recursive: true });
          writeFileSync(join(app, 'main-esbuild.js'), MAIN("env.wasm.wasmPaths = '/wasm/';"));
          execFileSync(
            bin('esbuild'),
            ['main-esbuild.js', '--bundle', '--format=esm', `--outfile=${join(out, 'main.js')}`],
            { cwd: app, stdio: 'ignore' },
          );
          cpSync(join(app, 'node_modules', 'onemodel', 'dist', 'wasm'), join(out, 'wasm'), { recursive: true });
          cpSync(join(app, 'index.html'), join(out, 'index.html'));
          cpSync(join(app, 'public', 'classifier.onnx'), join(out, 'classifier.onnx'));
          // Any static file server; vite preview serves a directory as it is.
          return serve(bin('vite'), ['preview', '--outDir', out, '--port', '5303', '--strictPort'], app, 5303);
        },
        5303,
      ],
      [
        'webpack 5 (default settings)',
        async () => {
          const out = join(app, 'wp');
          rmSync(out, { recursive: true, force: true });
          execFileSync(
            bin('webpack'),
            ['--mode', 'production', '--entry', './main.js', '--output-path', out, '--output-filename', 'main.js'],
            { cwd: app, stdio: 'ignore', timeout: 300_000 },
          );
          cpSync(join(app, 'index.html'), join(out, 'index.html'));
          cpSync(join(app, 'public', 'classifier.onnx'), join(out, 'classifier.onnx'));
          return serve(bin('vite'), ['preview', '--outDir', out, '--port', '5304', '--strictPort'], app, 5304);
        },
        5304,
      ],
    ];
    for (const [name, start, port] of runs) {
      let server;
      try {
        server = await start();
        const r = await pageResult(browser, `http://localhost:${port}/`);
        check(name, good(r), `${r.out}${r.errors.length ? `; errors: ${r.errors.join(' | ')}` : ''}`);
      } catch (e) {
        check(name, false, String(e && e.stack ? e.stack : e).slice(0, 400));
      } finally {
        server?.child.kill();
      }
    }
  } finally {
    await browser.close();
  }
}

try {
  await main();
} catch (e) {
  check('bundler harness', false, String(e && e.stack ? e.stack : e).slice(0, 400));
}
process.exit(summary() ? 0 : 1);
