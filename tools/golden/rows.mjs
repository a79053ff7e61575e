// The rows of the golden table: ways of running the same cases that must give the same bits.
//   native-<isa>-t<N>  the native CLI (build/native/onemodel run --mode exact) under ONEMODEL_ISA=<isa>,
//                      --threads N, for every target this machine runs (probed through the CLI's
//                      "kernels:" line: a cap above the machine falls back, so a fallback means "not offered")
//   arm64-<isa>-t<N>   the aarch64 cross-built CLI (build/arm64/onemodel) under qemu-aarch64, scalar and neon,
//                      N = 1, 2 (docs/arm64.md); both targets must be reported, or the rows do not run
//   node               the npm package's Node entry on its wasm engine, in this process
//   node-native-t<N>   the npm package's Node entry on its native addon, N = 1, 2 threads, in this process
//   chromium           the packed npm package in a page of headless Chromium (playwright-core)
// Each row returns a Map `<case>/<output>` -> hash (or the cannot-run marker, or "error:<Kind>").
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { launchChromium } from '../chromium.mjs';
import { writeNpy } from './cases.mjs';
import { CANNOT_RUN_KINDS, CANNOT_RUN_MARKER, runCase, tensorSha256 } from './run-case.mjs';

const ISAS = ['scalar', 'sse4', 'avx2', 'avx512'];
export const ARM64_ISAS = ['scalar', 'neon'];
const KERNEL_NAMES = { scalar: 'Scalar', sse4: 'Sse4', avx2: 'Avx2', avx512: 'Avx512', neon: 'Neon' };

export function findCli(root) {
  return [process.env.ONEMODEL_CLI, join(root, 'build', 'native', 'onemodel')].find((c) => c && existsSync(c));
}

/** The aarch64 CLI as a command run under qemu-aarch64 (`[qemu, cli]`), or undefined when either is absent. */
export function findArm64Cli(root) {
  const cli = [process.env.ONEMODEL_ARM64_CLI, join(root, 'build', 'arm64', 'onemodel')].find(
    (c) => c && existsSync(c),
  );
  const qemu = (process.env.PATH ?? '')
    .split(':')
    .map((d) => join(d, 'qemu-aarch64'))
    .find((p) => existsSync(p));
  return cli && qemu ? [qemu, cli] : undefined;
}

/** Runs the CLI: `cli` is its path, or a command array whose first element runs the rest (an emulator). */
function runCli(cli, args, env) {
  const [file, ...prefix] = [cli].flat();
  return new Promise((resolve) => {
    execFile(
      file,
      [...prefix, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 64 << 20, timeout: 300_000, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? (err.code ?? 'signal') : 0, signal: err?.signal, stdout, stderr }),
    );
  });
}

/** The targets this machine runs, as the CLI reports them (ISA cap honoured exactly). */
export async function nativeIsas(cli, root, isas = ISAS) {
  const offered = [];
  for (const isa of isas) {
    const r = await runCli(cli, ['run', join(root, 'testdata', 'classifier.onnx'), '--mode', 'exact'], {
      ONEMODEL_ISA: isa,
    });
    if (/kernels: (\S+)/.exec(r.stdout)?.[1] === KERNEL_NAMES[isa]) offered.push(isa);
  }
  return offered;
}

/** Parses `onemodel run` output: {outputName: sha256}. */
function parseCliHashes(text) {
  const hashes = {};
  let current;
  for (const line of text.split('\n')) {
    const out = /^output (.*): \S+ \[[^\]]*\]$/.exec(line);
    if (out) current = out[1];
    const h = /^ {2}sha256: ([0-9a-f]{64})$/.exec(line);
    if (h && current !== undefined) hashes[current] = h[1];
  }
  return hashes;
}

/**
 * Native rows: every offered target at 1 and 2 threads, named `<prefix>-<isa>-t<N>`. `cases` carry their inputs
 * ({type, dims, bytes}).
 */
