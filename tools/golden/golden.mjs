// Golden-hash harness (golden-hashes.md; usage in tools/golden/README.md). Runs the cases of
// testdata/golden/cases.txt in exact mode on every row this machine offers (rows.mjs), compares the rows line
// by line and prints a table <case>/<output> x row of `equal` / `UNEQUAL`. Exit status 1 on any difference.
//
//   node tools/golden/golden.mjs [--rows native,node,node-native,chromium,arm64] [--filter SUBSTR]...
//                                [--exclude SUBSTR]... [--cases FILE] [--save FILE] [--check EXPECTED]
//                                [--write-expected FILE] [--strict] [--merge FILE...]
// The arm64 rows (the aarch64 CLI under qemu-aarch64, docs/arm64.md) run only when asked for with --rows.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, homedir, hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadBackendCase, loadRealModelCase, makeInputLoader, readCases } from './cases.mjs';
import {
  ARM64_ISAS,
  addonPath,
  chromiumRow,
  findArm64Cli,
  findCli,
  nativeIsas,
  nativeRows,
  nodeRow,
  packageBuilt,
} from './rows.mjs';
import { CANNOT_RUN_MARKER } from './run-case.mjs';
import { chromiumPath } from '../chromium.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const skippedRows = []; // notes on requested row kinds that could not run here

