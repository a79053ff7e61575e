#!/usr/bin/env node
// The bar runner (docs/bench-method.md): OneModel against ONNX Runtime on the models of make_models.py.
//
//   node bench/run.mjs [--rows SUBSTR,...] [--engines ort-node,onemodel-native,onemodel-node,ort-web,onemodel-wasm]
//                      [--threads 1,2] [--modes fast,exact] [--seconds S] [--reps N] [--quick]
//                      [--cli PATH] [--models DIR] [--timeout S] [--ignore-load] [--readme FILE | --no-readme]
//   node bench/run.mjs --render build/bench/last-run.json [--readme FILE]   (re-renders a saved run)
//
// Three groups of engines, each row one model:
//   native  ort-node (onnxruntime-node, all optimizations, intra-op threads N, inter-op 1, sequential)
//           against onemodel-native (`onemodel bench` of the Release build, fast and exact, threads N)
//   node    the same ort-node against onemodel-node (the npm package on its native addon, threads N): what a
//           Node application that switched its import gets
//   wasm    ort-web (onnxruntime-web's SIMD wasm backend in Node, env.wasm.numThreads N) against onemodel-wasm
//           (this repository's npm package in Node on its wasm engine, fast and exact, env.wasm.numThreads N)
// Every (row, engine, mode, threads) is its own process wrapped by `/usr/bin/time -v` for the peak RSS; it
// loads (timed alone), makes one cold call, warms up, then times 3 repetitions of about S seconds (the
// median is reported with min and max). After timing, each process saves its outputs and they are compared
// with ONNX Runtime's of the same group: scaled error max|ours - ort| / max|ort|, flagged above 1e-4, so a
// fast wrong answer is never shown as a result.
//
// The run holds the benchmark lock ($ONEMODEL_LOCK, default ~/WORKER-BENCH.lock) and refuses to start if it
// exists or if the 1-minute load is above half the logical cores (--ignore-load measures anyway and marks
// the table as taken under load). The markdown table goes to stdout and, for full runs (not --quick), into
// bench/README.md between the results markers, with the command and the machine. Every run's raw records are
// saved to build/bench/last-run.json.
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { readNpy, scaledError } from './lib/npy.mjs';
import { parseResultLine } from './lib/measure.mjs';
import { renderReport } from './lib/report.mjs';
import { wholeModelRows } from './whole_models.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const ENGINES = ['ort-node', 'onemodel-native', 'onemodel-node', 'ort-web', 'onemodel-wasm'];
const ERROR_BOUND = 1e-4;
const TIME = '/usr/bin/time';

