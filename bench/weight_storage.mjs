#!/usr/bin/env node
// Compact weights (docs/fp16.md section 6, issue 12): the native CLI with --weight-storage float32, float16 and
// bfloat16 on whole-model rows: load time, first call, median call, peak RSS (each run its own process under
// /usr/bin/time -v), and each compact storage's outputs against float32 storage's (scaled error
// max|x - ref| / max|ref| over every output; the gate of docs/fp16.md section 6 is 4e-3 for float16).
//
//   node bench/weight_storage.mjs [--rows minilm_b1_s128,resnet50_224] [--modes fast,exact] [--threads 1]
//                                 [--seconds S] [--cli PATH]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseResultLine } from './lib/measure.mjs';
import { readNpy, scaledError } from './lib/npy.mjs';
import { wholeModelRows } from './whole_models.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STORAGES = ['float32', 'float16', 'bfloat16'];

const o = { rows: ['minilm_b1_s128', 'resnet50_224'], modes: ['fast'], threads: 1, seconds: 1, cli: '' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const take = () => argv[++i] ?? (console.error(`${argv[i - 1]} needs a value`), process.exit(2));
  const a = argv[i];
  if (a === '--rows') o.rows = take().split(',');
  else if (a === '--modes') o.modes = take().split(',');
  else if (a === '--threads') o.threads = Number(take());
  else if (a === '--seconds') o.seconds = Number(take());
  else if (a === '--cli') o.cli = resolve(take());
  else {
    console.error(`weight_storage.mjs: unknown argument ${a}`);
    process.exit(2);
  }
}
const cli = o.cli || join(root, 'build', 'native', 'onemodel');
if (!existsSync(cli)) {
  console.error(`weight_storage.mjs: no CLI at ${cli} (cmake --build --preset native, or --cli)`);
  process.exit(2);
}
const cache = process.env.ONEMODEL_CACHE ?? join(homedir(), '.cache', 'onemodel');
const { rows: all } = wholeModelRows(join(cache, 'models'), join(cache, 'bench', 'whole'), cli);
const rows = all.filter((r) => o.rows.includes(r.name));
if (rows.length === 0) {
  console.error(`weight_storage.mjs: none of ${o.rows.join(', ')} is in the model cache (tools/models/fetch.sh)`);
  process.exit(2);
}

function outputsOf(dir) {
  const out = {};
  for (const f of readdirSync(dir)
    .filter((f) => f.endsWith('.npy'))
    .sort())
    out[f] = readNpy(join(dir, f));
  return out;
}

console.log(`CLI ${cli}, ${o.threads} thread(s), ~${o.seconds} s x 3 repetitions per run\n`);
console.log('| row | mode | storage | load ms | first ms | median ms | peak RSS MB | RSS / float32 | err vs float32 |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) {
  for (const mode of o.modes) {
    let ref;
    let refRss;
    for (const storage of STORAGES) {
      const dir = mkdtempSync(join(tmpdir(), 'onemodel-ws-'));
      const inputs = Object.entries(row.inputs).flatMap(([n, f]) => ['--input', `${n}=${f}`]);
      const args = ['bench', row.model, ...inputs, '--mode', mode, '--threads', String(o.threads)];
      args.push('--seconds', String(o.seconds), '--reps', '3', '--weight-storage', storage, '--save-outputs', dir);
      const r = spawnSync('/usr/bin/time', ['-v', cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
      const result = parseResultLine(r.stdout ?? '');
      const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? '')?.[1];
      if (r.status !== 0 || !result || !kb) {
        console.log(`| ${row.name} | ${mode} | ${storage} | failed: ${(r.stderr ?? '').split('\n')[0]} |`);
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      const rss = Number(kb) / 1024;
      const outs = outputsOf(dir);
      rmSync(dir, { recursive: true, force: true });
      let err = '-';
      if (storage === 'float32') {
        ref = outs;
        refRss = rss;
      } else if (ref) {
        err = Math.max(
          ...Object.keys(ref).map((k) => (outs[k] ? scaledError(outs[k], ref[k]) : Infinity)),
        ).toExponential(1);
      }
      const cells = [result.load_ms.toFixed(0), result.first_ms.toFixed(1), result.median_ms.toFixed(2)];
      const ratio = refRss ? (rss / refRss).toFixed(2) : '-';
      console.log(
        `| ${row.name} | ${mode} | ${storage} | ${cells.join(' | ')} | ${rss.toFixed(0)} | ${ratio} | ${err} |`,
      );
    }
  }
}
