#!/usr/bin/python3
"""Writes the small half-precision models of testdata/fp16 (docs/fp16.md) and, for each, its input and the
output numpy computes the way docs/fp16.md section 2 says (half-precision values widened, float32 arithmetic,
each operator's result rounded to nearest even to the storage type). Used by tests/cpp/half_precision_test.cc.
Values are multiples of small powers of two, so every float32 sum and product is exact and the only roundings
are the ones to the storage type: the expected bits do not depend on a summation order.
bfloat16 has no numpy type: its rounding is done on the float32 bits. Run: /usr/bin/python3 tools/gen_fp16_models.py
(deterministic).
Fast mode fuses some of these graphs (docs/fp16.md section 4): their `_yfused` file is the float64 result of the
fused group rounded once; it differs from the per-operator output by at least 3 steps somewhere, so a fast mode
that did not fuse would miss the test's 1-step bound to it."""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'testdata', 'fp16')
rng = np.random.default_rng(16)


def save(nodes, name, inputs, outputs, inits=(), opset=17):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)], producer_name='gen_fp16_models')
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + '.onnx'))


def grid(shape, step, lo, hi):
    """Random multiples of `step` in [lo, hi]."""
    return (rng.integers(int(lo / step), int(hi / step) + 1, shape) * step).astype(np.float64)


def bf16_bits(x32):
    """float32 -> bfloat16 bits, round to nearest even (no NaN here)."""
    u = np.asarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_round(x32):
    return (bf16_bits(x32).astype(np.uint32) << 16).view(np.float32)


def bf16_init(name, values):
    t = onnx.TensorProto()
    t.name = name
    t.data_type = TP.BFLOAT16
    t.dims.extend(values.shape)
    t.raw_data = bf16_bits(values.astype(np.float32)).tobytes()
    return t