function usage(message) {
  console.error(
    `run.mjs: ${message}\nusage: node bench/run.mjs [--rows SUBSTR,...] [--engines ${ENGINES.join(',')}]\n` +
      '  [--threads 1,2] [--modes fast,exact] [--seconds S] [--reps N] [--quick] [--cli PATH] [--models DIR]\n' +
      '  [--timeout S] [--ignore-load] [--readme FILE | --no-readme] | --render RUN.json [--readme FILE]',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const o = {
    rows: [],
    engines: [...ENGINES],
    threads: [1, 2],
    modes: ['fast', 'exact'],
    seconds: undefined,
    reps: 3,
    quick: false,
    cli: join(root, 'build', 'native', 'onemodel'),
    models: undefined,
    wholeModels: undefined,
    timeout: 600,
    ignoreLoad: false,
    readme: undefined,
    noReadme: false,
    render: undefined,
  };
  const list = (v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const take = () => (i + 1 < argv.length ? argv[++i] : usage(`${a} needs a value`));
    switch (a) {
      case '--rows':
        o.rows = list(take());
        break;
      case '--engines':
        o.engines = list(take());
        break;
      case '--threads':
        o.threads = list(take()).map(Number);
        break;
      case '--modes':
        o.modes = list(take());
        break;
      case '--seconds':
        o.seconds = Number(take());
        break;
      case '--reps':
        o.reps = Number(take());
        break;
      case '--quick':
        o.quick = true;
        break;
      case '--cli':
        o.cli = resolve(take());
        break;
      case '--models':
        o.models = resolve(take());
        break;
      case '--whole-models':
        o.wholeModels = resolve(take());
        break;
      case '--timeout':
        o.timeout = Number(take());
        break;
      case '--ignore-load':
        o.ignoreLoad = true;
        break;
      case '--readme':
        o.readme = resolve(take());
        break;
      case '--no-readme':
        o.noReadme = true;
        break;
      case '--render':
        o.render = resolve(take());
        break;
      case '--help':
      case '-h':
        usage('help');
        break;
      default:
        usage(`unknown argument '${a}'`);
    }
  }
  for (const e of o.engines) if (!ENGINES.includes(e)) usage(`unknown engine '${e}'`);
  for (const m of o.modes) if (m !== 'fast' && m !== 'exact') usage(`unknown mode '${m}'`);
  for (const t of o.threads) if (!Number.isInteger(t) || t < 1 || t > 256) usage(`bad thread count '${t}'`);
  if (o.seconds === undefined) o.seconds = o.quick ? 0.1 : 1;
  if (!(o.seconds > 0) || !(o.timeout > 0) || !Number.isInteger(o.reps) || o.reps < 1)
    usage('bad --seconds, --timeout or --reps');
  if (o.readme === undefined && !o.quick && !o.noReadme && !o.render) o.readme = join(here, 'README.md');
  if (o.noReadme) o.readme = undefined;
  return o;
}

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function machine(o) {
  const lscpu = sh('lscpu', []) ?? '';
  const model = /^Model name:\s*(.+)$/m.exec(lscpu)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const flags = (
    /^flags\s*:\s*(.+)$/m.exec(existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '')?.[1] ?? ''
  ).split(/\s+/);
  const wanted = ['sse4_2', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512dq', 'avx512vbmi', 'avx_vnni', 'avx512_vnni'];
  const osName =
    /^PRETTY_NAME="?([^"\n]+)"?/m.exec(
      existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : '',
    )?.[1] ?? process.platform;
  const pkgVersion = (name) => {
    try {
      return JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return 'not installed';
    }
  };
  const commit = sh('git', ['-C', root, 'rev-parse', '--short', 'HEAD']) ?? 'unknown';
  const dirty = (sh('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no']) ?? '') !== '';
  return {
    cpu: model,
    logical_cores: cpus().length,
    isa: wanted.filter((f) => flags.includes(f)).join(' ') || 'none reported',
    os: `${osName}, Linux ${sh('uname', ['-r']) ?? '?'}`,
    node: process.version,
    ort: `onnxruntime-node ${pkgVersion('onnxruntime-node')}, onnxruntime-web ${pkgVersion('onnxruntime-web')}`,
    onemodel: `${o.engines.includes('onemodel-native') ? (sh(o.cli, ['--version']) ?? 'CLI not found') : 'onemodel'} (git ${commit}${dirty ? ', uncommitted changes' : ''})`,
    cores_note: `${cpus().length} logical processors`,
  };
}

// The benchmark lock (method: claimed atomically, refused if present, removed on exit).
function takeLock(label) {
  const path = process.env.ONEMODEL_LOCK ?? join(homedir(), 'WORKER-BENCH.lock');
  try {
    writeFileSync(path, `${label}\n`, { flag: 'wx' });
  } catch (e) {
    if (e.code === 'EEXIST') {
      console.error(`run.mjs: the benchmark lock ${path} exists (${readFileSync(path, 'utf8').trim()}); not starting`);
      process.exit(1);
    }
    throw e;
  }
  const release = () => {
    try {
      unlinkSync(path);
    } catch {
      /* already gone */
    }
  };
  process.on('exit', release);
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      release();
      process.exit(130);
    });
  return path;
}

