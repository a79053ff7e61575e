#!/usr/bin/python3
"""Writes the bar runner's models and their inputs (bench/run.mjs) into a cache directory outside git.

Each row is one small ONNX model (opset 17, float32, batch 1) shaped like a hot layer of a real network,
plus one .npy file per input, so every engine times the same graph on the same values. A manifest.json
lists the rows (name, group, model file, input files, multiply-adds). Everything is deterministic (fixed
numpy seeds); rerunning with the same version rewrites nothing.

Usage: /usr/bin/python3 bench/make_models.py [OUT_DIR]   (default: ~/.cache/onemodel/bench)
Prints the directory on stdout.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Bump when a model or input changes, so an old cache is rebuilt.
VERSION = 1
OPSET = 17


def value(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def uniform(rng, shape, scale=1.0):
    return (rng.uniform(-1.0, 1.0, size=shape) * scale).astype(np.float32)


def matmul_inputs(m, k, n):
    """MatMul with both operands as inputs: the GEMM itself, no pre-packing of a constant B possible."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["A", "B"], ["Y"])], f"matmul_{m}x{k}x{n}",
        [value("A", (m, k)), value("B", (k, n))], [value("Y", (m, n))])
    rng = np.random.default_rng(m * 7 + k * 3 + n)
    return graph, {"A": uniform(rng, (m, k)), "B": uniform(rng, (k, n))}, m * k * n


def matmul_weight(m, k, n):
    """A MiniLM projection: activations [m, k] times a weight initializer [k, n] (engines may pre-pack B)."""
    rng = np.random.default_rng(1000 + m + k * 3 + n * 5)
    w = uniform(rng, (k, n), 1.0 / np.sqrt(k))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["Y"])], f"proj_{m}x{k}x{n}",
        [value("X", (m, k))], [value("Y", (m, n))], [numpy_helper.from_array(w, "W")])
    return graph, {"X": uniform(rng, (m, k))}, m * k * n


def conv(cin, cout, hw, kernel, stride, group=1):
    """One Conv with bias, NCHW batch 1, 'same'-style padding (kernel // 2)."""
    pad = kernel // 2
    out_hw = (hw + 2 * pad - kernel) // stride + 1
    rng = np.random.default_rng(cin * 31 + cout * 7 + hw + kernel * 1000 + stride * 10000 + group)
    fan_in = (cin // group) * kernel * kernel
    w = uniform(rng, (cout, cin // group, kernel, kernel), 1.0 / np.sqrt(fan_in))
    b = uniform(rng, (cout,), 0.1)
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], kernel_shape=[kernel, kernel], strides=[stride, stride],
                            pads=[pad] * 4, group=group)
    graph = helper.make_graph(
        [node], f"conv_{cin}_{cout}_{hw}_k{kernel}_s{stride}_g{group}",
        [value("X", (1, cin, hw, hw))], [value("Y", (1, cout, out_hw, out_hw))],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    macs = cout * out_hw * out_hw * fan_in
    return graph, {"X": uniform(rng, (1, cin, hw, hw))}, macs


def attention(seq, heads=12, head_dim=64):
    """BERT-base self-attention core: Softmax(Q K^T * 1/sqrt(d) + mask) V, written out op by op.

    The mask is the additive [1, 1, 1, seq] form BERT uses (0 = attend, -10000 = padding); the last eighth of
    the positions are padding so the mask changes the result.
    """
    shape = (1, heads, seq, head_dim)
    scale = np.array(1.0 / np.sqrt(head_dim), dtype=np.float32)
    nodes = [
        helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["Q", "Kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
        helper.make_node("MatMul", ["probs", "V"], ["Y"]),
    ]
    graph = helper.make_graph(
        nodes, f"attention_s{seq}",
        [value("Q", shape), value("K", shape), value("V", shape), value("mask", (1, 1, 1, seq))],
        [value("Y", shape)], [numpy_helper.from_array(scale, "scale")])
    rng = np.random.default_rng(5000 + seq)
    mask = np.zeros((1, 1, 1, seq), dtype=np.float32)
    mask[..., seq - seq // 8:] = -10000.0
    inputs = {"Q": uniform(rng, shape), "K": uniform(rng, shape), "V": uniform(rng, shape), "mask": mask}
    return graph, inputs, 2 * heads * seq * seq * head_dim


# (name, group, builder, args). Groups: matmul, minilm (MiniLM-L6 projections at 128 tokens), resnet50
# (bottleneck convolutions), mobilenetv3 (depthwise convolutions of MobileNetV3-Large), attention (BERT-base).
ROWS = [
    ("matmul_256", "matmul", matmul_inputs, (256, 256, 256)),
    ("matmul_1024", "matmul", matmul_inputs, (1024, 1024, 1024)),
    ("minilm_qkv_128x384x384", "minilm", matmul_weight, (128, 384, 384)),
    ("minilm_ffn1_128x384x1536", "minilm", matmul_weight, (128, 384, 1536)),
    ("minilm_ffn2_128x1536x384", "minilm", matmul_weight, (128, 1536, 384)),
    ("r50_conv3x3_64_56", "resnet50", conv, (64, 64, 56, 3, 1)),
    ("r50_conv1x1_64to256_56", "resnet50", conv, (64, 256, 56, 1, 1)),
    ("r50_conv1x1_256to64_56", "resnet50", conv, (256, 64, 56, 1, 1)),
    ("r50_conv3x3_256_14", "resnet50", conv, (256, 256, 14, 3, 1)),
    ("r50_conv1x1_256to512_14", "resnet50", conv, (256, 512, 14, 1, 1)),
    ("mnv3_dw3x3_s2_c64_112", "mobilenetv3", conv, (64, 64, 112, 3, 2, 64)),
    ("mnv3_dw3x3_s1_c72_56", "mobilenetv3", conv, (72, 72, 56, 3, 1, 72)),
    ("mnv3_dw5x5_s2_c72_56", "mobilenetv3", conv, (72, 72, 56, 5, 2, 72)),
    ("mnv3_dw5x5_s1_c120_28", "mobilenetv3", conv, (120, 120, 28, 5, 1, 120)),
    ("mnv3_dw3x3_s1_c480_14", "mobilenetv3", conv, (480, 480, 14, 3, 1, 480)),
    ("attention_s128", "attention", attention, (128,)),
    ("attention_s512", "attention", attention, (512,)),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.expanduser("~"), ".cache", "onemodel", "bench")
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    manifest_path = os.path.join(out, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
        if old.get("version") == VERSION and all(
                os.path.exists(os.path.join(out, r["model"])) for r in old["rows"]):
            print(out)
            return
    rows = []
    for name, group, build, args in ROWS:
        graph, inputs, macs = build(*args)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="onemodel-bench")
        model.ir_version = 8
        onnx.checker.check_model(model)
        model_file = f"{name}.onnx"
        onnx.save(model, os.path.join(out, model_file))
        files = {}
        for input_name, array in inputs.items():
            fname = f"{name}.{input_name}.npy"
            np.save(os.path.join(out, fname), array)
            files[input_name] = fname
        rows.append({"name": name, "group": group, "model": model_file, "inputs": files, "macs": int(macs)})
    with open(manifest_path, "w") as f:
        json.dump({"version": VERSION, "opset": OPSET, "rows": rows}, f, indent=1)
    print(out)


if __name__ == "__main__":
    main()
