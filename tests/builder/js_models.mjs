// The MLP, small CNN and two-layer transformer encoder of issue 14 written in JavaScript, each in both APIs: built
// with GraphBuilder (GraphValue) and traced from eager code (EagerValue). One model function serves both, since both
// value kinds have the same operator methods. writeJsModels(dir) writes them in tests/builder/zoo.cc's layout
// (model.onnx, in<k>_<input>.npy, fast<k>_<i>.npy, exact<k>_<i>.npy) for tests/builder/oracle.mjs: built models'
// outputs come from their sessions on this package, traced ones from the eager run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeNpy } from '../../bench/lib/npy.mjs';

let seed = 12345;
function random() {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648 - 0.5;
}

const SIZES = [
  { B: 2, S: 5, N: 2, H: 16, W: 20 },
  { B: 3, S: 7, N: 3, H: 23, W: 18 },
];

function modelDefs(om) {
  const f32 = (dims, scale = 0.5) =>
    new om.Tensor(
      'float32',
      Float32Array.from({ length: dims.reduce((a, b) => a * b, 1) }, () => random() * scale * 2),
      dims,
    );
  const attention = (x, p, d, heads) => {
    const split = (t) => t.reshape([0, 0, heads, d / heads]).transpose([0, 2, 1, 3]);
    const q = split(x.matMul(p.wq));
    const k = split(x.matMul(p.wk));
    const v = split(x.matMul(p.wv));
    const scores = q
      .matMul(k.transpose([0, 1, 3, 2]))
      .mul(p.scale)
      .softmax(-1);
    return scores.matMul(v).transpose([0, 2, 1, 3]).reshape([0, 0, d]).matMul(p.wo);
  };
  return [
    {
      name: 'mlp',
      inputs: [{ name: 'x', type: 'float32', dims: ['B', 'S', 12] }],
      weights: { w1: f32([12, 16]), b1: f32([16], 0.1), w2: f32([16, 4]) },
      run: ([x], p) => ({ probs: x.matMul(p.w1).add(p.b1).gelu().matMul(p.w2).softmax() }),
    },
    {
      name: 'cnn',
      inputs: [{ name: 'image', type: 'float32', dims: ['N', 3, 'H', 'W'] }],
      weights: {
        c1: f32([8, 3, 3, 3]),
        b1: f32([8], 0.1),
        c2: f32([16, 8, 3, 3], 0.2),
        b2: f32([16], 0.1),
        fc: f32([16, 5]),
      },
      run: ([x], p) => {
        let h = x.conv(p.c1, p.b1, { pads: [1, 1, 1, 1] }).relu();
        h = h.maxPool({ kernelShape: [2, 2], strides: [2, 2] });
        h = h.conv(p.c2, p.b2, { strides: [2, 2], pads: [1, 1, 1, 1] }).relu();
        return { logits: h.reduceMean([2, 3], false).matMul(p.fc) };
      },
    },
    {
      name: 'transformer',
      inputs: [{ name: 'ids', type: 'int64', dims: ['B', 'S'], range: 20 }],
      weights: {
        table: f32([20, 16]),
        wq: f32([16, 16]),
        wk: f32([16, 16]),
        wv: f32([16, 16]),
        wo: f32([16, 16]),
        scale: new om.Tensor('float32', Float32Array.from([1 / Math.sqrt(8)]), []),
        g: f32([16], 0.2),
        beta: f32([16], 0.1),
        f1: f32([16, 32]),
        f2: f32([32, 16]),
      },
      run: ([ids], p) => {
        let x = p.table.gather(ids);
        for (let layer = 0; layer < 2; layer++) {
          x = x.add(attention(x.layerNormalization(p.g, p.beta), p, 16, 2));
          x = x.add(x.layerNormalization(p.g, p.beta).matMul(p.f1).gelu().matMul(p.f2));
        }
        return { hidden: x };
      },
    },
  ];
}

function inputFor(om, spec, sizes) {
  const dims = spec.dims.map((d) => (typeof d === 'string' ? sizes[d] : d));
  const n = dims.reduce((a, b) => a * b, 1);
  if (spec.type === 'int64') {
    return new om.Tensor(
      'int64',
      BigInt64Array.from({ length: n }, () => BigInt(Math.floor((random() + 0.5) * spec.range))),
      dims,
    );
  }
  return new om.Tensor(
    'float32',
    Float32Array.from({ length: n }, () => random() * 2),
    dims,
  );
}

const npy = (file, t) => writeNpy(file, { type: t.type, dims: [...t.dims], data: t.data });

/** Writes js_built_<model> and js_traced_<model> into `dir`; returns their names. */
export async function writeJsModels(om, dir) {
  await om.GraphBuilder.ready();
  const written = [];
  for (const def of modelDefs(om)) {
    const inputs = SIZES.map((s) => def.inputs.map((spec) => inputFor(om, spec, s)));
    // Built: the model function on GraphValues.
    {
      const out = join(dir, `js_built_${def.name}`);
      mkdirSync(out, { recursive: true });
      const b = new om.GraphBuilder();
      const xs = def.inputs.map((spec) => b.input(spec.name, spec.type, spec.dims));
      const params = Object.fromEntries(Object.entries(def.weights).map(([k, t]) => [k, b.constant(t, k)]));
      const outputs = def.run(xs, params);
      writeFileSync(join(out, 'model.onnx'), b.toOnnx(outputs));
      for (const mode of ['fast', 'exact']) {
        const session = await b.createSession(outputs, { mode });
        for (let k = 0; k < SIZES.length; k++) {
          const feeds = Object.fromEntries(def.inputs.map((spec, i) => [spec.name, inputs[k][i]]));
          if (mode === 'fast') def.inputs.forEach((spec, i) => npy(join(out, `in${k}_${spec.name}.npy`), inputs[k][i]));
          const result = await session.run(feeds);
          session.outputNames.forEach((name, i) => npy(join(out, `${mode}${k}_${i}.npy`), result[name]));
        }
        await session.release();
      }
      written.push(`js_built_${def.name}`);
    }
    // Traced: the same function on EagerValues, traced at the first sizes.
    {
      const out = join(dir, `js_traced_${def.name}`);
      mkdirSync(out, { recursive: true });
      const eagerParams = Object.fromEntries(Object.entries(def.weights).map(([k, t]) => [k, om.EagerValue.from(t)]));
      const tracer = om.Tracer.begin();
      try {
        for (const [k, v] of Object.entries(eagerParams)) tracer.parameter(k, v);
        const xs = def.inputs.map((spec, i) =>
          tracer.input(
            spec.name,
            inputs[0][i],
            spec.dims.map((d) => (typeof d === 'string' ? d : null)),
          ),
        );
        writeFileSync(join(out, 'model.onnx'), tracer.finish(def.run(xs, eagerParams)).onnx);
      } finally {
        tracer.end();
      }
      for (const mode of ['fast', 'exact']) {
        om.setEagerMode(mode);
        for (let k = 0; k < SIZES.length; k++) {
          if (mode === 'fast') def.inputs.forEach((spec, i) => npy(join(out, `in${k}_${spec.name}.npy`), inputs[k][i]));
          const result = def.run(
            inputs[k].map((t) => om.EagerValue.from(t)),
            eagerParams,
          );
          Object.values(result).forEach((v, i) => npy(join(out, `${mode}${k}_${i}.npy`), v.toTensor()));
        }
      }
      om.setEagerMode('fast');
      written.push(`js_traced_${def.name}`);
    }
  }
  return written;
}