function jobsFor(row, o, modelsDir) {
  const at = (f) => (isAbsolute(f) ? f : join(modelsDir, f));
  const model = at(row.model);
  // ONNX Runtime reads ONNX only: a converted row's ORT jobs run the ONNX file it was converted from.
  const ortModel = row.refModel ? at(row.refModel) : model;
  const inputs = [
    ...Object.entries(row.inputs).flatMap(([name, file]) => ['--input', `${name}=${at(file)}`]),
    ...Object.entries(row.reshape ?? {}).flatMap(([name, file]) => ['--reshape', `${name}=${at(file)}`]),
  ];
  const jobs = [];
  const worker = (engine, mode, threads) => ({
    row: row.name,
    engine,
    mode,
    threads,
    group: engine === 'ort-web' || engine === 'onemodel-wasm' ? 'wasm' : engine === 'onemodel-node' ? 'node' : 'native',
    cmd: process.execPath,
    args: [
      join(here, 'worker.mjs'),
      '--engine',
      engine,
      '--model',
      engine.startsWith('ort-') ? ortModel : model,
      ...inputs,
      '--mode',
      mode,
      '--threads',
      String(threads),
      '--seconds',
      String(o.seconds),
      '--reps',
      String(o.reps),
    ],
  });
  for (const t of o.threads) {
    if (o.engines.includes('ort-node')) jobs.push(worker('ort-node', '-', t));
    if (o.engines.includes('onemodel-native')) {
      for (const mode of o.modes) {
        jobs.push({
          row: row.name,
          engine: 'onemodel-native',
          mode,
          threads: t,
          group: 'native',
          cmd: o.cli,
          args: [
            'bench',
            model,
            ...inputs,
            '--mode',
            mode,
            '--threads',
            String(t),
            '--seconds',
            String(o.seconds),
            '--reps',
            String(o.reps),
          ],
        });
      }
    }
    if (o.engines.includes('onemodel-node')) for (const mode of o.modes) jobs.push(worker('onemodel-node', mode, t));
  }
  if (row.nudged && o.engines.includes('ort-node')) {
    // ONNX Runtime once more on the nudged inputs: its own change is the row's error floor (one timed call).
    const nudge = worker('ort-node', '-', Math.min(...o.threads));
    nudge.nudge = true;
    for (const [name, file] of Object.entries(row.nudged)) {
      const i = nudge.args.findIndex((x, k) => k > 0 && nudge.args[k - 1] === '--input' && x.startsWith(`${name}=`));
      nudge.args[i] = `${name}=${at(file)}`;
    }
    nudge.args[nudge.args.indexOf('--seconds') + 1] = '0.01';
    nudge.args[nudge.args.indexOf('--reps') + 1] = '1';
    jobs.push(nudge);
  }
  for (const t of o.threads) {
    if (o.engines.includes('ort-web')) jobs.push(worker('ort-web', '-', t));
    if (o.engines.includes('onemodel-wasm')) for (const mode of o.modes) jobs.push(worker('onemodel-wasm', mode, t));
  }
  // ORT's worker ignores --mode; keep the flag valid.
  for (const j of jobs) if (j.mode === '-') j.args[j.args.indexOf('--mode') + 1] = 'fast';
  return jobs;
}

// Runs one job in its own process (under /usr/bin/time -v when present); resolves to its record.
function runJob(job, outDir, timeoutS) {
  const useTime = existsSync(TIME);
  const args = [...job.args, '--save-outputs', outDir];
  const [cmd, argv] = useTime ? [TIME, ['-v', job.cmd, ...args]] : [job.cmd, args];
  const loadBefore = loadavg()[0];
  return new Promise((resolveJob) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutS * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const rec = { ...job, load_before: loadBefore, load_after: loadavg()[0], outDir };
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(err)?.[1];
      rec.rss_mb = kb === undefined ? undefined : Number(kb) / 1024;
      const result = parseResultLine(out);
      if (timedOut) rec.error = `timed out after ${timeoutS} s`;
      else if (code !== 0 || result === undefined) {
        const lines = err
          .split('\n')
          .filter(
            (l) =>
              l.trim() !== '' &&
              !/^\s*(Command|User time|System time|Percent|Elapsed|Average|Maximum|Major|Minor|Voluntary|Involuntary|Swaps|File system|Socket|Signals|Page size|Exit status|Command being timed)/.test(
                l,
              ),
          );
        rec.error = (lines.find((l) => /error/i.test(l)) ?? lines[0] ?? `exit status ${code}`).trim().slice(0, 200);
      } else Object.assign(rec, result);
      resolveJob(rec);
    });
  });
}

