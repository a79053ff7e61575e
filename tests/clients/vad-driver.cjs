// Driver of tests/clients/run.mjs for @ricky0123/vad-node (the client's code is used as published): reads a
// 16-bit PCM WAV, pads half a second of silence on each side, prints the speech segments the client finds,
// the time it took, and which package `onnxruntime-node` resolved to.
const fs = require('fs');
const { NonRealTimeVAD } = require('@ricky0123/vad-node');

function readWav(file) {
  const b = fs.readFileSync(file);
  let off = 12;
  let rate = 0;
  let data;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4);
    const size = b.readUInt32LE(off + 4);
    if (id === 'fmt ') rate = b.readUInt32LE(off + 12);
    if (id === 'data') data = b.subarray(off + 8, off + 8 + size);
    off += 8 + size + (size & 1);
  }
  const out = new Float32Array(data.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = data.readInt16LE(2 * i) / 32768;
  return { audio: out, rate };
}

(async () => {
  const { audio, rate } = readWav(process.argv[2]);
  const padded = new Float32Array(audio.length + rate);
  padded.set(audio, rate / 2);
  const backend = require('onnxruntime-node/package.json');
  const vad = await NonRealTimeVAD.new();
  const segments = [];
  const t0 = Date.now();
  for await (const { audio: a, start, end } of vad.run(padded, rate)) segments.push({ start, end, samples: a.length });
  console.log(JSON.stringify({ segments, ms: Date.now() - t0, backend: `${backend.name}@${backend.version}` }));
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
