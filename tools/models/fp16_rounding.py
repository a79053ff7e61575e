#!/usr/bin/python3
"""Where a float16 model's error comes from (docs/fp16.md section 5): emulates half-precision storage on the
float32 model, so each rounding point can be switched on or off, and prints each variant's scaled error against
the float32 model's output (max |variant - float32| / max |float32|, and the same with the root mean square).

Every variant has the float32 model's weights (initializers and Constant nodes) rounded to float16 (finite values
beyond float16's range clamped to +-65504, as tools/models/to_fp16.py does) and a Cast to float16 and back after the outputs of the chosen
operators (views and Gather excepted: they move values without rounding). The variants run on the native CLI in
exact mode without passes (so every Cast pair stays), float32 arithmetic between the roundings.

  tools/models/fp16_rounding.py MODEL.onnx NAME=FILE.npy ... [--variant LABEL=OP,OP|all|none]...

Default variants: every operator rounded (what docs/fp16.md section 2 prescribes for a float16 graph as written),
every operator but one type at a time, only LayerNormalization, and weights only.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
CLI = os.path.join(ROOT, 'build', 'native', 'onemodel')
MOVES = {'Transpose', 'Reshape', 'Gather', 'Concat', 'Unsqueeze', 'Slice', 'Shape', 'Squeeze', 'Identity', 'Flatten'}


def variant(src, rounded, path):
    """Writes src with float16-rounded weights and a rounding after each output of the op types in `rounded`."""
    m = onnx.load(src)
    g = m.graph
    for init in g.initializer:
        a = numpy_helper.to_array(init)
        if a.dtype == np.float32:
            a = np.clip(a, -65504, 65504).astype(np.float16).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(a, init.name))
    typed = onnx.shape_inference.infer_shapes(m).graph
    elem = {v.name: v.type.tensor_type.elem_type for v in list(typed.value_info) + list(typed.input)}
    outputs = {o.name for o in g.output}
    nodes = []
    for n in g.node:
        nodes.append(n)
        if n.op_type in MOVES or (n.op_type not in rounded and n.op_type != 'Constant'):  # Constant: a weight
            continue
        for i, o in enumerate(n.output):
            if elem.get(o) != TensorProto.FLOAT or o in outputs:
                continue
            n.output[i] = o + '/unrounded'
            nodes.append(helper.make_node('Cast', [o + '/unrounded'], [o + '/f16'], to=TensorProto.FLOAT16))
            nodes.append(helper.make_node('Cast', [o + '/f16'], [o], to=TensorProto.FLOAT))
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, path)


def run(model, inputs, work):
    out = tempfile.mkdtemp(dir=work)
    args = [CLI, 'run', model, '--mode', 'exact', '--optimization', 'none', '--save-outputs', out]
    for i in inputs:
        args += ['--input', i]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return [np.load(os.path.join(out, f)).astype(np.float64) for f in sorted(os.listdir(out))]


def main():
    model = sys.argv[1]
    args = sys.argv[2:]
    chosen = [args[i + 1] for i, a in enumerate(args) if a == '--variant']
    inputs = [a for i, a in enumerate(args) if a != '--variant' and (i == 0 or args[i - 1] != '--variant')]
    ops = sorted({n.op_type for n in onnx.load(model).graph.node} - MOVES - {'Cast', 'Constant'})
    variants = [('all', set(ops))] + [('all but ' + op, set(ops) - {op}) for op in ops]
    variants += [('LayerNormalization only', {'LayerNormalization'}), ('weights only', set())]
    if chosen:
        variants = []
        for c in chosen:
            label, spec = c.split('=', 1)
            variants.append((label, set(ops) if spec == 'all' else set() if spec == 'none' else set(spec.split(','))))
    with tempfile.TemporaryDirectory() as work:
        ref = run(model, inputs, work)
        for label, rounded in variants:
            path = os.path.join(work, 'variant.onnx')
            variant(model, rounded, path)
            got = run(path, inputs, work)
            worst = max(np.abs(g - r).max() / np.abs(r).max() for g, r in zip(got, ref))
            rms = max(np.sqrt(np.mean((g - r) ** 2)) / np.abs(r).max() for g, r in zip(got, ref))
            print(f'{label:32s} max {worst:.2e}  rms {rms:.2e}')


if __name__ == '__main__':
    main()
