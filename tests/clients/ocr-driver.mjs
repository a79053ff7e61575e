// Driver of tests/clients/run.mjs for @gutenye/ocr-node (the client's code is used as published): prints the
// lines it reads from an image (text, mean score, box), the time detect() took, and which package
// `onnxruntime-node` resolved to.
import { createRequire } from 'node:module';

import Ocr from '@gutenye/ocr-node';

const backend = createRequire(import.meta.url)('onnxruntime-node/package.json');
const ocr = await Ocr.create();
const t0 = Date.now();
const lines = await ocr.detect(process.argv[2]);
const ms = Date.now() - t0;
console.log(
  JSON.stringify({
    lines: lines.map((l) => ({ text: l.text, mean: Number(l.mean.toFixed(4)), box: l.box })),
    ms,
    backend: `${backend.name}@${backend.version}`,
  }),
);
