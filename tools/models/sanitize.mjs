// The real models under AddressSanitizer + UndefinedBehaviorSanitizer: the first input set of each model of
// cases.mjs through the ASan CLI (build/native-asan/onemodel), fast and exact, 2 threads. Real exports reach
// paths the unit tests' small models do not (Constant tensors at odd file offsets, subgraphs, every pass).
// A run passes when it exits 0 and the sanitizers printed nothing. Prints `sanitize: N passed, M failed`.
// ISNet medium (float16 at 1024 x 1024) took 150 s of about 185 under the sanitizers, a twentieth of the CI budget;
// rec16 and minilm16 keep the float16 widening under them, so it runs only with --all (or
// ONEMODEL_TEST_MODELS_FULL=1).
//
//   node tools/models/sanitize.mjs [--cli build/native-asan/onemodel] [--only det,vad] [--all]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ROOT } from '../../tests/js/helpers.mjs';
import { writeNpy } from '../../tests/js/native-cli.mjs';
import { cases } from './cases.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const cli = opt('--cli', join(ROOT, 'build', 'native-asan', 'onemodel'));
const only = opt('--only', '').split(',').filter(Boolean);
const heavy = new Set(['isnet16']);
const all = args.includes('--all') || process.env.ONEMODEL_TEST_MODELS_FULL === '1';
if (!existsSync(cli))
  throw new Error(`no ASan CLI at ${cli}: cmake --preset native-asan && cmake --build --preset native-asan`);
const modelDir = spawnSync(join(ROOT, 'tools', 'models', 'fetch.sh'), { encoding: 'utf8' })
  .stdout.trim()
  .split('\n')
  .pop();

const work = mkdtempSync(join(tmpdir(), 'onemodel-sanitize-'));
const env = {
  ...process.env,
  ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:strict_string_checks=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};
let passed = 0;
let failed = 0;
const seen = new Set();
for (const c of cases(modelDir)) {
  if (seen.has(c.model) || (only.length && !only.includes(c.model))) continue;
  seen.add(c.model);
  if (heavy.has(c.model) && !all && !only.includes(c.model)) {
    console.log(`skip ${c.model} (--all or ONEMODEL_TEST_MODELS_FULL=1 runs it)`);
    continue;
  }
  const argv = ['run', c.file, '--threads', '2'];
  for (const [name, t] of Object.entries(c.steps()[0].feeds)) {
    const file = join(work, `${c.model}-${name}.npy`);
    writeNpy(file, t.type, t.data, t.dims);
    argv.push('--input', `${name}=${file}`);
  }
  for (const mode of ['fast', 'exact']) {
    const r = spawnSync(cli, [...argv, '--mode', mode], { encoding: 'utf8', env, maxBuffer: 1 << 26 });
    const report = /runtime error|AddressSanitizer|LeakSanitizer/.test(r.stderr ?? '');
    const ok = r.status === 0 && !report;
    ok ? ++passed : ++failed;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${c.model} ${mode}${ok ? '' : `: exit ${r.status}\n${(r.stderr ?? '').slice(0, 3000)}`}`,
    );
  }
}
rmSync(work, { recursive: true, force: true });
console.log(`sanitize: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
