#!/usr/bin/python3
"""Writes the committed sample models of testdata/ with Debian's python3-onnx and numpy.

classifier, scorer and wide are made exactly as the spec's getting-started `models.py` (same seed, same
order of random draws), so the documented outputs apply; unsupported and wave are the cookbook's
`broken_models.py`. Run: /usr/bin/python3 tools/make_testdata.py [OUTDIR]
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata")
os.makedirs(out, exist_ok=True)


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name))


rng = np.random.default_rng(7)


def w(name, *shape):
    return nh.from_array(rng.standard_normal(shape).astype(np.float32) * 0.5, name)


# classifier.onnx: 4 features -> 8 hidden (Relu) -> 3 classes (Softmax)
g = h.make_graph(
    [h.make_node("Gemm", ["x", "W1", "b1"], ["h"], transB=1),
     h.make_node("Relu", ["h"], ["hr"]),
     h.make_node("Gemm", ["hr", "W2", "b2"], ["logits"], transB=1),
     h.make_node("Softmax", ["logits"], ["probs"], axis=1)],
    "classifier",
    [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
    [h.make_tensor_value_info("probs", T.FLOAT, ["batch", 3])],
    [w("W1", 8, 4), w("b1", 8), w("W2", 3, 8), w("b2", 3)])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), "classifier.onnx")

# scorer.onnx: two named inputs, two outputs
g = h.make_graph(
    [h.make_node("MatMul", ["features", "W"], ["proj"]),
     h.make_node("Add", ["proj", "bias"], ["score"]),
     h.make_node("ReduceMax", ["score"], ["best"], axes=[1], keepdims=0)],
    "scorer",
    [h.make_tensor_value_info("features", T.FLOAT, ["batch", 3]),
     h.make_tensor_value_info("bias", T.FLOAT, [1, 2])],
    [h.make_tensor_value_info("score", T.FLOAT, ["batch", 2]),
     h.make_tensor_value_info("best", T.FLOAT, ["batch"])],
    [nh.from_array(np.array([[1, 0], [0, 1], [1, 1]], np.float32), "W")])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=8), "scorer.onnx")

# wide.onnx: a larger float32 model for half-precision weight storage (256 -> 512 -> 64)
g = h.make_graph(
    [h.make_node("MatMul", ["x", "W1"], ["h"]),
     h.make_node("Relu", ["h"], ["hr"]),
     h.make_node("MatMul", ["hr", "W2"], ["y"])],
    "wide",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 256])],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 64])],
    [nh.from_array((rng.standard_normal((256, 512)) * 0.05).astype(np.float32), "W1"),
     nh.from_array((rng.standard_normal((512, 64)) * 0.05).astype(np.float32), "W2")])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), "wide.onnx")

# unsupported.onnx: two operators without a kernel (cookbook missing-operators). The cookbook pairs DeformConv
# with TfIdfVectorizer, which we now implement; ImageDecoder takes its place (ops-coverage.md lists both
# DeformConv and ImageDecoder as not covered).
g = h.make_graph(
    [h.make_node("DeformConv", ["x", "w", "offset"], ["y"]),
     h.make_node("ImageDecoder", ["encoded"], ["image"], pixel_format="RGB")],
    "unsupported",
    [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 3, 3]), h.make_tensor_value_info("w", T.FLOAT, [1, 1, 2, 2]),
     h.make_tensor_value_info("offset", T.FLOAT, [1, 8, 2, 2]), h.make_tensor_value_info("encoded", T.UINT8, [4])],
    [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("image", T.UINT8, None)])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 22)], ir_version=10), "unsupported.onnx", check=False)

# wave.onnx: Cos has a fast kernel but no exact one
g = h.make_graph([h.make_node("Cos", ["t"], ["y"])], "wave",
                 [h.make_tensor_value_info("t", T.FLOAT, [4])], [h.make_tensor_value_info("y", T.FLOAT, [4])])
save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), "wave.onnx")
print("ok")