export async function nativeRows(cli, root, cases, isas, threadCounts = [1, 2], prefix = 'native') {
  const tmp = mkdtempSync(join(tmpdir(), 'onemodel-golden-'));
  try {
    // The inputs as files the CLI reads (sweeps exist only in memory; .npy inputs are rewritten identically).
    const files = cases.map((c, ci) =>
      c.inputs.map((inp, ii) => {
        const file = join(tmp, `${ci}_${ii}.npy`);
        writeNpy(file, inp);
        return `${inp.name}=${file}`;
      }),
    );
    const inputLines = new Map();
    for (const c of cases) {
      for (const inp of c.inputs)
        inputLines.set(`${c.name}/input:${inp.name}`, await tensorSha256(inp.type, inp.dims, inp.bytes));
    }
    const rows = new Map();
    for (const isa of isas) {
      for (const threads of threadCounts) {
        const row = new Map();
        // Two CLI processes at a time (the machine has few cores); results keep the case order.
        const results = new Array(cases.length);
        let next = 0;
        const worker = async () => {
          for (let i = next++; i < cases.length; i = next++) {
            const args = ['run', resolve(root, cases[i].modelPath), '--mode', 'exact', '--threads', String(threads)];
            for (const f of files[i]) args.push('--input', f);
            results[i] = await runCli(cli, args, { ONEMODEL_ISA: isa });
          }
        };
        await Promise.all([worker(), worker()]);
        cases.forEach((c, i) => {
          for (const inp of c.inputs)
            row.set(`${c.name}/input:${inp.name}`, inputLines.get(`${c.name}/input:${inp.name}`));
          const r = results[i];
          const hashes = r.code === 0 ? parseCliHashes(r.stdout) : {};
          let failure;
          if (r.code !== 0) {
            const kind = /^error: (\w+):/m.exec(r.stderr)?.[1];
            if (r.signal || !kind) failure = `crash:${r.signal ?? r.code}`;
            else failure = CANNOT_RUN_KINDS.has(kind) ? CANNOT_RUN_MARKER : `error:${kind}`;
          }
          for (const o of c.outputs) row.set(`${c.name}/${o}`, failure ?? hashes[o] ?? 'missing');
        });
        rows.set(`${prefix}-${isa}-t${threads}`, row);
      }
    }
    return rows;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * A Node row: the package's Node entry, resolved by the package's own name (dist/ must be built), with session
 * `options` (the engine and threads). `engine` ('wasm' or 'native') is checked on a first session, so a row
 * that asked for the addon cannot silently run the wasm fallback.
 */
export async function nodeRow(root, cases, options, engine) {
  const api = await import('onemodel');
  // Read when the wasm engine loads (docs/wasm-threads.md section 1): the wasm rows share one engine with two
  // threads, and each asks for its own count. A Worker that did not start would leave the engine on one
  // thread with a notice: the notices are watched, so such a row fails instead of passing as a 1-thread one.
  api.env.wasm.numThreads = 2;
  const warn = console.warn;
  const notices = [];
  console.warn = (...a) => {
    notices.push(a.join(' '));
    warn(...a);
  };
  try {
    return await nodeRowCases(api, root, cases, options, engine);
  } finally {
    console.warn = warn;
    const failed = notices.find((n) => n.includes('did not start'));
    if (failed !== undefined) throw new Error(`the wasm engine has no threads: ${failed}`);
  }
}

async function nodeRowCases(api, root, cases, options, engine) {
  if (cases.length > 0) {
    const probe = await api.InferenceSession.create(
      new Uint8Array(readFileSync(resolve(root, cases[0].modelPath))),
      options,
    );
    const path = probe.kernelPath;
    const threads = probe.threads;
    await probe.release();
    if ((path === 'Wasm128') !== (engine === 'wasm'))
      throw new Error(`the ${engine} engine was asked for, the session got ${path}`);
    if (threads !== options.intraOpNumThreads)
      throw new Error(`${options.intraOpNumThreads} thread(s) were asked for, the session got ${threads}`);
  }
  const row = new Map();
  for (const c of cases) {
    const model = new Uint8Array(readFileSync(resolve(root, c.modelPath)));
    for (const [k, v] of await runCase(api, { ...c, model }, options)) row.set(k, v);
  }
  return row;
}

/** The path of the package's Node addon for this platform (dist/native/, from the native build). */
export function addonPath(root) {
  return join(root, 'dist', 'native', `${process.platform}-${process.arch}`, 'onemodel.node');
}

export function packageBuilt(root) {
  try {
    return (
      statSync(join(root, 'dist', 'web', 'index.js')).isFile() &&
      statSync(join(root, 'dist', 'node', 'index.mjs')).isFile()
    );
  } catch {
    return false;
  }
}

/** Packs the package (`npm pack`) into `dir` and unpacks it there; returns the package directory. */
function packAndUnpack(root, dir) {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
  const [info] = JSON.parse(out);
  execFileSync('tar', ['-xzf', join(dir, info.filename), '-C', dir]);
  return join(dir, 'package');
}

function browserEntry(pkgDir) {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  let target = pkg.exports['.'].browser;
  while (typeof target === 'object') target = target.import ?? target.default;
  return target.replace(/^\.\//, '');
}

const PAGE = (entry, threads) => `<!doctype html>
<meta charset="utf-8">
<title>onemodel golden hashes</title>
<script type="module">
  import * as api from '/pkg/${entry}';
  import { runCase } from '/golden/run-case.mjs';
  const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
  try {
    api.env.wasm.numThreads = ${threads};
    if (${threads} > 1 && !self.crossOriginIsolated) throw new Error('the page is not cross-origin isolated');
    const probe = await api.InferenceSession.create(await bytes('/model/0'));
    const got = probe.threads;
    await probe.release();
    if (got !== ${threads}) throw new Error(\`${threads} wasm thread(s) were asked for, the session got \${got}\`);
    const cases = await (await fetch('/cases.json')).json();
    const lines = [];
    for (const c of cases) {
      const inputs = [];
      for (const i of c.inputs) inputs.push({ name: i.name, type: i.type, dims: i.dims, bytes: await bytes(i.url) });
      lines.push(...await runCase(api, { name: c.name, outputs: c.outputs, model: await bytes(c.modelUrl), inputs }));
    }
    window.__golden = { ok: true, lines };
  } catch (e) {
    window.__golden = { ok: false, error: String(e && e.stack || e) };
  }
</script>`;

/**
 * A browser row: the packed package in headless Chromium, served from 127.0.0.1 with the case bytes. With more
 * than one wasm thread the page is served cross-origin isolated (COOP/COEP headers), which SharedArrayBuffer
 * and so the engine's Workers need (docs/wasm-threads.md).
 */
export async function chromiumRow(root, cases, threads = 1) {
  const tmp = mkdtempSync(join(tmpdir(), 'onemodel-golden-browser-'));
  let server;
  let browser;
  try {
    const pkgDir = packAndUnpack(root, tmp);
    const entry = browserEntry(pkgDir);
    const blobs = new Map(); // URL path -> [content type, bytes]
    blobs.set('/', ['text/html; charset=utf-8', Buffer.from(PAGE(entry, threads))]);
    blobs.set('/golden/run-case.mjs', [
      'text/javascript; charset=utf-8',
      readFileSync(new URL('./run-case.mjs', import.meta.url)),
    ]);
    const list = cases.map((c, ci) => {
      blobs.set(`/model/${ci}`, ['application/octet-stream', readFileSync(resolve(root, c.modelPath))]);
      return {
        name: c.name,
        outputs: c.outputs,
        modelUrl: `/model/${ci}`,
        inputs: c.inputs.map((inp, ii) => {
          blobs.set(`/input/${ci}/${ii}`, [
            'application/octet-stream',
            Buffer.from(inp.bytes.buffer, inp.bytes.byteOffset, inp.bytes.byteLength),
          ]);
          return { name: inp.name, type: inp.type, dims: inp.dims, url: `/input/${ci}/${ii}` };
        }),
      };
    });
    blobs.set('/cases.json', ['application/json', Buffer.from(JSON.stringify(list))]);
    const isolation =
      threads > 1
        ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' }
        : {};
    server = createServer((req, res) => {
      for (const [k, v] of Object.entries(isolation)) res.setHeader(k, v);
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      if (path.startsWith('/pkg/')) {
        const file = join(pkgDir, decodeURIComponent(path.slice(5)));
        if (!file.startsWith(pkgDir + '/') || !existsSync(file) || !statSync(file).isFile()) {
          res.writeHead(404).end();
          return;
        }
        const type = file.endsWith('.wasm')
          ? 'application/wasm'
          : /\.(m|c)?js$/.test(file)
            ? 'text/javascript'
            : 'application/octet-stream';
        res.writeHead(200, { 'content-type': type }).end(readFileSync(file));
        return;
      }
      const blob = blobs.get(path);
      if (!blob) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': blob[0] }).end(blob[1]);
    });
    await new Promise((ok, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', ok);
    });
    browser = await launchChromium();
    const tab = await (await browser.newContext()).newPage();
    const log = [];
    tab.on('console', (m) => log.push(`[console.${m.type()}] ${m.text()}`));
    tab.on('pageerror', (e) => log.push(`[pageerror] ${e.message}`));
    await tab.goto(`http://127.0.0.1:${server.address().port}/`, { timeout: 60_000 });
    await tab.waitForFunction(() => window.__golden !== undefined, null, { timeout: 600_000, polling: 250 });
    const result = await tab.evaluate(() => window.__golden);
    if (!result.ok) throw new Error(`the page failed: ${result.error}\n${log.join('\n')}`);
    // A Worker that did not start leaves the engine on one thread with a notice (web/src/native.ts).
    const failed = log.find((l) => l.includes('did not start'));
    if (threads > 1 && failed !== undefined) throw new Error(`the wasm engine has no threads: ${failed}`);
    return new Map(result.lines);
  } finally {
    if (browser) await browser.close().catch(() => {});
    if (server) await new Promise((ok) => server.close(() => ok()));
    rmSync(tmp, { recursive: true, force: true });
  }
}
