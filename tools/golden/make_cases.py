#!/usr/bin/python3
"""Writes the golden-hash cases: tiny ONNX models and their .npy inputs in testdata/golden/, and the case
list testdata/golden/cases.txt that tools/golden/golden.mjs runs (tools/golden/README.md).

Every model is one operator (or a short chain) at a size chosen to hit a kernel's edges: ragged tails,
1x1x1, transposes, strides, depthwise groups. Inputs come from numpy's PCG64 with a fixed seed per case, so
re-running this script rewrites identical bytes. The one large input (the float32 bit-pattern sweep of the
elementwise functions, 4 MB) is not stored: its line says `x=sweep:4099` and the harness builds it
(every 4099th bit pattern, then the specials listed in golden.mjs), so the repository stays small.

Run: /usr/bin/python3 tools/golden/make_cases.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUT = os.path.join(ROOT, "testdata", "golden")
REL = "testdata/golden"

os.makedirs(OUT, exist_ok=True)
cases = []  # (name, model path relative to ROOT, [outputs], [(input, source)])


def rng_for(name):
    # One generator per case, seeded from the case name, so adding a case never changes another's inputs.
    seed = int.from_bytes(name.encode(), "little") % (2**63)
    return np.random.default_rng(seed)


def save_model(name, nodes, inputs, outputs, opset=17, initializers=(), check=True):
    graph = h.make_graph(nodes, name, inputs, outputs, list(initializers))
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=9 if opset >= 19 else 8,
                         producer_name="tools/golden/make_cases.py")
    # Debian's onnx 1.12 predates Gelu (opset 20): its checker cannot judge those models.
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(OUT, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return f"{REL}/{name}.onnx"


def save_npy(case, input_name, array):
    fname = f"{case}_{input_name}.npy"
    np.save(os.path.join(OUT, fname), np.ascontiguousarray(array), allow_pickle=False)
    return f"{REL}/{fname}"


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def add(name, model, outputs, inputs):
    cases.append((name, model, outputs, inputs))


def with_specials(a, rng, every=13):
    """Scatters NaN, infinities, signed zeros and denormals into a float32 array (exact-mode edge bits)."""
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3.0e38], np.float32)
    flat = a.reshape(-1)
    idx = np.arange(0, flat.size, every)
    flat[idx] = specials[rng.integers(0, specials.size, idx.size)]
    return a


# --- MatMul sweep ----------------------------------------------------------------------------------------
for (m, k, n) in [(1, 1, 1), (1, 64, 1), (4, 4, 4), (16, 16, 16), (67, 33, 70), (64, 64, 64), (5, 129, 31),
                  (1, 512, 64), (96, 17, 3), (128, 96, 80)]:
    name = f"matmul_{m}x{k}x{n}"
    r = rng_for(name)
    model = save_model(name, [h.make_node("MatMul", ["a", "b"], ["y"])],
                       [vi("a", T.FLOAT, [m, k]), vi("b", T.FLOAT, [k, n])], [vi("y", T.FLOAT, [m, n])])
    add(name, model, ["y"], [("a", save_npy(name, "a", r.standard_normal((m, k)).astype(np.float32))),
                             ("b", save_npy(name, "b", r.standard_normal((k, n)).astype(np.float32)))])

name = "matmul_batched_3x2x19x23x11"
r = rng_for(name)
model = save_model(name, [h.make_node("MatMul", ["a", "b"], ["y"])],
                   [vi("a", T.FLOAT, [3, 2, 19, 23]), vi("b", T.FLOAT, [2, 23, 11])], [vi("y", T.FLOAT, [3, 2, 19, 11])])
add(name, model, ["y"], [("a", save_npy(name, "a", r.standard_normal((3, 2, 19, 23)).astype(np.float32))),
                         ("b", save_npy(name, "b", r.standard_normal((2, 23, 11)).astype(np.float32)))])

name = "matmul_specials_33x40x35"
r = rng_for(name)
model = save_model(name, [h.make_node("MatMul", ["a", "b"], ["y"])],
                   [vi("a", T.FLOAT, [33, 40]), vi("b", T.FLOAT, [40, 35])], [vi("y", T.FLOAT, [33, 35])])
add(name, model, ["y"],
    [("a", save_npy(name, "a", with_specials(r.standard_normal((33, 40)).astype(np.float32), r, 97))),
     ("b", save_npy(name, "b", r.standard_normal((40, 35)).astype(np.float32)))])

# --- Gemm with transposes, alpha/beta and a broadcast bias -----------------------------------------------
for (ta, tb, m, k, n, alpha, beta, cshape) in [
        (0, 0, 33, 47, 29, 1.0, 1.0, "n"), (0, 1, 33, 47, 29, 1.0, 1.0, "mn"), (1, 0, 17, 65, 9, 0.5, 2.0, "n"),
        (1, 1, 70, 3, 67, 1.25, 0.75, "1"), (0, 1, 1, 256, 10, 1.0, 1.0, "n"), (1, 1, 1, 1, 1, 1.0, 1.0, "mn")]:
    name = f"gemm_t{ta}{tb}_{m}x{k}x{n}_c{cshape}"
    r = rng_for(name)
    ashape = [k, m] if ta else [m, k]
    bshape = [n, k] if tb else [k, n]
    cdims = {"n": [n], "mn": [m, n], "1": [1]}[cshape]
    model = save_model(name, [h.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb, alpha=alpha,
                                          beta=beta)],
                       [vi("a", T.FLOAT, ashape), vi("b", T.FLOAT, bshape), vi("c", T.FLOAT, cdims)],
                       [vi("y", T.FLOAT, [m, n])])
    add(name, model, ["y"], [("a", save_npy(name, "a", r.standard_normal(ashape).astype(np.float32))),
                             ("b", save_npy(name, "b", r.standard_normal(bshape).astype(np.float32))),
                             ("c", save_npy(name, "c", r.standard_normal(cdims).astype(np.float32)))])

# --- Conv 2-D (the engine may not implement Conv yet: such a case hashes as the cannot-run marker) -------
for (label, n, c, hh, ww, oc, kh, kw, stride, pad, group) in [
        ("3x3_pad1", 1, 8, 17, 19, 16, 3, 3, 1, 1, 1), ("3x3_stride2", 2, 5, 23, 20, 7, 3, 3, 2, 1, 1),
        ("depthwise3x3", 1, 12, 15, 15, 12, 3, 3, 1, 1, 12), ("1x1", 1, 32, 9, 11, 24, 1, 1, 1, 0, 1),
        ("5x5_stride2_nopad", 1, 3, 31, 29, 4, 5, 5, 2, 0, 1)]:
    name = f"conv_{label}"
    r = rng_for(name)
    xshape, wshape = [n, c, hh, ww], [oc, c // group, kh, kw]
    yshape = [n, oc, (hh + 2 * pad - kh) // stride + 1, (ww + 2 * pad - kw) // stride + 1]
    model = save_model(name, [h.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[kh, kw],
                                          strides=[stride, stride], pads=[pad] * 4, group=group)],
                       [vi("x", T.FLOAT, xshape), vi("w", T.FLOAT, wshape), vi("b", T.FLOAT, [oc])],
                       [vi("y", T.FLOAT, yshape)])
    add(name, model, ["y"], [("x", save_npy(name, "x", r.standard_normal(xshape).astype(np.float32))),
                             ("w", save_npy(name, "w", (r.standard_normal(wshape) * 0.3).astype(np.float32))),
                             ("b", save_npy(name, "b", r.standard_normal([oc]).astype(np.float32)))])

# --- Integer products (int8.md): the int16 product per target, the byte product of AVX-512 VNNI, the NEON
# dot-product path; sums are exact, so every row must give the same int32 bits -----------------------------
for (label, xt, wt, n, c, hh, ww, oc, stride) in [("u8u8_3x3", T.UINT8, T.UINT8, 1, 16, 9, 70, 24, 1),
                                                   ("s8s8_3x3_stride2", T.INT8, T.INT8, 2, 5, 23, 20, 7, 2)]:
    name = f"convinteger_{label}"
    r = rng_for(name)
    xnp, wnp = (np.uint8 if xt == T.UINT8 else np.int8), (np.uint8 if wt == T.UINT8 else np.int8)
    lo_x, hi_x = (0, 256) if xt == T.UINT8 else (-128, 128)
    lo_w, hi_w = (0, 256) if wt == T.UINT8 else (-128, 128)
    xshape, wshape = [n, c, hh, ww], [oc, c, 3, 3]
    yshape = [n, oc, (hh + 2 - 3) // stride + 1, (ww + 2 - 3) // stride + 1]
    zx = np.array(r.integers(lo_x, hi_x), dtype=xnp)
    zw = np.array(r.integers(lo_w, hi_w), dtype=wnp)
    model = save_model(name, [h.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["y"], kernel_shape=[3, 3],
                                          strides=[stride, stride], pads=[1] * 4)],
                       [vi("x", xt, xshape), vi("w", wt, wshape), vi("zx", xt, []), vi("zw", wt, [])],
                       [vi("y", T.INT32, yshape)], opset=13)
    add(name, model, ["y"], [("x", save_npy(name, "x", r.integers(lo_x, hi_x, xshape).astype(xnp))),
                             ("w", save_npy(name, "w", r.integers(lo_w, hi_w, wshape).astype(wnp))),
                             ("zx", save_npy(name, "zx", zx)), ("zw", save_npy(name, "zw", zw))])
name = "matmulinteger_u8s8_2x37x70x45"
r = rng_for(name)
model = save_model(name, [h.make_node("MatMulInteger", ["a", "b", "za", "zb"], ["y"])],
                   [vi("a", T.UINT8, [2, 37, 70]), vi("b", T.INT8, [70, 45]), vi("za", T.UINT8, [37]),
                    vi("zb", T.INT8, [45])], [vi("y", T.INT32, [2, 37, 45])], opset=13)
add(name, model, ["y"], [("a", save_npy(name, "a", r.integers(0, 256, [2, 37, 70]).astype(np.uint8))),
                         ("b", save_npy(name, "b", r.integers(-128, 128, [70, 45]).astype(np.int8))),
                         ("za", save_npy(name, "za", r.integers(0, 256, [37]).astype(np.uint8))),
                         ("zb", save_npy(name, "zb", r.integers(-128, 128, [45]).astype(np.int8)))])

# --- Elementwise functions over the float32 bit-pattern sweep (input built by the harness) ----------------
for op, opset, attrs in [("Exp", 13, {}), ("Log", 13, {}), ("Tanh", 13, {}), ("Sigmoid", 13, {}), ("Erf", 13, {}),
                         ("Gelu", 20, {}), ("Gelu", 20, {"approximate": "tanh"})]:
    name = f"sweep_{op.lower()}" + ("_tanh" if attrs else "")
    model = save_model(name, [h.make_node(op, ["x"], ["y"], **attrs)], [vi("x", T.FLOAT, ["n"])],
                       [vi("y", T.FLOAT, ["n"])], opset=opset,
                       check=opset <= 17)
    add(name, model, ["y"], [("x", "sweep:4099")])

# --- Softmax rows --------------------------------------------------------------------------------------
for (label, shape, axis) in [("7x1000", [7, 1000], -1), ("3x5x129", [3, 5, 129], -1), ("4x33_axis0", [4, 33], 0),
                             ("1x1", [1, 1], 1)]:
    name = f"softmax_{label}"
    r = rng_for(name)
    x = (r.standard_normal(shape) * 4).astype(np.float32)
    if label == "7x1000":
        x[1, :] = 0.0                    # a uniform row
        x[2, 5] = np.inf                 # +inf in a row
        x[3, :] = -np.inf                # a row of -inf
        x[4, 17] = np.nan                # NaN in a row
        x[5, :] *= 30                    # large logits
        x[6, 3] = 88.0
    model = save_model(name, [h.make_node("Softmax", ["x"], ["y"], axis=axis)], [vi("x", T.FLOAT, shape)],
                       [vi("y", T.FLOAT, shape)], opset=13)
    add(name, model, ["y"], [("x", save_npy(name, "x", x))])

# --- The sample models of testdata/ (made by tools/make_testdata.py) --------------------------------------
r = rng_for("classifier")
add("classifier", "testdata/classifier.onnx", ["probs"],
    [("x", save_npy("classifier", "x", r.standard_normal((5, 4)).astype(np.float32)))])
r = rng_for("scorer")
add("scorer", "testdata/scorer.onnx", ["score", "best"],
    [("features", save_npy("scorer", "features", r.standard_normal((6, 3)).astype(np.float32))),
     ("bias", save_npy("scorer", "bias", r.standard_normal((1, 2)).astype(np.float32)))])
r = rng_for("wide")
add("wide", "testdata/wide.onnx", ["y"], [("x", save_npy("wide", "x", r.standard_normal((1, 256)).astype(np.float32)))])


# --- A selection of ONNX backend-test cases, by path in the generated data directory -----------------------
# (tools/gen_backend_data.py). The harness runs them only where that directory exists; their inputs and
# output names come from test_data_set_0.
BACKEND = [f"node/test_{n}" for n in """
    conv_with_strides_padding conv_with_strides_no_padding conv_with_strides_and_asymmetric_padding
    conv_with_autopad_same convtranspose convtranspose_pads
    gemm_all_attributes gemm_alpha gemm_beta gemm_default_matrix_bias gemm_default_no_bias
    gemm_default_scalar_bias gemm_default_single_elem_vector_bias gemm_default_vector_bias gemm_transposeA
    gemm_transposeB matmul_2d matmul_3d matmul_4d
    softmax_axis_0 softmax_axis_1 softmax_axis_2 softmax_default_axis softmax_example softmax_large_number
    softmax_negative_axis softmax_axis_1_expanded logsoftmax_example_1 hardmax_example
    exp log tanh sigmoid erf relu add mul
    averagepool_2d_default averagepool_2d_pads averagepool_2d_strides maxpool_2d_default maxpool_2d_strides
    globalaveragepool batchnorm_example instancenorm_example layer_normalization_2d_axis0
    layer_normalization_4d_axis_negative_1 lrn reduce_mean_default_axes_keepdims_random
    reduce_sum_default_axes_keepdims_random lstm_defaults gru_defaults rnn_seq_length
