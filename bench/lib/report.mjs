// Markdown report of a bar run (bench/run.mjs): the machine record, one table per engine group with the
// ratios the pass criteria use (ours / ONNX Runtime, exact / fast), and every process's raw numbers.

function ms(v) {
  if (v === undefined) return '–';
  if (v >= 100) return v.toFixed(0);
  if (v >= 10) return v.toFixed(1);
  if (v >= 1) return v.toFixed(2);
  return v.toFixed(3);
}

function spreadPct(r) {
  return r.median_ms > 0 ? (100 * (r.max_ms - r.min_ms)) / r.median_ms : 0;
}

// A time cell: median and spread, or a numbered note saying what went wrong. `notes` maps each distinct
// error message to its number and the processes that hit it, so 40 rows failing alike make one note.
function timeCell(r, notes) {
  if (r === undefined) return '–';
  if (r.error) {
    if (!notes.has(r.error)) notes.set(r.error, { n: notes.size + 1, count: 0 });
    const note = notes.get(r.error);
    note.count++;
    return `error [${note.n}]`;
  }
  return `${ms(r.median_ms)} ±${spreadPct(r).toFixed(0)}%`;
}

// Ours / theirs; a wrong answer has no ratio (it is not a result).
function ratio(a, b) {
  if (!a || !b || a.error || b.error || a.wrong || b.wrong) return '–';
  return (a.median_ms / b.median_ms).toFixed(2);
}

function errCell(r) {
  if (!r || r.error) return '–';
  if (r.engine.startsWith('ort-')) return 'ref';
  if (r.err === undefined) return r.wrong ? '**no outputs**' : 'n/a';
  const text = r.err === 0 ? '0' : r.err.toExponential(1);
  return r.wrong ? `**${text} WRONG**` : text;
}

function rss(r) {
  return r && !r.error && r.rss_mb !== undefined ? r.rss_mb.toFixed(0) : '–';
}

function find(records, row, engine, mode, threads) {
  return records.find(
    (r) => r.row === row && r.engine === engine && (mode === '-' || r.mode === mode) && r.threads === threads,
  );
}

// Counts for the pass criteria: ours / ORT <= 1.5 passes, <= 1.15 meets the target.
function criteria(pairs) {
  const valid = pairs.filter(([a, b]) => ratio(a, b) !== '–');
  const r = valid.map(([a, b]) => a.median_ms / b.median_ms);
  return `${r.filter((x) => x <= 1.5).length}/${valid.length} within 1.5×, ${r.filter((x) => x <= 1.15).length}/${valid.length} within 1.15×`;
}

// The engine groups: OneModel's engine (fast and exact) against the ONNX Runtime of the same setting.
const GROUPS = [
  {
    group: 'native',
    title: 'Native: `onemodel bench` (Release) vs onnxruntime-node',
    ref: 'ort-node',
    ours: 'onemodel-native',
    refName: 'ORT',
  },
  {
    group: 'node',
    title:
      "Node: the npm package on its native addon (`executionProviders: ['cpu']`, the default in Node) vs onnxruntime-node",
    ref: 'ort-node',
    ours: 'onemodel-node',
    refName: 'ORT',
  },
  {
    group: 'wasm',
    title:
      'WebAssembly in Node: the npm package vs onnxruntime-web (wasm backend, SIMD, threads as env.wasm.numThreads)',
    ref: 'ort-web',
    ours: 'onemodel-wasm',
    refName: 'ORT-web',
  },
];

// One group's table: per row and thread count, the times, ratios, errors and peak RSS.
function groupTable(g, recs, records, rows, notes) {
  const out = [`#### ${g.title}`, ''];
  out.push(
    `| row | MMAC | thr | ${g.refName} ms | fast ms | exact ms | fast/ORT | exact/ORT | exact/fast | err fast | err exact | peak RSS MB ORT/fast/exact |`,
  );
  out.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const pairsFast = [];
  const pairsExact = [];
  const threads = [...new Set(recs.map((r) => r.threads))].sort((a, b) => a - b);
  for (const row of rows) {
    for (const t of threads) {
      const ort = find(records, row.name, g.ref, '-', t);
      const fast = find(records, row.name, g.ours, 'fast', t);
      const exact = find(records, row.name, g.ours, 'exact', t);
      if (!fast && !exact) continue;
      pairsFast.push([fast, ort]);
      pairsExact.push([exact, ort]);
      out.push(
        `| ${row.name} | ${row.macs ? (row.macs / 1e6).toFixed(1) : '—'} | ${t} | ${timeCell(ort, notes)} | ${timeCell(fast, notes)} | ` +
          `${timeCell(exact, notes)} | ${ratio(fast, ort)} | ${ratio(exact, ort)} | ${ratio(exact, fast)} | ${errCell(fast)} | ` +
          `${errCell(exact)} | ${rss(ort)}/${rss(fast)}/${rss(exact)} |`,
      );
    }
  }
  out.push(
    '',
    `Pass criteria (time ≤ 1.5× ${g.refName} passes, ≤ 1.15× meets the target): fast ${criteria(pairsFast)}; ` +
      `exact ${criteria(pairsExact)}.`,
    '',
  );
  return out;
}

