#!/usr/bin/python3
"""Writes the small models of testdata/passes: the patterns each graph pass rewrites (passes/, graph-passes.md),
and near misses it must leave alone. Used by tests/cpp/passes_test.cc, which runs each at optimization level All
and None and compares. Run: /usr/bin/python3 tools/gen_pass_models.py (deterministic)."""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'testdata', 'passes')
rng = np.random.default_rng(5)


def save(nodes, name, inputs, outputs, inits=(), opset=17):
    graph = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)], producer_name='gen_pass_models')
    model.ir_version = 8
    if opset <= 17:  # the checker of onnx 1.12 knows opsets up to 17 (Gelu is opset 20)
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name + '.onnx'))


def scalar(name, v):
    return nh.from_array(np.array(v, np.float32), name)


def f32(name, dims):
    return h.make_tensor_value_info(name, TP.FLOAT, dims)


def gelu():
    x = [f32('x', [3, 37])]
    consts = [scalar('sqrt2', np.sqrt(2.0)), scalar('one', 1.0), scalar('half', 0.5), scalar('rsqrt2', np.sqrt(0.5))]
    # torch's F.gelu export: Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5)
    save([h.make_node('Div', ['x', 'sqrt2'], ['d']), h.make_node('Erf', ['d'], ['e']),
          h.make_node('Add', ['e', 'one'], ['a']), h.make_node('Mul', ['x', 'a'], ['m']),
          h.make_node('Mul', ['m', 'half'], ['y'])], 'gelu_torch', x, [f32('y', [3, 37])], consts)
    # BERT's expression with Mul by 1/sqrt2 and the operands swapped: Mul(Mul(x, 0.5), Add(1, Erf(Mul(x, r))))
    save([h.make_node('Mul', ['rsqrt2', 'x'], ['d']), h.make_node('Erf', ['d'], ['e']),
          h.make_node('Add', ['one', 'e'], ['a']), h.make_node('Mul', ['x', 'half'], ['xh']),
          h.make_node('Mul', ['a', 'xh'], ['y'])], 'gelu_bert', x, [f32('y', [3, 37])], consts)
    # Near miss: the Erf result is also a graph output, so the chain must stay.
    save([h.make_node('Div', ['x', 'sqrt2'], ['d']), h.make_node('Erf', ['d'], ['e']),
          h.make_node('Add', ['e', 'one'], ['a']), h.make_node('Mul', ['x', 'a'], ['m']),
          h.make_node('Mul', ['m', 'half'], ['y'])], 'gelu_shared', x, [f32('y', [3, 37]), f32('e', [3, 37])], consts)


def conv_bn():
    def bn_inits(p, m):
        return [nh.from_array(rng.uniform(0.5, 1.5, m).astype(np.float32), p + 'scale'),
                nh.from_array(rng.normal(0, 0.3, m).astype(np.float32), p + 'beta'),
                nh.from_array(rng.normal(0, 0.3, m).astype(np.float32), p + 'mean'),
                nh.from_array(rng.uniform(0.2, 2.0, m).astype(np.float32), p + 'var')]
    inits = [nh.from_array(rng.normal(0, 0.3, (6, 3, 3, 3)).astype(np.float32), 'w1'),
             nh.from_array(rng.normal(0, 0.3, 6).astype(np.float32), 'b1'),
             nh.from_array(rng.normal(0, 0.3, (6, 2, 3, 3)).astype(np.float32), 'w2')]
    inits += bn_inits('bn1_', 6) + bn_inits('bn2_', 6)
    nodes = [h.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]),
             h.make_node('BatchNormalization', ['c1', 'bn1_scale', 'bn1_beta', 'bn1_mean', 'bn1_var'], ['n1'],
                         epsilon=1e-3),
             h.make_node('Relu', ['n1'], ['r1']),
             # grouped, no bias
             h.make_node('Conv', ['r1', 'w2'], ['c2'], group=3, strides=[2, 2]),
             h.make_node('BatchNormalization', ['c2', 'bn2_scale', 'bn2_beta', 'bn2_mean', 'bn2_var'], ['y'])]
    save(nodes, 'conv_bn', [f32('x', [2, 3, 11, 11])], [f32('y', ['o0', 'o1', 'o2', 'o3'])], inits)