function usage(msg) {
  if (msg) console.error(`golden: ${msg}`);
  console.error(
    'usage: golden.mjs [--rows native,node,node-native,chromium,arm64] [--filter SUBSTR]... [--exclude SUBSTR]...\n' +
      '                  [--cases FILE] [--save FILE] [--check EXPECTED] [--write-expected FILE] [--strict]\n' +
      '                  [--merge FILE...]',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const a = {
    rows: ['native', 'node', 'node-native', 'chromium'],
    filters: [],
    excludes: [],
    cases: join(root, 'testdata', 'golden', 'cases.txt'),
    merge: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${arg} needs a value`));
    if (arg === '--rows') a.rows = value().split(',').filter(Boolean);
    else if (arg === '--filter') a.filters.push(value());
    else if (arg === '--exclude') a.excludes.push(value());
    else if (arg === '--cases') a.cases = resolve(value());
    else if (arg === '--save') a.save = resolve(value());
    else if (arg === '--check') a.check = resolve(value());
    else if (arg === '--write-expected') a.writeExpected = resolve(value());
    else if (arg === '--strict') a.strict = true;
    else if (arg === '--merge') {
      while (i + 1 < argv.length && !argv[i + 1].startsWith('--')) a.merge.push(resolve(argv[++i]));
      if (a.merge.length === 0) usage('--merge needs at least one FILE');
    } else if (arg === '--help' || arg === '-h') usage();
    else usage(`unknown argument '${arg}'`);
  }
  for (const r of a.rows)
    if (!['native', 'node', 'node-native', 'chromium', 'arm64'].includes(r)) usage(`unknown row kind '${r}'`);
  return a;
}

/** Reads `<key> <value>` lines (expected-hash files and the sections of saved results). */
function parseLines(text, file) {
  const sections = new Map();
  let current = '';
  let machine;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const m = /^# machine: (\S+)/.exec(line);
    if (m) machine = m[1];
    if (line === '' || line.startsWith('#')) continue;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      current = sec[1];
      continue;
    }
    const kv = /^(\S+) (\S+)$/.exec(line);
    if (!kv) throw new Error(`${file}: cannot read line '${line}'`);
    if (!sections.has(current)) sections.set(current, new Map());
    sections.get(current).set(kv[1], kv[2]);
  }
  return { machine, sections };
}

function formatRow(row) {
  return [...row].map(([k, v]) => `${k} ${v}`).join('\n') + '\n';
}

/** Runs the rows this machine offers on the loaded cases; returns Map rowName -> Map key -> value. */
async function runRows(args, loaded, notes) {
  const rows = new Map();
  const skip = (note) => {
    notes.push(note);
    skippedRows.push(note);
  };
  const timed = async (label, fn) => {
    const t0 = Date.now();
    const r = await fn();
    console.error(`golden: ${label} done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return r;
  };
  if (args.rows.includes('native')) {
    const cli = findCli(root);
    if (!cli) skip('native rows skipped: build/native/onemodel is not built (tools/setup.sh builds it)');
    else {
      const isas = await nativeIsas(cli, root);
      for (const [k, v] of await timed(`native rows (${isas.join(', ')}; 1 and 2 threads)`, () =>
        nativeRows(cli, root, loaded, isas),
      ))
        rows.set(k, v);
    }
  }
  if (args.rows.includes('arm64')) {
    const cmd = findArm64Cli(root);
    if (!cmd) skip('arm64 rows skipped: needs build/arm64/onemodel (tools/arm64/build.sh) and qemu-aarch64');
    else {
      // Both targets must be reported by the aarch64 CLI itself (its "kernels:" line), so a build without the
      // NEON target cannot pass as the scalar one.
      const isas = await nativeIsas(cmd, root, ARM64_ISAS);
      if (isas.length !== ARM64_ISAS.length)
        skip(`arm64 rows skipped: the aarch64 CLI offers ${isas.join(', ') || 'nothing'}, not scalar and neon`);
      else
        for (const [k, v] of await timed('arm64 rows (qemu-aarch64: scalar, neon; 1 and 2 threads)', () =>
          nativeRows(cmd, root, loaded, isas, [1, 2], 'arm64'),
        ))
          rows.set(k, v);
    }
  }
  const built = packageBuilt(root);
  if (args.rows.includes('node')) {
    if (!built) skip('node rows skipped: dist/ is not built (npm run build)');
    else {
      // The wasm engine is loaded once per process with env.wasm.numThreads threads (docs/wasm-threads.md):
      // 2, of which the `node` row's sessions ask for one and the `node-t2` row's for both.
      for (const threads of [1, 2]) {
        rows.set(
          threads === 1 ? 'node' : `node-t${threads}`,
          await timed(`node row (wasm), ${threads} thread(s)`, () =>
            nodeRow(root, loaded, { executionProviders: ['wasm'], intraOpNumThreads: threads }, 'wasm'),
          ),
        );
      }
    }
  }
  if (args.rows.includes('node-native')) {
    if (!built) skip('node-native rows skipped: dist/ is not built (npm run build)');
    else if (!existsSync(addonPath(root)))
      skip(`node-native rows skipped: ${addonPath(root)} is not built (tools/setup.sh builds it)`);
    else {
      for (const threads of [1, 2]) {
        rows.set(
          `node-native-t${threads}`,
          await timed(`node-native row, ${threads} thread(s)`, () =>
            nodeRow(root, loaded, { executionProviders: ['cpu'], intraOpNumThreads: threads }, 'native'),
          ),
        );
      }
    }
  }
  if (args.rows.includes('chromium')) {
    let playwright = true;
    try {
      await import('playwright-core');
    } catch {
      playwright = false;
    }
    if (!built) skip('chromium row skipped: dist/ is not built (npm run build)');
    else if (!existsSync(chromiumPath) || !playwright)
      skip(`chromium row skipped: needs ${chromiumPath} and playwright-core`);
    else
      for (const threads of [1, 2])
        rows.set(
          threads === 1 ? 'chromium' : `chromium-t${threads}`,
          await timed(`chromium row, ${threads} wasm thread(s)`, () => chromiumRow(root, loaded, threads)),
        );
  }
  return rows;
}

/**
 * Loads every case's inputs. Backend-test cases come from $ONEMODEL_BACKEND_DATA (else the cache directory
 * tools/gen_backend_data.py writes); when that data is absent they are skipped, and their lines are left
 * out of every comparison. Returns {loaded, skipped: [case names]}.
 */
async function loadCases(cases, notes) {
  const load = makeInputLoader(root);
  const dataDir = process.env.ONEMODEL_BACKEND_DATA || join(homedir(), '.cache', 'onemodel', 'onnx-backend-1.12.0');
  const loaded = [];
  const skipped = [];
  for (const c of cases) {
    if (c.realModel) {
      const m = await loadRealModelCase(c);
      if (m) loaded.push(m);
      else {
        skipped.push(c.name);
        notes.push(`${c.name} skipped: not in the model cache (tools/models/fetch.sh)`);
      }
      continue;
    }
    if (!c.backend) {
      loaded.push({ ...c, modelPath: c.model, inputs: c.inputs.map((i) => ({ name: i.name, ...load(i.source) })) });
      continue;
    }
    if (!existsSync(join(dataDir, c.backend, 'model.onnx'))) {
      skipped.push(c.name);
      continue;
    }
    try {
      loaded.push(loadBackendCase(dataDir, c));
    } catch (e) {
      notes.push(`backend case ${c.name} skipped: ${e.message}`);
      skipped.push(c.name);
    }
  }
  const absent = skipped.length - notes.filter((n) => n.startsWith('backend case') || n.startsWith('model/')).length;
  if (absent)
    notes.push(`${absent} backend-test cases skipped: no data in ${dataDir} (python3 tools/gen_backend_data.py)`);
  return { loaded, skipped };
}

/**
 * Prints the table and returns the number of keys where some row differs from the reference (the expected
 * file when given, else the first row). Each cell: equal / UNEQUAL / missing, or `new` for an expected
 * cannot-run marker that every row now runs to one hash.
 */
function compare(rows, keys, expected) {
  const names = [...rows.keys()];
  const refName = expected ? 'expected' : names[0];
  const ref = expected ?? rows.get(names[0]);
  console.log(`reference: ${refName}`);
  names.forEach((n, i) => console.log(`  [${i + 1}] ${n}`));
  const width = Math.max(20, ...keys.map((k) => k.length)) + 2;
  console.log('case/output'.padEnd(width) + names.map((_, i) => `[${i + 1}]`.padEnd(9)).join('') + 'reference');
  let bad = 0;
  let cannotRun = 0;
  let newlyRun = 0;
  for (const key of keys) {
    let want = ref.get(key);
    // A case the expected file marks "cannot run" that every row now runs to the same hash is an operator
    // that gained an exact kernel: not a difference (the rows still agree), but the file is out of date.
    const first = rows.get(names[0]).get(key);
    const isNew =
      expected &&
      want === CANNOT_RUN_MARKER &&
      /^[0-9a-f]{64}$/.test(first ?? '') &&
      first !== CANNOT_RUN_MARKER &&
      names.every((n) => rows.get(n).get(key) === first);
    if (isNew) {
      newlyRun++;
      want = first;
    }
    let differs = want === undefined;
    const cells = names.map((n) => {
      const got = rows.get(n).get(key);
      if (got === undefined) {
        differs = true;
        return 'missing';
      }
      if (got !== want) {
        differs = true;
        return 'UNEQUAL';
      }
      return isNew ? 'new' : 'equal';
    });
    if (differs) bad++;
    if (want === CANNOT_RUN_MARKER) cannotRun++;
    const shown =
      want === undefined
        ? '(none)'
        : want === CANNOT_RUN_MARKER
          ? 'cannot run (marker)'
          : isNew
            ? `${want.slice(0, 16)} (expected: cannot run)`
            : want.slice(0, 16);
    console.log(key.padEnd(width) + cells.map((c) => c.padEnd(9)).join('') + shown);
    if (differs) {
      for (const n of names) {
        const got = rows.get(n).get(key);
        if (got !== want) console.log(`    ${n}: ${got ?? '(missing)'}   reference: ${want ?? '(missing)'}`);
      }
    }
  }
  console.log(
    `golden: ${keys.length} lines x ${names.length} rows, ${cannotRun} cannot run (marker), ${bad} with differences`,
  );
  if (newlyRun) {
    console.log(
      `golden: ${newlyRun} lines the expected file marks "cannot run" now run, equal on every row: ` +
        'regenerate it with --write-expected (tools/golden/README.md)',
    );
  }
  return bad;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let rows = new Map();
  let keys = [];
  let skippedCases = [];
  if (args.merge.length) {
    // Saved results of several machines: row names get the machine label (or the file's index).
    args.merge.forEach((file, fi) => {
      const { machine, sections } = parseLines(readFileSync(file, 'utf8'), file);
      const label = machine ?? `file${fi + 1}`;
      for (const [name, row] of sections) {
        let key = `${label}:${name || 'row'}`;
        while (rows.has(key)) key += "'";
        rows.set(key, row);
        for (const k of row.keys()) if (!keys.includes(k)) keys.push(k);
      }
    });
  } else {
    let cases = readCases(args.cases);
    if (args.filters.length) cases = cases.filter((c) => args.filters.some((f) => c.name.includes(f)));
    if (args.excludes.length) cases = cases.filter((c) => !args.excludes.some((f) => c.name.includes(f)));
    if (cases.length === 0) usage('no case matches');
    const notes = [];
    const { loaded, skipped } = await loadCases(cases, notes);
    skippedCases = skipped;
    rows = await runRows(args, loaded, notes);
    for (const n of notes) console.log(`golden: ${n}`);
    for (const c of loaded) {
      for (const i of c.inputs) keys.push(`${c.name}/input:${i.name}`);
      for (const o of c.outputs) keys.push(`${c.name}/${o}`);
    }
    if (args.save) {
      const cpu = cpus()[0]?.model?.replace(/\s+/g, ' ') ?? 'unknown cpu';
      let text = `# onemodel golden results (tools/golden/golden.mjs --save)\n# machine: ${hostname()} ${process.platform}-${process.arch}, ${cpu}\n`;
      for (const [name, row] of rows) text += `[${name}]\n${formatRow(row)}`;
      writeFileSync(args.save, text);
      console.log(`golden: saved ${rows.size} rows to ${args.save}`);
    }
  }
  if (rows.size === 0) {
    console.log('golden: no row could run');
    return 1;
  }
  let expected;
  if (args.check) {
    expected = parseLines(readFileSync(args.check, 'utf8'), args.check).sections.get('') ?? new Map();
    // Keys only the expected file has (a case that no longer ran) count as differences too.
    // Lines of skipped backend-test cases (no data on this machine) are not compared.
    const skippedKey = (k) => skippedCases.some((name) => k.startsWith(`${name}/`));
    if (!args.filters.length && !args.excludes.length)
      for (const k of expected.keys()) if (!keys.includes(k) && !skippedKey(k)) keys.push(k);
  }
  let bad = compare(rows, keys, expected);
  if (args.strict && skippedRows.length) {
    // --strict (tools/test.sh): a row this machine should offer but could not run is a failure.
    console.log(`golden: --strict: ${skippedRows.length} requested row kinds did not run`);
    bad += skippedRows.length;
  }
  if (args.check) console.log(`golden: ${keys.length - bad} passed, ${bad} failed`);
  if (args.writeExpected) {
    if (bad) {
      console.log('golden: rows differ, not writing the expected hashes');
      return 1;
    }
    const first = rows.get([...rows.keys()].find((n) => n.startsWith('native-scalar-')) ?? [...rows.keys()][0]);
    const text =
      '# Exact-mode golden hashes of testdata/golden/cases.txt (tools/golden/golden.mjs --write-expected).\n' +
      `# Rows that agreed when written: ${[...rows.keys()].join(' ')}\n# Do not edit by hand.\n` +
      keys.map((k) => `${k} ${first.get(k)}`).join('\n') +
      '\n';
    writeFileSync(args.writeExpected, text);
    console.log(`golden: wrote ${keys.length} expected hashes to ${args.writeExpected}`);
  }
  return bad ? 1 : 0;
}

process.exitCode = await main().catch((e) => {
  console.error(`golden: ${e?.stack ?? e}`);
  console.log('golden: 0 passed, 1 failed');
  return 1;
});
