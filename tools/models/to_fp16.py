#!/usr/bin/python3
"""Converts a float32 ONNX model to float16 storage as docs/fp16.md section 5 describes: weights, constants and
activations float16, the graph's float32 inputs and outputs kept (a Cast to float16 after each input, a Cast back
to float32 before each output). Finite values beyond the float16 range are clamped to +-65504. Inputs that ONNX
requires to be float32 (Resize's scales) stay float32. Used by tools/models/fetch.sh for the float16 rows of
docs/models.md; compared against ONNX Runtime on the same file by tools/models/compare.mjs.

  /usr/bin/python3 tools/models/to_fp16.py in.onnx out.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

F16_MAX = 65504.0


def to_f16(t):
    a = nh.to_array(t).astype(np.float64)
    finite = np.isfinite(a)
    a[finite] = np.clip(a[finite], -F16_MAX, F16_MAX)
    return nh.from_array(a.astype(np.float16), t.name)


def convert(model):
    g = model.graph
    keep32 = set()
    for n in g.node:
        if n.op_type == 'Resize' and len(n.input) > 2 and n.input[2]:
            keep32.add(n.input[2])
    for i, t in enumerate(g.initializer):
        if t.data_type == TP.FLOAT and t.name not in keep32:
            g.initializer[i].CopyFrom(to_f16(t))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == 'Cast' and a.name == 'to' and a.i == TP.FLOAT:
                a.i = TP.FLOAT16
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TP.FLOAT and not (set(n.output) & keep32):
                a.t.CopyFrom(to_f16(a.t))
            if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                raise SystemExit('to_fp16.py: subgraphs are not converted')
    del g.value_info[:]

    renamed = {}
    head = []
    for v in g.input:
        if v.type.tensor_type.elem_type != TP.FLOAT or v.name in {t.name for t in g.initializer}:
            continue
        renamed[v.name] = v.name + '_fp16'
        head.append(h.make_node('Cast', [v.name], [renamed[v.name]], name=v.name + '_to_fp16', to=TP.FLOAT16))
    for n in g.node:
        for k, name in enumerate(n.input):
            if name in renamed:
                n.input[k] = renamed[name]
    tail = []
    for v in g.output:
        if v.type.tensor_type.elem_type != TP.FLOAT:
            continue
        inner = v.name + '_fp16'
        for n in g.node:
            for k, name in enumerate(n.output):
                if name == v.name:
                    n.output[k] = inner
            for k, name in enumerate(n.input):
                if name == v.name:
                    n.input[k] = inner
        tail.append(h.make_node('Cast', [inner], [v.name], name=v.name + '_to_fp32', to=TP.FLOAT))
    nodes = head + list(g.node) + tail
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


if __name__ == '__main__':
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    onnx.save(convert(onnx.load(sys.argv[1])), sys.argv[2])