def conv_f16():
    """float16 in and out: Conv (float16 weights and bias) -> Add of a float16 constant -> Relu -> MaxPool.
    64 x 64 x 4 channels, so the conversions are cut into several chunks for the thread test."""
    x = grid((1, 4, 64, 64), 1 / 32, -4, 4).astype(np.float16)
    w = grid((6, 4, 3, 3), 1 / 32, -1, 1).astype(np.float16)
    b = grid((6,), 1 / 4, -2, 2).astype(np.float16)
    k = grid((6, 1, 1), 1 / 256, -1, 1).astype(np.float16)
    # Conv in float64 is exact here (multiples of 2^-10 below 2^8), so float32 is too; one rounding to float16,
    # which drops bits of most results, so rounding before the Add or only after it gives different bits.
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 6, 64, 64))
    for o in range(6):
        for c in range(4):
            for i in range(3):
                for j in range(3):
                    conv[0, o] += w[o, c, i, j] * xp[0, c, i:i + 64, j:j + 64]
        conv[0, o] += b[o]
    c16 = conv.astype(np.float32).astype(np.float16)
    a16 = (c16.astype(np.float32) + k.astype(np.float32)).astype(np.float16)
    r16 = np.maximum(a16, np.float16(0))
    y = r16.reshape(1, 6, 32, 2, 32, 2).max(axis=(3, 5))
    nodes = [h.make_node('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1]),
             h.make_node('Add', ['c', 'k'], ['a']), h.make_node('Relu', ['a'], ['r']),
             h.make_node('MaxPool', ['r'], ['y'], kernel_shape=[2, 2], strides=[2, 2])]
    inits = [nh.from_array(w, 'w'), nh.from_array(b, 'b'), nh.from_array(k, 'k')]
    save(nodes, 'conv_f16', [h.make_tensor_value_info('x', TP.FLOAT16, [1, 4, 64, 64])],
         [h.make_tensor_value_info('y', TP.FLOAT16, [1, 6, 32, 32])], inits)
    np.save(os.path.join(OUT, 'conv_f16_x.npy'), x)
    np.save(os.path.join(OUT, 'conv_f16_y.npy'), y)


def mlp(kind):
    """float32 in and out with a Cast to the half type at each end (docs/fp16.md section 1): MatMul by half
    weights -> Add a half bias -> Sigmoid (float16) or Tanh (bfloat16) -> Mul by a half constant."""
    half = kind == 'f16'
    rnd = (lambda v: v.astype(np.float32).astype(np.float16).astype(np.float32)) if half else bf16_round
    x = grid((4, 64), 1 / 16, -2, 2).astype(np.float32)
    w = grid((64, 32), 1 / 16, -1, 1)
    b = grid((32,), 1 / 8, -1, 1)
    s = np.array([0.75])
    xh = rnd(x)
    mm = rnd((xh.astype(np.float64) @ w).astype(np.float32))  # exact in float64 and float32
    a = rnd(mm + b.astype(np.float32))
    act = rnd((1 / (1 + np.exp(-a.astype(np.float64)))) if half else np.tanh(a.astype(np.float64)))
    y = rnd(act * np.float32(0.75)).astype(np.float32)
    # Fast mode: MatMul, Add, the activation and Mul are one FusedMatMul, rounded once.
    a64 = xh.astype(np.float64) @ w + b
    y_fused = rnd((1 / (1 + np.exp(-a64)) if half else np.tanh(a64)) * 0.75).astype(np.float32)
    t = TP.FLOAT16 if half else TP.BFLOAT16
    init = (lambda n, v: nh.from_array(v.astype(np.float16), n)) if half else bf16_init
    nodes = [h.make_node('Cast', ['x'], ['xh'], to=t), h.make_node('MatMul', ['xh', 'w'], ['m']),
             h.make_node('Add', ['m', 'b'], ['a']), h.make_node('Sigmoid' if half else 'Tanh', ['a'], ['s']),
             h.make_node('Mul', ['s', 'k'], ['p']), h.make_node('Cast', ['p'], ['y'], to=TP.FLOAT)]
    name = 'mlp_' + kind
    save(nodes, name, [h.make_tensor_value_info('x', TP.FLOAT, ['N', 64])],
         [h.make_tensor_value_info('y', TP.FLOAT, ['N', 32])], [init('w', w), init('b', b), init('k', s)])
    np.save(os.path.join(OUT, name + '_x.npy'), x)
    np.save(os.path.join(OUT, name + '_y.npy'), y)
    save_fused(name, y, y_fused, half)


def steps_apart(a, b, half):
    """The largest distance in representable steps between two arrays of values of the 16-bit type."""
    bits = (lambda v: v.astype(np.float16).view(np.uint16)) if half else bf16_bits
    order = lambda u: np.where(u & 0x8000, -(u & 0x7FFF).astype(np.int64), (u & 0x7FFF).astype(np.int64))
    return int(np.abs(order(bits(np.asarray(a, np.float32))) - order(bits(np.asarray(b, np.float32)))).max())


def save_fused(name, y, y_fused, half=True):
    assert steps_apart(y, y_fused, half) >= 3, name
    np.save(os.path.join(OUT, name + '_yfused.npy'), y_fused)


def unwrapped():
    """What the adapter never wraps (docs/fp16.md section 2): a view keeps the bits, Shape and Size see the
    real type, Cast converts from the real type. Transpose is wrapped: a signalling NaN comes out quiet."""
    nodes = [h.make_node('Reshape', ['x', 'shape'], ['view']), h.make_node('Shape', ['x'], ['shape_of']),
             h.make_node('Size', ['x'], ['size_of']), h.make_node('Cast', ['x'], ['wide'], to=TP.FLOAT),
             h.make_node('Transpose', ['x'], ['moved'], perm=[1, 0])]
    save(nodes, 'unwrapped_f16', [h.make_tensor_value_info('x', TP.FLOAT16, [2, 6])],
         [h.make_tensor_value_info('view', TP.FLOAT16, [3, 4]), h.make_tensor_value_info('shape_of', TP.INT64, [2]),
          h.make_tensor_value_info('size_of', TP.INT64, []), h.make_tensor_value_info('wide', TP.FLOAT, [2, 6]),
          h.make_tensor_value_info('moved', TP.FLOAT16, [6, 2])],
         [nh.from_array(np.array([3, 4], np.int64), 'shape')])


def body_f16():
    """An If whose branches declare no types and read a float16 value of the enclosing graph that has no
    declared type either (a Cast's output): their Softmax (a float32-only kernel) is wrapped because the
    enclosing graph stores float16 (docs/fp16.md section 1)."""
    def branch(name, node, out):
        untyped = onnx.ValueInfoProto()
        untyped.name = out
        return h.make_graph([node], name, [], [untyped])
    then = branch('then', h.make_node('Softmax', ['xh'], ['sm'], axis=-1), 'sm')
    other = branch('else', h.make_node('Neg', ['xh'], ['ng']), 'ng')
    save([h.make_node('Cast', ['x'], ['xh'], to=TP.FLOAT16),
          h.make_node('If', ['c'], ['y'], then_branch=then, else_branch=other)], 'if_f16',
         [h.make_tensor_value_info('x', TP.FLOAT, [2, 5]), h.make_tensor_value_info('c', TP.BOOL, [])],
         [h.make_tensor_value_info('y', TP.FLOAT16, [2, 5])])
    x = grid((2, 5), 1 / 8, -3, 3).astype(np.float16)
    e = np.exp(x.astype(np.float64) - x.astype(np.float64).max(axis=1, keepdims=True))
    np.save(os.path.join(OUT, 'if_f16_x.npy'), x.astype(np.float32))
    np.save(os.path.join(OUT, 'if_f16_y.npy'), (e / e.sum(axis=1, keepdims=True)).astype(np.float32).astype(np.float16))


def gelu_f16():
    """float32 in and out: torch's erf-form GELU written in float16 (x / 1.4140625, the float16 rounding of the
    square root of 2). Fast mode's `gelu` pass makes it one Gelu node, computed with the square root of 2 itself."""
    r16 = lambda v: np.asarray(v, np.float32).astype(np.float16).astype(np.float64)
    x = grid((8, 64), 1 / 64, -4, 4).astype(np.float32)
    xh = r16(x)
    sqrt2 = r16(np.sqrt(2.0))
    erf = np.vectorize(math.erf)
    y = r16(r16(xh * r16(r16(erf(r16(xh / sqrt2))) + 1)) * 0.5)
    y_fused = r16(0.5 * xh * (1 + erf(xh / np.sqrt(2.0))))
    c = lambda n, v: nh.from_array(np.array(v, np.float16), n)
    nodes = [h.make_node('Cast', ['x'], ['xh'], to=TP.FLOAT16), h.make_node('Div', ['xh', 'sqrt2'], ['d']),
             h.make_node('Erf', ['d'], ['e']), h.make_node('Add', ['e', 'one'], ['a']),
             h.make_node('Mul', ['xh', 'a'], ['m']), h.make_node('Mul', ['m', 'half'], ['g']),
             h.make_node('Cast', ['g'], ['y'], to=TP.FLOAT)]
    save(nodes, 'gelu_f16', [h.make_tensor_value_info('x', TP.FLOAT, ['N', 64])],
         [h.make_tensor_value_info('y', TP.FLOAT, ['N', 64])],
         [c('sqrt2', np.sqrt(2.0)), c('one', 1.0), c('half', 0.5)])
    np.save(os.path.join(OUT, 'gelu_f16_x.npy'), x)
    np.save(os.path.join(OUT, 'gelu_f16_y.npy'), y.astype(np.float32))
    save_fused('gelu_f16', y, y_fused.astype(np.float32))


def attention_f16():
    """float32 in and out: self-attention written in float16 on x [1, 2 heads, 8, 8] (Q = K = V = x): MatMul(x,
    Transpose(x)) / 2.828125 (the float16 rounding of the square root of 8) + a float16 mask -> Softmax -> MatMul(P,
    x). Fast mode's `attention` pass makes it one FusedAttention node that rounds only the context."""
    r16 = lambda v: np.asarray(v, np.float32).astype(np.float16).astype(np.float64)
    x = grid((1, 2, 8, 8), 1 / 8, -2, 2).astype(np.float32)
    xh = r16(x)
    scale = r16(np.sqrt(8.0))
    mask = np.where(rng.integers(0, 4, (1, 1, 8, 8)) == 0, -8.0, 0.0)
    kt = xh.transpose(0, 1, 3, 2)

    def softmax(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    scores = r16(xh @ kt)  # multiples of 1/64 below 2^5: exact in float32
    p = r16(softmax(r16(r16(scores / scale) + mask)))
    y = r16(p @ xh)
    y_fused = r16(softmax((xh @ kt) / scale + mask) @ xh)
    nodes = [h.make_node('Cast', ['x'], ['xh'], to=TP.FLOAT16),
             h.make_node('Transpose', ['xh'], ['kt'], perm=[0, 1, 3, 2]), h.make_node('MatMul', ['xh', 'kt'], ['s']),
             h.make_node('Div', ['s', 'scale'], ['sc']), h.make_node('Add', ['sc', 'mask'], ['mk']),
             h.make_node('Softmax', ['mk'], ['p'], axis=-1), h.make_node('MatMul', ['p', 'xh'], ['ctx']),
             h.make_node('Cast', ['ctx'], ['y'], to=TP.FLOAT)]
    save(nodes, 'attention_f16', [h.make_tensor_value_info('x', TP.FLOAT, [1, 2, 8, 8])],
         [h.make_tensor_value_info('y', TP.FLOAT, [1, 2, 8, 8])],
         [nh.from_array(np.array(np.sqrt(8.0), np.float16), 'scale'), nh.from_array(mask.astype(np.float16), 'mask')])
    np.save(os.path.join(OUT, 'attention_f16_x.npy'), x)
    np.save(os.path.join(OUT, 'attention_f16_y.npy'), y.astype(np.float32))
    save_fused('attention_f16', y, y_fused.astype(np.float32))


if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    conv_f16()
    mlp('f16')
    mlp('bf16')
    unwrapped()
    body_f16()
    gelu_f16()
    attention_f16()