""".split()]


def declared_outputs(path):
    return [o.name for o in onnx.load(os.path.join(ROOT, path)).graph.output]


# --- The real models of issue 5 (tools/models/cases.mjs gives their inputs), by their declared outputs ----------
REAL_MODELS = [
    ("det", ["sigmoid_0.tmp_0"]),
    ("rec", ["softmax_11.tmp_0"]),
    ("cls", ["softmax_0.tmp_0"]),
    ("minilm", ["last_hidden_state"]),
    ("vad", ["output", "stateN"]),
    ("vadlegacy", ["output", "hn", "cn"]),
]

with open(os.path.join(OUT, "cases.txt"), "w") as f:
    f.write("# Golden-hash cases, written by tools/golden/make_cases.py (do not edit by hand).\n")
    f.write("# NAME MODEL OUTPUT[,OUTPUT...] INPUT=SOURCE...  (SOURCE: a .npy path, or sweep:STEP)\n")
    f.write("# backend:PATH  an ONNX backend-test case (run only where the generated data exist)\n")
    for name, model, outputs, inputs in cases:
        assert outputs == declared_outputs(model), (name, outputs)
        f.write(" ".join([name, model, ",".join(outputs)] + [f"{i}={s}" for i, s in inputs]) + "\n")
    for path in BACKEND:
        f.write(f"backend:{path}\n")
    f.write("# model:NAME OUTPUTS  a real model of tools/models (run only where tools/models/fetch.sh filled the cache)\n")
    for name, outputs in REAL_MODELS:
        f.write(f"model:{name} {','.join(outputs)}\n")
print(f"{len(cases)} cases and {len(BACKEND)} backend-test cases in {os.path.relpath(os.path.join(OUT, 'cases.txt'), ROOT)}")