export function renderReport({
  records,
  rows,
  info,
  command,
  bound,
  floors = {},
  seconds,
  reps,
  loadStart,
  loadEnd,
  cores,
  start,
  end,
}) {
  const out = [];
  const notes = new Map();
  const loaded = Math.max(loadStart, loadEnd) > cores / 2;
  out.push('### Results', '');
  out.push(`Command: \`${command}\``, '');
  out.push(`- Machine: ${info.cpu}, ${info.logical_cores} logical processors, ISA: ${info.isa}`);
  out.push(`- OS: ${info.os}; Node ${info.node}; ${info.ort}; ${info.onemodel}`);
  out.push(
    `- Run: ${start.toISOString().slice(0, 16)}–${end.toISOString().slice(11, 16)} UTC ` +
      `(${((end - start) / 60000).toFixed(1)} min), 1-minute load ${loadStart.toFixed(2)} before, ${loadEnd.toFixed(2)} after`,
  );
  if (loaded) {
    out.push(
      `- **Measured while the machine was loaded (1-minute load above ${cores / 2}): the numbers show the ` +
        'shape of the comparison, not publishable timings.**',
    );
  }
  out.push(
    '',
    `Cells: median time per call in ms over ${reps} repetitions of ~${seconds} s, ±spread = (max − min) / median. ` +
      `Ratios below 1 mean OneModel is faster. err = max|ours − ORT| / max|ORT| on the same inputs, **WRONG** above ${bound} ` +
      '(a wrong answer gets no ratio). MMAC = millions of multiply-adds per call.',
  );
  for (const [row, floor] of Object.entries(floors))
    out.push(
      `${row}: **WRONG** above ${floor.toExponential(1)} instead, ONNX Runtime's own err when every input value moves ` +
        'by one ulp (dynamic quantization turns rounding into quantization steps; docs/bench-method.md section 5).',
    );
  out.push('');

  for (const g of GROUPS) {
    const recs = records.filter((r) => r.group === g.group);
    if (recs.length > 0) out.push(...groupTable(g, recs, records, rows, notes));
  }

  const reshaped = records.filter((r) => r.reshape_first_ms !== undefined);
  if (reshaped.length > 0) {
    out.push(
      '#### First call at a new input shape (plan building; OCR runs its recogniser at a new width per text line)',
      '',
    );
    out.push(
      'Each process, after its repetitions, switches to inputs of another shape: the first call there, the fastest of ' +
        'up to 20 calls after it, and their ratio (target ≤ 1.5).',
      '',
    );
    out.push('| row | engine | mode | thr | first at new shape ms | warm ms | first/warm |');
    out.push('|---|---|---|---:|---:|---:|---:|');
    for (const r of reshaped) {
      out.push(
        `| ${r.row} | ${r.engine} | ${r.mode} | ${r.threads} | ${ms(r.reshape_first_ms)} | ${ms(r.reshape_min_ms)} | ` +
          `${(r.reshape_first_ms / r.reshape_min_ms).toFixed(2)} |`,
      );
    }
    out.push('');
  }

  if (notes.size > 0) {
    out.push('Errors:', '');
    for (const [message, { n, count }] of notes) {
      out.push(`${n}. ${message.replace(/\|/g, '\\|')} (${count} process${count === 1 ? '' : 'es'})`);
    }
    out.push('');
  }

  out.push(
    '<details><summary>Every process: load, first call, repetitions, peak RSS, 1-minute load before/after</summary>',
    '',
  );
  out.push(
    '| row | engine | mode | thr | load ms | first ms | median ms | min ms | max ms | spread % | RSS MB | load avg | err |',
  );
  out.push('|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  for (const r of records) {
    const t = r.error
      ? `| error | | | | | |`
      : `| ${ms(r.load_ms)} | ${ms(r.first_ms)} | ${ms(r.median_ms)} | ${ms(r.min_ms)} | ${ms(r.max_ms)} | ${spreadPct(r).toFixed(1)} |`;
    out.push(
      `| ${r.row} | ${r.engine} | ${r.mode} | ${r.threads} ${t} ${rss(r)} | ${r.load_before.toFixed(2)}/${r.load_after.toFixed(2)} | ${errCell(r)} |`,
    );
  }
  out.push('', '</details>');
  return out.join('\n');
}