function loadOutputs(dir) {
  if (!existsSync(dir)) return undefined;
  const m = new Map();
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.npy')) m.set(f, readNpy(join(dir, f)));
  return m;
}

// Scaled error of a job's outputs against the reference job's (the worst over the outputs).
function compare(rec, ref) {
  const a = loadOutputs(rec.outDir);
  const b = loadOutputs(ref.outDir);
  if (!a || !b || b.size === 0) return undefined;
  let worst = 0;
  for (const [name, t] of b) {
    const u = a.get(name);
    worst = Math.max(worst, u === undefined ? Infinity : scaledError(u, t));
  }
  return worst;
}

// Replaces the results section of the README (between the markers) with the report.
function writeReadme(file, report) {
  const begin = '<!-- results:begin -->';
  const finish = '<!-- results:end -->';
  const old = existsSync(file) ? readFileSync(file, 'utf8') : `${begin}\n${finish}\n`;
  const a = old.indexOf(begin);
  const b = old.indexOf(finish);
  const next =
    a >= 0 && b > a
      ? `${old.slice(0, a + begin.length)}\n${report}\n${old.slice(b)}`
      : `${old.trimEnd()}\n\n${begin}\n${report}\n${finish}\n`;
  writeFileSync(file, next);
  console.error(`bench: results written to ${file}`);
}

