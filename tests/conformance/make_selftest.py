#!/usr/bin/python3
"""Writes tests/conformance/selftest/: a few tiny backend-test-shaped cases with hand-chosen expectations,
some deliberately wrong, so the CTest entry conformance_selftest can check that the runner really fails
wrong values, shapes and integers and classifies refusals. Run: /usr/bin/python3 tests/conformance/make_selftest.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "selftest")
shutil.rmtree(root, ignore_errors=True)


def case(group, name, model, inputs, outputs):
    d = os.path.join(root, group, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, (prefix, values) in enumerate([("input", inputs), ("output", outputs)]):
        for i, v in enumerate(values):
            t = v if isinstance(v, onnx.TensorProto) else nh.from_array(v)
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(t.SerializeToString())


def one_node(op, elem, shape, domain="", n_in=1, opset=13):
    ins = [h.make_tensor_value_info("x%d" % i, elem, shape) for i in range(n_in)]
    node = h.make_node(op, [i.name for i in ins], ["y"], domain=domain)
    g = h.make_graph([node], op, ins, [h.make_tensor_value_info("y", elem, shape)])
    imports = [h.make_opsetid("", opset)] + ([h.make_opsetid(domain, 1)] if domain else [])
    return h.make_model(g, opset_imports=imports, ir_version=8)


f32 = lambda *v: np.array(v, dtype=np.float32)
relu = one_node("Relu", T.FLOAT, [2])
case("node", "test_relu_ok", relu, [f32(-1, 2)], [f32(0, 2)])
# 2.0019 - 2 = 0.0019 <= 1e-7 + 1e-3 * 2.0019: inside the tolerance.
case("node", "test_relu_within_tolerance", relu, [f32(-1, 2)], [f32(0, 2.0019)])
# 2.01 - 2 = 0.01 > 1e-7 + 1e-3 * 2.01: outside.
case("node", "test_relu_wrong_value", relu, [f32(-1, 2)], [f32(0, 2.01)])
case("node", "test_relu_nan", relu, [f32(np.nan, -np.inf)], [f32(np.nan, 0)])
case("node", "test_relu_wrong_shape", relu, [f32(-1, 2)], [f32(0, 2).reshape(1, 2)])
add_i64 = one_node("Add", T.INT64, [2], n_in=2)
i64 = lambda *v: np.array(v, dtype=np.int64)
case("node", "test_add_int_ok", add_i64, [i64(1, 2), i64(10, 20)], [i64(11, 22)])
case("node", "test_add_int_off_by_one", add_i64, [i64(1, 2), i64(10, 20)], [i64(11, 23)])
case("node", "test_no_such_op", one_node("NoSuchOp", T.FLOAT, [2], domain="org.example"), [f32(1, 2)], [f32(1, 2)])
strings = nh.from_array(np.array([b"a", b"b"], dtype=object))
case("simple", "test_string_identity", one_node("Identity", T.STRING, [2]), [strings], [strings])