def attention():
    b, s, heads, d = 'b', 's', 3, 8
    # Torch/BERT export: head-split transposes, K^T by (0, 2, 3, 1), Div by sqrt(d), additive mask, merge transpose.
    nodes = [h.make_node('Transpose', ['q'], ['qt'], perm=[0, 2, 1, 3]),
             h.make_node('Transpose', ['k'], ['kt'], perm=[0, 2, 3, 1]),
             h.make_node('Transpose', ['v'], ['vt'], perm=[0, 2, 1, 3]),
             h.make_node('MatMul', ['qt', 'kt'], ['qk']),
             h.make_node('Div', ['qk', 'scale'], ['scaled']),
             h.make_node('Add', ['mask', 'scaled'], ['masked']),
             h.make_node('Softmax', ['masked'], ['p'], axis=-1),
             h.make_node('MatMul', ['p', 'vt'], ['ctx']),
             h.make_node('Transpose', ['ctx'], ['y'], perm=[0, 2, 1, 3])]
    io = [f32('q', [b, s, heads, d]), f32('k', [b, s, heads, d]), f32('v', [b, s, heads, d]), f32('mask', [b, 1, 1, s])]
    save(nodes, 'attention_bert', io, [f32('y', [b, s, heads, d])], [scalar('scale', np.sqrt(d))])
    # [b, h, s, d] operands, K^T by (0, 1, 3, 2), the scale as Mul's first operand, no mask, axis 3 at opset 13.
    nodes = [h.make_node('Transpose', ['k'], ['kt'], perm=[0, 1, 3, 2]),
             h.make_node('MatMul', ['q', 'kt'], ['qk']),
             h.make_node('Mul', ['scale', 'qk'], ['scaled']),
             h.make_node('Softmax', ['scaled'], ['p'], axis=3),
             h.make_node('MatMul', ['p', 'v'], ['y'])]
    io = [f32('q', [2, heads, 'sq', d]), f32('k', [2, heads, 'sk', d]), f32('v', [2, heads, 'sk', 'dv'])]
    save(nodes, 'attention_bhsd', io, [f32('y', ['o0', 'o1', 'o2', 'o3'])], [scalar('scale', 1 / np.sqrt(d))], opset=13)
    # Near miss: the probabilities are a graph output too.
    nodes = [h.make_node('Transpose', ['k'], ['kt'], perm=[0, 1, 3, 2]),
             h.make_node('MatMul', ['q', 'kt'], ['qk']),
             h.make_node('Mul', ['qk', 'scale'], ['scaled']),
             h.make_node('Softmax', ['scaled'], ['p'], axis=-1),
             h.make_node('MatMul', ['p', 'v'], ['y'])]
    io = [f32('q', [2, heads, 5, d]), f32('k', [2, heads, 7, d]), f32('v', [2, heads, 7, d])]
    save(nodes, 'attention_shared', io, [f32('y', ['o0', 'o1', 'o2', 'o3']), f32('p', ['p0', 'p1', 'p2', 'p3'])], [scalar('scale', 1 / np.sqrt(d))])
    # A mask of any broadcastable shape (the tests feed one per query row, [.., sq, 1], and a full one).
    nodes = [h.make_node('Transpose', ['k'], ['kt'], perm=[0, 1, 3, 2]),
             h.make_node('MatMul', ['q', 'kt'], ['qk']),
             h.make_node('Mul', ['qk', 'scale'], ['scaled']),
             h.make_node('Add', ['scaled', 'mask'], ['masked']),
             h.make_node('Softmax', ['masked'], ['p'], axis=-1),
             h.make_node('MatMul', ['p', 'v'], ['y'])]
    io = [f32('q', [2, heads, 'sq', d]), f32('k', [2, heads, 'sk', d]), f32('v', [2, heads, 'sk', d]),
          f32('mask', ['m0', 'm1', 'm2', 'm3'])]
    save(nodes, 'attention_anymask', io, [f32('y', ['o0', 'o1', 'o2', 'o3'])], [scalar('scale', 1 / np.sqrt(d))])