function render(saved) {
  // JSON has no Infinity (an unusable output's error): it comes back as null.
  const records = saved.records.filter((r) => !r.nudge).map((r) => (r.err === null ? { ...r, err: Infinity } : r));
  return renderReport({ ...saved, records, start: new Date(saved.start), end: new Date(saved.end) });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.render) {
    const report = render(JSON.parse(readFileSync(o.render, 'utf8')));
    console.log(report);
    if (o.readme) writeReadme(o.readme, report);
    return;
  }
  const command = ['node', 'bench/run.mjs', ...process.argv.slice(2)].join(' ');

  if (o.engines.includes('onemodel-native') && !existsSync(o.cli)) {
    console.error(
      `run.mjs: no CLI at ${o.cli}; build it (cmake --preset native && cmake --build --preset native --target onemodel_cli) or pass --cli`,
    );
    process.exit(1);
  }
  if (
    (o.engines.includes('onemodel-wasm') || o.engines.includes('onemodel-node')) &&
    !process.env.ONEMODEL_PACKAGE &&
    !existsSync(join(root, 'dist', 'node', 'index.mjs'))
  ) {
    console.error('run.mjs: the npm package is not built (dist/node/index.mjs); run bench/setup.sh');
    process.exit(1);
  }
  if (
    (o.engines.includes('ort-node') || o.engines.includes('ort-web')) &&
    !existsSync(join(here, 'node_modules', 'onnxruntime-node'))
  ) {
    console.error('run.mjs: ONNX Runtime is not installed in bench/; run bench/setup.sh');
    process.exit(1);
  }

  const gen = spawnSync('/usr/bin/python3', [join(here, 'make_models.py'), ...(o.models ? [o.models] : [])], {
    encoding: 'utf8',
  });
  if (gen.status !== 0) {
    console.error(`run.mjs: make_models.py failed:\n${gen.stderr}`);
    process.exit(1);
  }
  const modelsDir = gen.stdout.trim();
  const manifest = JSON.parse(readFileSync(join(modelsDir, 'manifest.json'), 'utf8'));
  // Whole models (group 'models'): the real-model cache of tools/models/fetch.sh, inputs beside the layer models.
  const cache = process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel');
  const whole = wholeModelRows(o.wholeModels ?? join(cache, 'models'), join(modelsDir, 'whole'), o.cli);
  if (whole.missing.length)
    console.error(
      `bench: whole-model rows without a model file (run tools/models/fetch.sh): ${whole.missing.join(', ')}`,
    );
  const allRows = [...manifest.rows, ...whole.rows];
  const rows = allRows.filter((r) => o.rows.length === 0 || o.rows.some((s) => r.name.includes(s) || r.group === s));
  if (rows.length === 0)
    usage(`--rows ${o.rows.join(',')} selects no row (rows: ${allRows.map((r) => r.name).join(', ')})`);

  const cores = cpus().length;
  const loadStart = loadavg()[0];
  if (loadStart > cores / 2 && !o.ignoreLoad) {
    console.error(
      `run.mjs: the 1-minute load is ${loadStart.toFixed(2)}, above half of the ${cores} logical cores; ` +
        'results would not be publishable (wait, or pass --ignore-load to measure anyway)',
    );
    process.exit(1);
  }
  const jobs = rows.flatMap((r) => jobsFor(r, o, modelsDir));
  const start = new Date();
  const lock = takeLock(`onemodel bar ${rows.length} rows ${jobs.length} processes ${start.toISOString()}`);
  const info = machine(o);
  console.error(
    `bench: ${rows.length} rows, ${jobs.length} processes, ${o.seconds} s x ${o.reps} repetitions; lock ${lock}`,
  );

  const work = mkdtempSync(join(tmpdir(), 'onemodel-bench-'));
  const records = [];
  const floors = {}; // row -> ONNX Runtime's own scaled change under the one-ulp nudge (bench-method.md section 5)
  try {
    for (let i = 0; i < jobs.length; i++) {
      const job = jobs[i];
      const rec = await runJob(job, join(work, `${i}`), o.timeout);
      records.push(rec);
      const what = `${job.row} ${job.engine}${job.mode === '-' ? '' : ` ${job.mode}`} t${job.threads}`;
      console.error(
        `[${i + 1}/${jobs.length}] ${what}: ${rec.error ? `ERROR ${rec.error}` : `median ${rec.median_ms} ms, load ${rec.load_ms} ms, rss ${rec.rss_mb?.toFixed(1)} MB`}`,
      );
    }
    // Output check: each OneModel job against ONNX Runtime of its group (ort-node at the fewest threads). A row
    // with nudged inputs is bounded by ONNX Runtime's own change under the nudge, if that is above ERROR_BOUND.
    const reference = (row, engine) =>
      records
        .filter((r) => r.row === row && r.engine === engine && !r.error && !r.nudge)
        .sort((a, b) => a.threads - b.threads)[0];
    for (const rec of records) {
      if (!rec.nudge || rec.error) continue;
      const ref = reference(rec.row, 'ort-node');
      const floor = ref ? compare(rec, ref) : undefined;
      if (floor !== undefined) floors[rec.row] = floor;
    }
    for (const rec of records) {
      if (rec.error || rec.engine.startsWith('ort-')) continue;
      const ref = reference(rec.row, rec.group === 'wasm' ? 'ort-web' : 'ort-node');
      if (ref) {
        rec.err = compare(rec, ref);
        rec.wrong = rec.err === undefined || !(rec.err <= Math.max(ERROR_BOUND, floors[rec.row] ?? 0));
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  const end = new Date();
  const saved = {
    records: records.map(({ cmd, args, outDir, ...r }) => r),
    rows,
    info,
    command,
    bound: ERROR_BOUND,
    floors,
    seconds: o.seconds,
    reps: o.reps,
    loadStart,
    loadEnd: loadavg()[0],
    cores,
    start: start.toISOString(),
    end: end.toISOString(),
  };
  mkdirSync(join(root, 'build', 'bench'), { recursive: true });
  writeFileSync(join(root, 'build', 'bench', 'last-run.json'), `${JSON.stringify(saved, null, 1)}\n`);
  const report = render(saved);
  console.log(report);
  if (o.readme) writeReadme(o.readme, report);
  const wrong = records.filter((r) => r.wrong).length;
  const failed = records.filter((r) => r.error).length;
  console.error(
    `bench: done in ${((end - start) / 1000).toFixed(0)} s; ${failed} failed processes, ${wrong} outputs above the error bound`,
  );
}

main().catch((e) => {
  console.error(`run.mjs: ${e && e.stack ? e.stack : String(e)}`);
  process.exit(1);
});
