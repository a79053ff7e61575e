#!/usr/bin/python3
"""Writes the small control-flow / sequence / optional models of testdata/ctrlflow (used by
tests/cpp/ctrlflow_test.cc and tests/js/values.test.mjs). Run: /usr/bin/python3 tools/gen_ctrlflow_models.py"""
import os

import onnx
from onnx import TensorProto as TP
from onnx import helper as h

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'testdata', 'ctrlflow')


def save(graph, name, opset=17):
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)], producer_name='gen_ctrlflow_models')
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def loop_accumulate():
    # acc <- acc + step (step is read from the outer graph: a capture); every acc is a scan output.
    body = h.make_graph(
        [h.make_node('Add', ['acc_in', 'step'], ['acc_out']),
         h.make_node('Identity', ['cond_in'], ['cond_out']),
         h.make_node('Identity', ['acc_out'], ['scan_out'])],
        'body',
        [h.make_tensor_value_info('i', TP.INT64, []), h.make_tensor_value_info('cond_in', TP.BOOL, []),
         h.make_tensor_value_info('acc_in', TP.FLOAT, [2])],
        [h.make_tensor_value_info('cond_out', TP.BOOL, []), h.make_tensor_value_info('acc_out', TP.FLOAT, [2]),
         h.make_tensor_value_info('scan_out', TP.FLOAT, [2])])
    g = h.make_graph(
        [h.make_node('Loop', ['M', 'cond', 'acc0'], ['acc', 'accs'], name='the_loop', body=body)],
        'loop_accumulate',
        [h.make_tensor_value_info('M', TP.INT64, []), h.make_tensor_value_info('cond', TP.BOOL, []),
         h.make_tensor_value_info('acc0', TP.FLOAT, [2]), h.make_tensor_value_info('step', TP.FLOAT, [2])],
        [h.make_tensor_value_info('acc', TP.FLOAT, [2]), h.make_tensor_value_info('accs', TP.FLOAT, ['iters', 2])])
    save(g, 'loop_accumulate.onnx')


def loop_stop_after_two():
    # cond_out = i < 1: the body asks to stop after its second iteration whatever the trip count.
    one = h.make_tensor('one', TP.INT64, [], [1])
    body = h.make_graph(
        [h.make_node('Less', ['i', 'one'], ['cond_out']),
         h.make_node('Identity', ['i'], ['scan_out'])],
        'body',
        [h.make_tensor_value_info('i', TP.INT64, []), h.make_tensor_value_info('cond_in', TP.BOOL, [])],
        [h.make_tensor_value_info('cond_out', TP.BOOL, []), h.make_tensor_value_info('scan_out', TP.INT64, [])],
        [one])
    g = h.make_graph(
        [h.make_node('Loop', ['M', 'cond'], ['iters'], name='stopper', body=body)],
        'loop_stop_after_two',
        [h.make_tensor_value_info('M', TP.INT64, []), h.make_tensor_value_info('cond', TP.BOOL, [])],
        [h.make_tensor_value_info('iters', TP.INT64, ['count'])])
    save(g, 'loop_stop_after_two.onnx')


def loop_bad_shapes():
    # The scan output of iteration i is Range(0, i + 1): its shape changes, which stacking cannot hold.
    one = h.make_tensor('one', TP.INT64, [], [1])
    zero = h.make_tensor('zero', TP.INT64, [], [0])
    body = h.make_graph(
        [h.make_node('Add', ['i', 'one'], ['n']),
         h.make_node('Range', ['zero', 'n', 'one'], ['scan_out']),
         h.make_node('Identity', ['cond_in'], ['cond_out'])],
        'body',
        [h.make_tensor_value_info('i', TP.INT64, []), h.make_tensor_value_info('cond_in', TP.BOOL, [])],
        [h.make_tensor_value_info('cond_out', TP.BOOL, []), h.make_tensor_value_info('scan_out', TP.INT64, ['len'])],
        [one, zero])
    g = h.make_graph(
        [h.make_node('Loop', ['M', ''], ['ranges'], name='ragged_loop', body=body)],
        'loop_bad_shapes',
        [h.make_tensor_value_info('M', TP.INT64, [])],
        [h.make_tensor_value_info('ranges', TP.INT64, ['a', 'b'])])
    save(g, 'loop_bad_shapes.onnx')


def loop_with_sin():
    # A body with an operator that has no exact kernel: exact sessions must refuse the model, naming it.
    body = h.make_graph(
        [h.make_node('Sin', ['x_in'], ['x_out']), h.make_node('Identity', ['cond_in'], ['cond_out'])],
        'body',
        [h.make_tensor_value_info('i', TP.INT64, []), h.make_tensor_value_info('cond_in', TP.BOOL, []),
         h.make_tensor_value_info('x_in', TP.FLOAT, [1])],
        [h.make_tensor_value_info('cond_out', TP.BOOL, []), h.make_tensor_value_info('x_out', TP.FLOAT, [1])])
    g = h.make_graph(
        [h.make_node('Loop', ['M', '', 'x0'], ['x'], name='sin_loop', body=body)],
        'loop_with_sin',
        [h.make_tensor_value_info('M', TP.INT64, []), h.make_tensor_value_info('x0', TP.FLOAT, [1])],
        [h.make_tensor_value_info('x', TP.FLOAT, [1])])
    save(g, 'loop_with_sin.onnx')