def fuse_elementwise():
    r = np.random.default_rng(17)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # PP-OCR's block: Conv, a per-channel affine Mul/Add, then hard-swish decomposed as x * clip(x + 3, 0, 6) / 6
    # (x read twice): one FusedConv. The scale is a graph input, so conv-affine-fold (which changes bits) leaves
    # the chain to fuse-elementwise in fast mode too; its constant is still drawn, so later models keep their bytes.
    w, b, _, t = arr('w', (6, 4, 3, 3)), arr('b', (6,)), arr('s', (1, 6, 1, 1), 0.5, 2), arr('t', (1, 6, 1, 1))
    inits = [w, b, t, scalar('three', 3), scalar('zero', 0), scalar('six', 6)]
    nodes = [h.make_node('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1]),
             h.make_node('Mul', ['c', 's'], ['cs']), h.make_node('Add', ['cs', 't'], ['a']),
             h.make_node('Add', ['a', 'three'], ['a3']), h.make_node('Clip', ['a3', 'zero', 'six'], ['cl']),
             h.make_node('Mul', ['a', 'cl'], ['m']), h.make_node('Div', ['m', 'six'], ['y'])]
    save(nodes, 'ew_conv_hardswish', [f32('x', ['n', 4, 'h', 'w']), f32('s', [1, 6, 1, 1])], [f32('y', ['o0', 'o1', 'o2', 'o3'])], inits)

    # ResNet's residual: Add(Conv(x), x) then Relu, the skip read contiguously per output plane; a depthwise Conv
    # with a LeakyRelu and a HardSigmoid after it.
    inits = [arr('w', (5, 5, 1, 1)), arr('wd', (5, 1, 3, 3)), arr('bd', (5,))]
    nodes = [h.make_node('Conv', ['x', 'w'], ['c']), h.make_node('Add', ['c', 'x'], ['a']),
             h.make_node('Relu', ['a'], ['y']),
             h.make_node('Conv', ['y', 'wd', 'bd'], ['d'], group=5, pads=[1, 1, 1, 1]),
             h.make_node('LeakyRelu', ['d'], ['l'], alpha=0.2),
             h.make_node('HardSigmoid', ['l'], ['z'], alpha=0.3, beta=0.4)]
    save(nodes, 'ew_conv_residual', [f32('x', [2, 5, 'h', 'w'])], [f32('z', ['o0', 'o1', 'o2', 'o3'])], inits)

    # Program inputs a Conv cannot walk per output plane: a row vector [1, 1, 1, W] (varies along the plane), and
    # one that broadcasts the result to a larger batch. Both run the program after the convolution.
    inits = [arr('w', (3, 2, 1, 3)), arr('row', (1, 1, 1, 9))]
    nodes = [h.make_node('Conv', ['x', 'w'], ['c'], pads=[0, 1, 0, 1]),
             h.make_node('Mul', ['c', 'row'], ['m']), h.make_node('Tanh', ['m'], ['y1']),
             h.make_node('Conv', ['x', 'w'], ['c2'], pads=[0, 1, 0, 1]),
             h.make_node('Sub', ['c2', 'big'], ['s']), h.make_node('Sigmoid', ['s'], ['y2'])]
    save(nodes, 'ew_conv_fallback', [f32('x', [1, 2, 5, 9]), f32('big', [3, 3, 5, 9])],
         [f32('y1', ['a0', 'a1', 'a2', 'a3']), f32('y2', ['b0', 'b1', 'b2', 'b3'])], inits)

    # A chain from a graph input: SiLU (x * sigmoid(x)), Sub a constant, Neg (not fused), Relu, Min with a
    # broadcast input, Max with a [1, 1, 1]-shaped constant (kept an input: a one-element constant of rank
    # above 1 can still shape the result), Clip with only a lower bound. Near misses: the Sigmoid result is also
    # a graph output, so no group may hold it inside; and ReduceSum reads the Min result, so the group of Relu
    # and Min ends there and Max starts another.
    inits = [scalar('q', 0.25), nh.from_array(np.array([[[-0.5]]], np.float32), 'lo1'), scalar('lo', -0.3)]
    nodes = [h.make_node('Sigmoid', ['x'], ['sg']), h.make_node('Mul', ['x', 'sg'], ['si']),
             h.make_node('Sub', ['si', 'q'], ['sub']), h.make_node('Neg', ['sub'], ['ng']),
             h.make_node('Relu', ['ng'], ['rl']), h.make_node('Min', ['rl', 'v'], ['mn']),
             h.make_node('ReduceSum', ['mn'], ['rs'], keepdims=1),
             h.make_node('Max', ['mn', 'lo1'], ['mx']), h.make_node('Clip', ['mx', 'lo'], ['y'])]
    save(nodes, 'ew_chain', [f32('x', [3, 5, 17]), f32('v', [5, 1])],
         [f32('y', [3, 5, 17]), f32('sub', [3, 5, 17]), f32('rs', [1, 1, 1]), f32('sg', [3, 5, 17])], inits)

    # Integer element-wise chains are not fused (the program is float32 only).
    inits = [nh.from_array(np.array(3, np.int64), 'k'), nh.from_array(np.array(-2, np.int64), 'k2')]
    nodes = [h.make_node('Add', ['i', 'k'], ['a']), h.make_node('Mul', ['a', 'k2'], ['m']),
             h.make_node('Relu', ['m'], ['y'])]
    save(nodes, 'ew_int', [h.make_tensor_value_info('i', TP.INT64, [4, 3])],
         [h.make_tensor_value_info('y', TP.INT64, [4, 3])], inits)

    # Clip before opset 11 takes its bounds as attributes.
    nodes = [h.make_node('Clip', ['x'], ['c'], min=-0.5, max=0.75), h.make_node('Tanh', ['c'], ['t']),
             h.make_node('Mul', ['t', 'x'], ['y'])]
    save(nodes, 'ew_clip6', [f32('x', [4, 33])], [f32('y', [4, 33])], opset=10)


def squeeze_excitation():
    r = np.random.default_rng(23)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # MobileNetV3's squeeze-and-excitation: convolutions of 1x1 outputs (one value per plane), the second with
    # HardSigmoid, a per-channel scale [1, C, 1, 1] and the pooled values [N, C, 1, 1] as program inputs that
    # step one value per channel; then the excitation Mul, which broadcasts back to the planes.
    inits = [arr('w1', (5, 7, 1, 1)), arr('b1', (5,)), arr('w2', (7, 5, 1, 1)), arr('b2', (7,)),
             arr('s', (1, 7, 1, 1), 0.5, 2)]
    nodes = [h.make_node('GlobalAveragePool', ['x'], ['p']),
             h.make_node('Conv', ['p', 'w1', 'b1'], ['c1']), h.make_node('Relu', ['c1'], ['r']),
             h.make_node('Conv', ['r', 'w2', 'b2'], ['c2']),
             h.make_node('HardSigmoid', ['c2'], ['hs'], alpha=0.3, beta=0.4),
             h.make_node('Mul', ['hs', 's'], ['m']), h.make_node('Add', ['m', 'p'], ['g']),
             h.make_node('Mul', ['x', 'g'], ['y'])]
    save(nodes, 'ew_conv_se', [f32('x', ['n', 7, 'h', 'w'])], [f32('y', ['o0', 'o1', 'o2', 'o3']),
                                                             f32('g', ['g0', 'g1', 'g2', 'g3'])], inits)

    # The block as MobileNetV3 exports it: the excitation Mul joins the second convolution's program, whose
    # result it broadcasts back over the planes, so the program runs after the convolution over [N, C, H, W]
    # with the convolution's [N, C, 1, 1] values one per row.
    inits = [arr('v1', (3, 6, 1, 1)), arr('c1', (3,)), arr('v2', (6, 3, 1, 1)), arr('c2', (6,))]
    nodes = [h.make_node('GlobalAveragePool', ['x'], ['p']),
             h.make_node('Conv', ['p', 'v1', 'c1'], ['a1']), h.make_node('Relu', ['a1'], ['r']),
             h.make_node('Conv', ['r', 'v2', 'c2'], ['a2']),
             h.make_node('HardSigmoid', ['a2'], ['hs'], alpha=1 / 6, beta=0.5),
             h.make_node('Mul', ['x', 'hs'], ['y'])]
    save(nodes, 'ew_conv_se_scale', [f32('x', ['n', 6, 'h', 'w'])], [f32('y', ['o0', 'o1', 'o2', 'o3'])], inits)

    # A gate that is the convolution's value itself, times the planes (the program a Mul alone, its operands
    # the convolution's [N, C, 1, 1] result first and the planes second).
    inits = [arr('u1', (6, 6, 1, 1)), arr('d1', (6,))]
    nodes = [h.make_node('GlobalAveragePool', ['x'], ['p']), h.make_node('Conv', ['p', 'u1', 'd1'], ['a1']),
             h.make_node('Mul', ['a1', 'x'], ['y'])]
    save(nodes, 'ew_conv_se_plain', [f32('x', ['n', 6, 'h', 'w'])], [f32('y', ['o0', 'o1', 'o2', 'o3'])], inits)


def linear():
    r = np.random.default_rng(29)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # A transformer's linear layers: MatMul by constant weights, the bias [N], the residual of the result's shape
    # and Relu (150 columns: two column tiles) (one FusedMatMul, its program on the product's tiles); a bias [S, 1] that varies down the rows
    # (a FusedMatMul whose program runs after the product); a MatMul by a computed B (not fused: Add and Tanh
    # become a FusedElementwise).
    inits = [arr('w', (40, 150)), arr('b', (150,)), arr('w2', (150, 9)), arr('col', (5, 1))]
    nodes = [h.make_node('MatMul', ['x', 'w'], ['m']), h.make_node('Add', ['m', 'b'], ['mb']),
             h.make_node('Add', ['mb', 'res'], ['mr']), h.make_node('Relu', ['mr'], ['y']),
             h.make_node('MatMul', ['y', 'w2'], ['m2']), h.make_node('Mul', ['m2', 'col'], ['y2']),
             h.make_node('MatMul', ['y2', 'v'], ['m3']), h.make_node('Add', ['m3', 'b'], ['m3b']),
             h.make_node('Tanh', ['m3b'], ['y3'])]
    save(nodes, 'linear_epilogue', [f32('x', ['n', 5, 40]), f32('res', ['n', 5, 150]), f32('v', [9, 150])],
         [f32('y', ['a0', 'a1', 'a2']), f32('y3', ['b0', 'b1', 'b2'])], inits)


def register_epilogue():
    r = np.random.default_rng(31)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # Convolution epilogues the matrix product applies in registers (kernels-gemm.md section 7), each on another
    # path: a 1x1 with the bias, a residual and Relu (B read in place); the residual first and no tail; 200
    # output channels (packed panels) with LeakyRelu; a 3x1 convolution read in place over padded planes with
    # Clip; a strided 3x3 (panels filled from im2col) with Relu; no bias and HardSwish; the bias alone.
    inits = [arr('w1', (40, 8, 1, 1)), arr('b1', (40,)), arr('w3', (200, 8, 1, 1)), arr('b3', (200,)),
             arr('w4', (40, 8, 3, 1)), arr('b4', (40,)), arr('w5', (40, 8, 3, 3)), arr('b5', (40,)),
             scalar('lo', 0.0), scalar('hi', 0.5)]
    nodes = [h.make_node('Conv', ['x', 'w1', 'b1'], ['c1']), h.make_node('Add', ['c1', 'res'], ['a1']),
             h.make_node('Relu', ['a1'], ['y1']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c2']), h.make_node('Add', ['res', 'c2'], ['y2']),
             h.make_node('Conv', ['x', 'w3', 'b3'], ['c3']), h.make_node('LeakyRelu', ['c3'], ['y3'], alpha=0.1),
             h.make_node('Conv', ['x', 'w4', 'b4'], ['c4'], pads=[1, 0, 1, 0]),
             h.make_node('Clip', ['c4', 'lo', 'hi'], ['y4']),
             h.make_node('Conv', ['x', 'w5', 'b5'], ['c5'], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node('Relu', ['c5'], ['y5']),
             h.make_node('Conv', ['x', 'w1'], ['c6']), h.make_node('HardSwish', ['c6'], ['y6']),
             h.make_node('Conv', ['x', 'w4', 'b4'], ['y7'], pads=[1, 0, 1, 0])]
    outs = [f32(f'y{i}', [f'o{i}0', f'o{i}1', f'o{i}2', f'o{i}3']) for i in range(1, 8)]
    save(nodes, 'conv_register_epilogue', [f32('x', ['n', 8, 'h', 'w']), f32('res', ['n', 40, 'h', 'w'])], outs,
         inits)

    # Register epilogues with hard-swish as four steps and scalar steps after the tail (PP-OCRv4's blocks): B read
    # in place, hard-swish with Div by 6 (operands as exporters swap them), then Mul and Add; packed panels
    # without bias, hard-swish with Mul by 1/6, then Sub; a strided 3x3 (im2col panels), Relu, Mul and Add.
    inits = [arr('w1', (40, 8, 1, 1)), arr('b1', (40,)), arr('w3', (200, 8, 1, 1)), arr('w5', (40, 8, 3, 3)),
             arr('b5', (40,)), scalar('three', 3.0), scalar('zero', 0.0), scalar('six', 6.0),
             scalar('sixth', 1.0 / 6.0), scalar('k1', 0.75), scalar('k2', -0.25)]
    nodes = [h.make_node('Conv', ['x', 'w1', 'b1'], ['c1']), h.make_node('Add', ['three', 'c1'], ['a1']),
             h.make_node('Clip', ['a1', 'zero', 'six'], ['l1']), h.make_node('Mul', ['l1', 'c1'], ['m1']),
             h.make_node('Div', ['m1', 'six'], ['h1']), h.make_node('Mul', ['k1', 'h1'], ['p1']),
             h.make_node('Add', ['p1', 'k2'], ['y1']),
             h.make_node('Conv', ['x', 'w3'], ['c2']), h.make_node('Add', ['c2', 'three'], ['a2']),
             h.make_node('Clip', ['a2', 'zero', 'six'], ['l2']), h.make_node('Mul', ['c2', 'l2'], ['m2']),
             h.make_node('Mul', ['m2', 'sixth'], ['h2']), h.make_node('Sub', ['h2', 'k2'], ['y2']),
             h.make_node('Conv', ['x', 'w5', 'b5'], ['c3'], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node('Relu', ['c3'], ['r3']), h.make_node('Mul', ['r3', 'k1'], ['p3']),
             h.make_node('Add', ['k2', 'p3'], ['y3'])]
    outs = [f32(f'y{i}', [f'o{i}0', f'o{i}1', f'o{i}2', f'o{i}3']) for i in range(1, 4)]
    save(nodes, 'conv_register_hardswish', [f32('x', ['n', 8, 'h', 'w'])], outs, inits)


def conv_affine():
    r = np.random.default_rng(43)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # Folded (graph-passes.md section 3a): Mul by a one-element constant then Add with the constant first (y1, no
    # epilogue left); a grouped Conv without bias through Mul by [6, 1, 1], Sub of [1, 6, 1, 1] and Div by a
    # scalar, then Relu (y2, a FusedConv with Relu). Left alone: Mul by a row that varies along the plane (y3),
    # the constant minus the Conv (y4), a Conv output that is also a graph output (c5).
    inits = [arr('w1', (4, 3, 3, 3)), arr('b1', (4,)), arr('w2', (6, 1, 3, 3)), arr('s1', (1,), 0.5, 2),
             arr('k', (1,)), arr('sc', (6, 1, 1), 0.5, 2), arr('t', (1, 6, 1, 1)), arr('d', (1,), 1, 3),
             arr('row', (1, 1, 1, 9))]
    nodes = [h.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], pads=[1, 1, 1, 1]), h.make_node('Mul', ['c1', 's1'], ['m1']),
             h.make_node('Add', ['k', 'm1'], ['y1']),
             h.make_node('Conv', ['x', 'w2'], ['c2'], group=3, pads=[1, 1, 1, 1]),
             h.make_node('Mul', ['sc', 'c2'], ['m2']), h.make_node('Sub', ['m2', 't'], ['s2']),
             h.make_node('Div', ['s2', 'd'], ['d2']), h.make_node('Relu', ['d2'], ['y2']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c3'], pads=[1, 1, 1, 1]), h.make_node('Mul', ['c3', 'row'], ['y3']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c4'], pads=[1, 1, 1, 1]), h.make_node('Sub', ['k', 'c4'], ['y4']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c5'], pads=[1, 1, 1, 1]), h.make_node('Mul', ['c5', 's1'], ['y5'])]
    outs = [f32(n, [f'{n}0', f'{n}1', f'{n}2', f'{n}3']) for n in ('y1', 'y2', 'y3', 'y4', 'y5', 'c5')]
    save(nodes, 'conv_affine', [f32('x', [2, 3, 9, 9])], outs, inits)


def linear_gelu():
    r = np.random.default_rng(37)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # ONNX Gelu (opset 20) in fused programs: after a MatMul and its bias (the erf form, as in a transformer's
    # feed-forward layer), straight after a MatMul (the tanh form; 150 columns: two column tiles), and after an
    # Add of computed values (a FusedElementwise).
    inits = [arr('w', (40, 150)), arr('b', (150,)), arr('w2', (40, 150))]
    nodes = [h.make_node('MatMul', ['x', 'w'], ['m']), h.make_node('Add', ['m', 'b'], ['mb']),
             h.make_node('Gelu', ['mb'], ['y']),
             h.make_node('MatMul', ['x', 'w2'], ['m2']), h.make_node('Gelu', ['m2'], ['y2'], approximate='tanh'),
             h.make_node('Add', ['x', 'x'], ['xx']), h.make_node('Gelu', ['xx'], ['y3'])]
    save(nodes, 'linear_gelu', [f32('x', ['n', 5, 40])],
         [f32('y', ['a0', 'a1', 'a2']), f32('y2', ['b0', 'b1', 'b2']), f32('y3', ['c0', 'c1', 'c2'])], inits,
         opset=20)


def linear_gelu_step():
    r = np.random.default_rng(41)
    # A Gelu tail followed by steps by one value (GPT-style "0.5 * gelu" scalings, a clamp): the matrix product
    # applies Gelu to its stored tile, after the register steps, so nothing may follow it in registers
    # (ops/reg_form.cc); these steps stay in the program after it, in their order.
    inits = [nh.from_array(r.uniform(-1, 1, (40, 150)).astype(np.float32), 'w'),
             nh.from_array(r.uniform(-1, 1, (150,)).astype(np.float32), 'b'), scalar('s', 0.75),
             scalar('lo', 0.03125)]
    nodes = [h.make_node('MatMul', ['x', 'w'], ['m']), h.make_node('Add', ['m', 'b'], ['mb']),
             h.make_node('Gelu', ['mb'], ['g']), h.make_node('Mul', ['g', 's'], ['gs']),
             h.make_node('Max', ['gs', 'lo'], ['y'])]
    save(nodes, 'linear_gelu_step', [f32('x', ['n', 5, 40])], [f32('y', ['a0', 'a1', 'a2'])], inits, opset=20)


def batchnorm_affine():
    r = np.random.default_rng(23)

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    def bn(p, m):  # scale, bias, mean, var of m channels
        return [arr(p + 's', (m,), 0.5, 1.5), arr(p + 'b', (m,), -0.5, 0.5), arr(p + 'm', (m,), -0.5, 0.5),
                arr(p + 'v', (m,), 0.1, 2.0)]

    def bn_node(x, p, y, **kw):
        return h.make_node('BatchNormalization', [x, p + 's', p + 'b', p + 'm', p + 'v'], [y], **kw)

    # The batchnorm-affine pass (graph-passes.md section 3b): BatchNormalization as Mul and Add, which
    # fuse-elementwise then joins to the producer. A 1x1 Conv (B read in place), BN, Relu: in registers; a 3x3
    # with bias, BN (epsilon 1e-3), hard-swish as four steps: in registers; a Conv, BN, a residual, Relu: in
    # registers in exact mode, the program after the product in fast mode; BN after an Add of a per-channel constant (its rank known through the Add); BN
    # after a ConvTranspose; BN of a Conv output read twice (conv-batchnorm-fold leaves it in fast mode too);
    # near miss: BN with a mean that is a graph input stays.
    inits = [arr('w1', (40, 8, 1, 1)), arr('w5', (40, 8, 3, 3)), arr('b5', (40,)), arr('w2', (40, 8, 1, 1)),
             arr('b2', (40,)), arr('k', (40, 1, 1)), arr('wt', (8, 40, 2, 2)), scalar('three', 3.0),
             scalar('zero', 0.0), scalar('six', 6.0)]
    for i in range(1, 8):
        inits += bn(f'n{i}', 40)
    nodes = [h.make_node('Conv', ['x', 'w1'], ['c1']), bn_node('c1', 'n1', 'd1'), h.make_node('Relu', ['d1'], ['y1']),
             h.make_node('Conv', ['x', 'w5', 'b5'], ['c2'], pads=[1, 1, 1, 1]), bn_node('c2', 'n2', 'd2', epsilon=1e-3),
             h.make_node('Add', ['d2', 'three'], ['a2']), h.make_node('Clip', ['a2', 'zero', 'six'], ['l2']),
             h.make_node('Mul', ['d2', 'l2'], ['m2']), h.make_node('Div', ['m2', 'six'], ['y2']),
             h.make_node('Conv', ['x', 'w2', 'b2'], ['c3']), bn_node('c3', 'n3', 'd3'),
             h.make_node('Add', ['d3', 'res'], ['a3']), h.make_node('Relu', ['a3'], ['y3']),
             h.make_node('Conv', ['x', 'w1'], ['c4']), h.make_node('Add', ['c4', 'k'], ['a4']),
             bn_node('a4', 'n4', 'y4'),
             h.make_node('ConvTranspose', ['x', 'wt'], ['c5'], strides=[2, 2]), bn_node('c5', 'n5', 'y5'),
             h.make_node('Conv', ['x', 'w2'], ['c6']), bn_node('c6', 'n6', 'y6'), h.make_node('Sigmoid', ['c6'], ['z6']),
             h.make_node('Conv', ['x', 'w2'], ['c7']),
             h.make_node('BatchNormalization', ['c7', 'n7s', 'n7b', 'mean', 'n7v'], ['y7'])]
    outs = [f32(f'y{i}', [f'o{i}0', f'o{i}1', f'o{i}2', f'o{i}3']) for i in range(1, 8)]
    outs.append(f32('z6', ['p0', 'p1', 'p2', 'p3']))
    save(nodes, 'bn_affine', [f32('x', ['n', 8, 'h', 'w']), f32('res', ['n', 40, 'h', 'w']), f32('mean', [40])], outs,
         [i for i in inits if i.name not in ('n7m',)])


def register_scalar_steps():
    r = np.random.default_rng(29)  # its own generator: the models above keep their bytes

    def arr(name, shape, lo=-1.0, hi=1.0):
        return nh.from_array(r.uniform(lo, hi, shape).astype(np.float32), name)

    # Steps by one value before and after the tail in registers (kern::RegScalarStep): PP-LCNetV3's learnable
    # affine around hard-swish as four steps (B read in place); openWakeWord's LeakyRelu then Max with a
    # one-element tensor (packed panels, no bias); a strided 3x3 (im2col panels) with Max by a value written
    # first, Relu, then Min; Sub then Min with the value first and no tail; Max with +0, Mul, Add and Sub (two
    # steps before, two after); Max and Min with -0 written first after Relu and after Clip to [-1, 0], whose +0
    # outputs tell the operand orders apart. The first steps of y1 and y4 take one-element graph inputs (sv,
    # kv), which fast mode's conv-affine-fold leaves (a fold changes bits).
    inits = [arr('w1', (40, 8, 1, 1)), arr('b1', (40,)), arr('w3', (200, 8, 1, 1)), arr('w5', (40, 8, 3, 3)),
             arr('b5', (40,)), scalar('s', 0.75), scalar('k', -0.25), scalar('three', 3.0), scalar('zero', 0.0),
             scalar('six', 6.0), scalar('half', 0.5), scalar('nz', -0.0), scalar('mone', -1.0),
             nh.from_array(np.full((1, 1, 1, 1), -0.4, np.float32), 'floor')]
    nodes = [h.make_node('Conv', ['x', 'w1', 'b1'], ['c1']), h.make_node('Mul', ['c1', 'sv'], ['p1']),
             h.make_node('Add', ['kv', 'p1'], ['q1']), h.make_node('Add', ['q1', 'three'], ['a1']),
             h.make_node('Clip', ['a1', 'zero', 'six'], ['l1']), h.make_node('Mul', ['q1', 'l1'], ['m1']),
             h.make_node('Div', ['m1', 'six'], ['h1']), h.make_node('Mul', ['s', 'h1'], ['r1']),
             h.make_node('Add', ['r1', 'k'], ['y1']),
             h.make_node('Conv', ['x', 'w3'], ['c2']), h.make_node('LeakyRelu', ['c2'], ['l2'], alpha=0.2),
             h.make_node('Max', ['l2', 'floor'], ['y2']),
             h.make_node('Conv', ['x', 'w5', 'b5'], ['c3'], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node('Max', ['k', 'c3'], ['m3']), h.make_node('Relu', ['m3'], ['r3']),
             h.make_node('Min', ['r3', 'half'], ['y3']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c4']), h.make_node('Sub', ['c4', 'kv'], ['s4']),
             h.make_node('Min', ['half', 's4'], ['y4']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c5']), h.make_node('Max', ['c5', 'zero'], ['m5']),
             h.make_node('Mul', ['m5', 's'], ['p5']), h.make_node('Add', ['p5', 'half'], ['a5']),
             h.make_node('Sub', ['a5', 'k'], ['y5']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c6']), h.make_node('Relu', ['c6'], ['r6']),
             h.make_node('Max', ['nz', 'r6'], ['y6']),
             h.make_node('Conv', ['x', 'w1', 'b1'], ['c7']), h.make_node('Clip', ['c7', 'mone', 'zero'], ['r7']),
             h.make_node('Min', ['nz', 'r7'], ['y7'])]
    outs = [f32(f'y{i}', [f'o{i}0', f'o{i}1', f'o{i}2', f'o{i}3']) for i in range(1, 8)]
    save(nodes, 'conv_register_scalar_steps', [f32('x', ['n', 8, 'h', 'w']), f32('sv', [1]), f32('kv', [1])], outs,
         inits)


def pow_square():
    # Squares written as Pow(x, 2) (torch exports of STFT magnitudes and variances) join element-wise groups as
    # x * x: a rank-0 exponent, float or integer; a lone square too (w). The near miss stays Pow: a rank-1
    # exponent [2] (it could shape the result). (Other exponents run in fast mode only.)
    inits = [scalar('two', 2), nh.from_array(np.array(2, np.int64), 'two_i'),
             nh.from_array(np.array([2], np.float32), 'two_v')]
    nodes = [h.make_node('Pow', ['x', 'two'], ['px']), h.make_node('Pow', ['y', 'two_i'], ['py']),
             h.make_node('Add', ['px', 'py'], ['s']),
             h.make_node('Pow', ['z', 'two_v'], ['pz']), h.make_node('Pow', ['z', 'two'], ['w'])]
    save(nodes, 'ew_pow_square', [f32('x', [3, 5, 17]), f32('y', [3, 5, 17]), f32('z', [4])],
         [f32('s', [3, 5, 17]), f32('pz', [4]), f32('w', [4])], inits)


def body_passes():
    # The passes rewrite subgraphs too (Silero VAD v5 runs its whole network in an If): the then branch holds a
    # Conv + Relu on weights of its own Constant nodes, the else branch a nested If (on input e) whose branches hold
    # a square and add, and a SiLU; the top level has nothing to fuse. Each branch reads x from the enclosing graph.
    r = np.random.default_rng(31)  # its own generator: the models above keep their bytes
    w = (r.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32)
    b = (r.standard_normal(4) * 0.1).astype(np.float32)

    def out(name):
        return [f32(name, [1, 4, 11, 13])]

    conv = h.make_graph([h.make_node('Constant', [], ['w'], value=nh.from_array(w, 'w')),
                         h.make_node('Constant', [], ['b'], value=nh.from_array(b, 'b')),
                         h.make_node('Conv', ['x', 'w', 'b'], ['cv'], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                         h.make_node('Relu', ['cv'], ['y1'])], 'conv_relu', [], out('y1'))
    square = h.make_graph([h.make_node('Constant', [], ['two'], value=scalar('two', 2)),
                           h.make_node('Constant', [], ['one'], value=scalar('one', 1)),
                           h.make_node('Pow', ['x', 'two'], ['p']), h.make_node('Add', ['p', 'one'], ['y2'])],
                          'square_add', [], out('y2'))
    silu = h.make_graph([h.make_node('Sigmoid', ['x'], ['s']), h.make_node('Mul', ['x', 's'], ['y3'])], 'silu', [],
                        out('y3'))
    nested = h.make_graph([h.make_node('If', ['e'], ['y4'], then_branch=square, else_branch=silu)], 'nested', [],
                          out('y4'))
    save([h.make_node('If', ['c'], ['y'], then_branch=conv, else_branch=nested)], 'body_passes',
         [f32('x', [1, 4, 11, 13])] + [h.make_tensor_value_info(n, TP.BOOL, []) for n in 'ce'], out('y'))


def body_loop_inputs():
    # A Loop body's declared inputs prove nothing (the Loop passes whatever it carries, unchecked): its Relu and
    # Mul of a carried value declared float stay unfused. The same chain on a capture of the graph's float input
    # (the other output) fuses.
    body = h.make_graph([h.make_node('Relu', ['v'], ['r']), h.make_node('Mul', ['r', 'v'], ['v2']),
                         h.make_node('Relu', ['x'], ['rx']), h.make_node('Mul', ['rx', 'x'], ['s']),
                         h.make_node('Identity', ['cond'], ['cond2'])], 'loop_body',
                        [h.make_tensor_value_info('i', TP.INT64, []), h.make_tensor_value_info('cond', TP.BOOL, []),
                         f32('v', [2, 3])],
                        [h.make_tensor_value_info('cond2', TP.BOOL, []), f32('v2', [2, 3]), f32('s', [2, 3])])
    save([h.make_node('Loop', ['n', '', 'v0'], ['v_final', 's_all'], body=body)], 'body_loop_inputs',
         [h.make_tensor_value_info('n', TP.INT64, []), f32('v0', [2, 3]), f32('x', [2, 3])],
         [f32('v_final', [2, 3]), f32('s_all', [None, 2, 3])])


def cast_square():
    # A Cast to float32 proves its output float32 (its `to` says so): the square of an integer input's cast joins
    # the Add after it (Silero VAD v5 squares its STFT's parts after such casts). Cast itself stays.
    nodes = [h.make_node('Cast', ['x'], ['f'], to=TP.FLOAT), h.make_node('Pow', ['f', 'two'], ['p']),
             h.make_node('Add', ['p', 'f'], ['y'])]
    save(nodes, 'ew_cast_square', [h.make_tensor_value_info('x', TP.INT32, [3, 7])], [f32('y', [3, 7])],
         [scalar('two', 2)])


if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    gelu()
    conv_bn()
    attention()
    fuse_elementwise()
    squeeze_excitation()
    linear()
    register_epilogue()
    conv_affine()
    linear_gelu()
    linear_gelu_step()
    batchnorm_affine()
    register_scalar_steps()
    pow_square()
    body_passes()
    cast_square()
    body_loop_inputs()
