#!/usr/bin/python3
"""The models and data of docs/models.md's pure-tone measurement of the legacy Silero VAD (issue 13).

Writes into OUTDIR: flat.onnx, the 16 kHz branch of the top-level If as the main graph with the STFT magnitude
(`magnitude`, [1,129,24]) as an extra output; cut.onnx, the same graph from the magnitude on, fed it as an input
(the nodes that need `input` other than through it are dropped); tone.npy, the chunk 0.8 sin(0.0137 i) as
float32 [1,1536]; mag64.npy, the magnitude of the model's STFT of that chunk computed in float64 (reflect padding
of 96, 256-tap basis, stride 64, as the graph does), rounded to float32; bound.npy, 16 units of float32 rounding
of each magnitude's sums (16 * 2^-24 * the magnitude of the sums of |x_k b_k|): a magnitude below it is noise.

  /usr/bin/python3 tools/models/vad_legacy_tone.py MODEL OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

model_path, out = sys.argv[1], sys.argv[2]
m = onnx.load(model_path)
g = m.graph
then = next(a.g for a in g.node[1].attribute if a.name == "then_branch")  # sr == 16000
inits = list(g.initializer) + list(then.initializer)
inputs = [i for i in g.input if i.name != "sr"]
outputs = [helper.make_tensor_value_info(o.name, onnx.TensorProto.FLOAT, None) for o in then.output]
mag = helper.make_tensor_value_info("magnitude", onnx.TensorProto.FLOAT, [1, 129, 24])


def save(nodes, ins, outs, name):
    graph = helper.make_graph(nodes, name, ins, outs, inits)
    onnx.save(helper.make_model(graph, opset_imports=m.opset_import, ir_version=m.ir_version), os.path.join(out, name))


save(list(then.node), inputs, outputs + [mag], "flat.onnx")


def refs(n):  # every name a node reads, its bodies' outer-scope names included
    r = set(n.input)
    for a in n.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            for sub in a.g.node:
                r |= refs(sub)
    return r


tainted, kept = {"input"}, []
for n in then.node:
    if "magnitude" in n.output:
        continue
    if refs(n) & tainted:
        tainted |= set(n.output)
    else:
        kept.append(n)
save(kept, [i for i in inputs if i.name != "input"] + [mag], outputs, "cut.onnx")

x = (np.sin(0.0137 * np.arange(1536)) * 0.8).astype(np.float32)
np.save(os.path.join(out, "tone.npy"), x.reshape(1, 1536))
basis = next(numpy_helper.to_array(i) for i in inits if i.name == "model.feature_extractor.forward_basis_buffer")
frames = np.lib.stride_tricks.sliding_window_view(np.pad(x.astype(np.float64), 96, mode="reflect"), 256)[::64]
b = basis[:, 0, :].astype(np.float64)


def magnitude(f):
    return np.ascontiguousarray(np.sqrt(f[:129] ** 2 + f[129:] ** 2)).astype(np.float32).reshape(1, 129, 24)


np.save(os.path.join(out, "mag64.npy"), magnitude((frames @ b.T).T))
np.save(os.path.join(out, "bound.npy"), magnitude((np.abs(frames) @ np.abs(b).T).T * 16 * 2.0**-24))