def sequence_optional():
    # seq_out = seq with x appended; n = its length; has = whether opt holds a tensor; opt_out = opt.
    seq_t = h.make_sequence_type_proto(h.make_tensor_type_proto(TP.FLOAT, ['k']))
    opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, ['k']))
    g = h.make_graph(
        [h.make_node('SequenceInsert', ['seq', 'x'], ['seq_out']),
         h.make_node('SequenceLength', ['seq_out'], ['n']),
         h.make_node('OptionalHasElement', ['opt'], ['has']),
         h.make_node('Identity', ['opt'], ['opt_out'])],
        'sequence_optional',
        [h.make_value_info('seq', seq_t), h.make_tensor_value_info('x', TP.FLOAT, ['k']),
         h.make_value_info('opt', opt_t)],
        [h.make_value_info('seq_out', seq_t), h.make_tensor_value_info('n', TP.INT64, []),
         h.make_tensor_value_info('has', TP.BOOL, []), h.make_value_info('opt_out', opt_t)])
    save(g, 'sequence_optional.onnx', opset=18)


def sequence_ops():
    # SplitToSequence / ConcatFromSequence / SequenceAt / SequenceErase / SequenceConstruct / SequenceEmpty.
    seq_t = h.make_sequence_type_proto(h.make_tensor_type_proto(TP.FLOAT, ['r', 'c']))
    g = h.make_graph(
        [h.make_node('SplitToSequence', ['x', 'split23'], ['parts'], axis=1),
         h.make_node('SplitToSequence', ['x'], ['rows'], axis=0, keepdims=0),
         h.make_node('SplitToSequence', ['x', 'two'], ['chunks'], axis=-1),
         h.make_node('ConcatFromSequence', ['rows'], ['stacked'], axis=1, new_axis=1),
         h.make_node('ConcatFromSequence', ['parts'], ['joined'], axis=1),
         h.make_node('SequenceAt', ['parts', 'minus_one'], ['last']),
         h.make_node('SequenceErase', ['parts', 'zero'], ['erased']),
         h.make_node('SequenceLength', ['erased'], ['erased_len']),
         h.make_node('SequenceConstruct', ['x', 'x'], ['pair']),
         h.make_node('SequenceLength', ['pair'], ['pair_len']),
         h.make_node('SequenceEmpty', [], ['none'], dtype=TP.FLOAT),
         h.make_node('SequenceLength', ['none'], ['none_len'])],
        'sequence_ops',
        [h.make_tensor_value_info('x', TP.FLOAT, [2, 5])],
        [h.make_value_info('chunks', seq_t), h.make_tensor_value_info('stacked', TP.FLOAT, [5, 2]),
         h.make_tensor_value_info('joined', TP.FLOAT, [2, 5]), h.make_tensor_value_info('last', TP.FLOAT, [2, 3]),
         h.make_tensor_value_info('erased_len', TP.INT64, []), h.make_tensor_value_info('pair_len', TP.INT64, []),
         h.make_tensor_value_info('none_len', TP.INT64, [])],
        [h.make_tensor('split23', TP.INT64, [2], [2, 3]), h.make_tensor('two', TP.INT64, [], [2]),
         h.make_tensor('minus_one', TP.INT64, [], [-1]), h.make_tensor('zero', TP.INT32, [], [0])])
    save(g, 'sequence_ops.onnx', opset=17)


def if_captures_constants():
    # then: x . W + C, with W an outer initializer and C an outer Constant node (both captured, so the body
    # takes them as weights); else: x - C. x [1, 2], W [[1, 2], [3, 4]], C [10, 20].
    then_g = h.make_graph(
        [h.make_node('MatMul', ['x', 'W'], ['xw'], name='then_matmul'),
         h.make_node('Add', ['xw', 'C'], ['y_then'], name='then_add')],
        'then_g', [], [h.make_tensor_value_info('y_then', TP.FLOAT, [1, 2])])
    else_g = h.make_graph(
        [h.make_node('Sub', ['x', 'C'], ['y_else'], name='else_sub')],
        'else_g', [], [h.make_tensor_value_info('y_else', TP.FLOAT, [1, 2])])
    g = h.make_graph(
        [h.make_node('Constant', [], ['C'], name='the_constant',
                     value=h.make_tensor('c', TP.FLOAT, [2], [10, 20])),
         h.make_node('If', ['cond'], ['y'], name='the_if', then_branch=then_g, else_branch=else_g)],
        'if_captures_constants',
        [h.make_tensor_value_info('cond', TP.BOOL, []), h.make_tensor_value_info('x', TP.FLOAT, [1, 2])],
        [h.make_tensor_value_info('y', TP.FLOAT, [1, 2])],
        [h.make_tensor('W', TP.FLOAT, [2, 2], [1, 2, 3, 4])])
    save(g, 'if_captures_constants.onnx')


def lstm_models():
    # The same LSTM (input 3, hidden 2, weights below) fed x directly (a static step) and fed the output of an
    # If (a dynamic step: prepared per run unless the run state keeps what it prepared).
    w = [0.1 * ((i * 7) % 11 - 5) for i in range(1 * 8 * 3)]
    r = [0.1 * ((i * 5) % 7 - 3) for i in range(1 * 8 * 2)]
    b = [0.05 * ((i * 3) % 5 - 2) for i in range(1 * 16)]
    inits = [h.make_tensor('W', TP.FLOAT, [1, 8, 3], w), h.make_tensor('R', TP.FLOAT, [1, 8, 2], r),
             h.make_tensor('B', TP.FLOAT, [1, 16], b)]
    lstm = h.make_node('LSTM', ['xs', 'W', 'R', 'B'], ['Y', 'Y_h'], name='the_lstm', hidden_size=2)
    outs = [h.make_tensor_value_info('Y', TP.FLOAT, ['seq', 1, 1, 2]), h.make_tensor_value_info('Y_h', TP.FLOAT, [1, 1, 2])]
    plain = h.make_graph([h.make_node('Identity', ['x'], ['xs']), lstm], 'lstm_plain',
                         [h.make_tensor_value_info('x', TP.FLOAT, ['seq', 1, 3])], outs, inits)
    save(plain, 'lstm_plain.onnx')
    then_g = h.make_graph([h.make_node('Identity', ['x'], ['t'])], 'then_g', [],
                          [h.make_tensor_value_info('t', TP.FLOAT, ['seq', 1, 3])])
    else_g = h.make_graph([h.make_node('Neg', ['x'], ['e'])], 'else_g', [],
                          [h.make_tensor_value_info('e', TP.FLOAT, ['seq', 1, 3])])
    after_if = h.make_graph(
        [h.make_node('If', ['cond'], ['xs'], name='the_if', then_branch=then_g, else_branch=else_g), lstm],
        'lstm_after_if',
        [h.make_tensor_value_info('cond', TP.BOOL, []), h.make_tensor_value_info('x', TP.FLOAT, ['seq', 1, 3])],
        outs, inits)
    save(after_if, 'lstm_after_if.onnx')

    # Silero VAD legacy's shape (issue 13): the LSTM inside an If inside an If, reading x and its initial
    # states from the outer graph two levels up, and the weights as outer initializers. cond true runs it on x,
    # false on -x; tests/cpp/ctrlflow_test.cc holds numpy's Y_h and Y_c.
    states = [h.make_tensor_value_info('h0', TP.FLOAT, [1, 1, 2]), h.make_tensor_value_info('c0', TP.FLOAT, [1, 1, 2])]
    state_outs = [h.make_tensor_value_info('Y_h', TP.FLOAT, [1, 1, 2]), h.make_tensor_value_info('Y_c', TP.FLOAT, [1, 1, 2])]

    def lstm_on(x, suffix):
        return h.make_node('LSTM', [x, 'W', 'R', 'B', '', 'h0', 'c0'], ['', 'Y_h' + suffix, 'Y_c' + suffix],
                           name='lstm' + suffix, hidden_size=2)

    def body(nodes, suffix):
        return h.make_graph(nodes, 'body' + suffix, [], [h.make_tensor_value_info(o.name + suffix, TP.FLOAT, [1, 1, 2])
                                                          for o in state_outs])

    inner_then = body([lstm_on('x', '_a')], '_a')
    inner_else = body([h.make_node('Neg', ['x'], ['nx']), lstm_on('nx', '_b')], '_b')
    outer_then = body([h.make_node('If', ['cond'], ['Y_h_c', 'Y_c_c'], name='inner_if', then_branch=inner_then,
                                   else_branch=inner_else)], '_c')
    outer_else = body([h.make_node('Neg', ['x'], ['mx']), lstm_on('mx', '_d')], '_d')
    nested = h.make_graph(
        [h.make_node('If', ['cond'], ['Y_h', 'Y_c'], name='outer_if', then_branch=outer_then, else_branch=outer_else)],
        'lstm_in_nested_if',
        [h.make_tensor_value_info('cond', TP.BOOL, []), h.make_tensor_value_info('x', TP.FLOAT, ['seq', 1, 3])] + states,
        state_outs, inits)
    save(nested, 'lstm_in_nested_if.onnx')


if __name__ == '__main__':
    os.makedirs(OUT, exist_ok=True)
    loop_accumulate()
    loop_stop_after_two()
    loop_bad_shapes()
    loop_with_sin()
    sequence_optional()
    sequence_ops()
    if_captures_constants()
    lstm_models()
