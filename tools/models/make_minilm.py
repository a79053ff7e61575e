#!/usr/bin/env /usr/bin/python3
"""Writes a text encoder with the shape and node pattern of a torch-exported MiniLM-L6 (sentence-transformers
all-MiniLM-L6-v2 as torch.onnx.export writes it at opset 17): 6 layers, hidden 384, 12 heads of 32, intermediate
1536, vocabulary 30522, 512 positions. Weights are random (seeded, BERT's N(0, 0.02) initialisation), so the file
is ours to generate and never needs downloading or committing.

Node pattern kept from the export: Gather embeddings (word, position via Slice of a position-id buffer, token type),
LayerNormalization, the extended additive mask (1 - mask) * finfo(float32).min, per layer Q/K/V MatMul + Add with
Reshape targets built from Shape/Gather/Concat (symbolic batch and sequence), Transpose, MatMul(Q, K^T), Div by
sqrt(32), Add mask, Softmax(-1), MatMul V, output projection, residual Add, LayerNormalization, the feed-forward with
the erf form of GELU (x * 0.5 * (1 + erf(x / sqrt 2)) as Div, Erf, Add, Mul, Mul), residual, LayerNormalization.

usage: make_minilm.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, HEAD_DIM, INTER, LAYERS, VOCAB, POSITIONS = 384, 12, 32, 1536, 6, 30522, 512


def main(out):
    rng = np.random.default_rng(20261129)
    inits, nodes = [], []
    counter = [0]

    def name(prefix):
        counter[0] += 1
        return f"/{prefix}_{counter[0]}"

    def const(value, prefix="c"):
        n = name(prefix)
        inits.append(numpy_helper.from_array(np.asarray(value), n))
        return n

    def weight(shape, prefix, std=0.02):
        return const(rng.normal(0.0, std, size=shape).astype(np.float32), prefix)

    def node(op, inputs, prefix=None, **attrs):
        out_name = name(prefix or op)
        nodes.append(helper.make_node(op, inputs, [out_name], name=out_name + "_node", **attrs))
        return out_name

    def layer_norm(x, prefix):
        gamma = const((1.0 + rng.normal(0.0, 0.02, HIDDEN)).astype(np.float32), prefix + ".weight")
        beta = const(rng.normal(0.0, 0.02, HIDDEN).astype(np.float32), prefix + ".bias")
        return node("LayerNormalization", [x, gamma, beta], prefix, axis=-1, epsilon=1e-12)

    def linear(x, n_in, n_out, prefix):
        w = weight((n_in, n_out), prefix + ".weight")
        b = const(rng.normal(0.0, 0.02, n_out).astype(np.float32), prefix + ".bias")
        return node("Add", [node("MatMul", [x, w], prefix + "/MatMul"), b], prefix + "/Add")

    # Symbolic batch and sequence read back from the input, as the exporter does.
    ids_shape = node("Shape", ["input_ids"], "Shape")
    batch = node("Gather", [ids_shape, const(np.array(0, np.int64))], "batch", axis=0)
    seq = node("Gather", [ids_shape, const(np.array(1, np.int64))], "seq", axis=0)
    batch_1 = node("Unsqueeze", [batch, const(np.array([0], np.int64))], "batch_1")
    seq_1 = node("Unsqueeze", [seq, const(np.array([0], np.int64))], "seq_1")

    # Embeddings.
    word = node("Gather", [weight((VOCAB, HIDDEN), "word_embeddings"), "input_ids"], "word", axis=0)
    position_ids = const(np.arange(POSITIONS, dtype=np.int64)[None, :], "position_ids")
    pos_slice = node("Slice", [position_ids, const(np.array([0], np.int64)), seq_1, const(np.array([1], np.int64))],
                     "pos_ids")
    pos = node("Gather", [weight((POSITIONS, HIDDEN), "position_embeddings"), pos_slice], "pos", axis=0)
    tok = node("Gather", [weight((2, HIDDEN), "token_type_embeddings"), "token_type_ids"], "tok", axis=0)
    h = node("Add", [node("Add", [word, tok], "emb_add"), pos], "emb_add")
    h = layer_norm(h, "embeddings.LayerNorm")

    # Extended attention mask: [B, 1, 1, S], 0 where attended, float32 min where padded.
    m = node("Unsqueeze", ["attention_mask", const(np.array([1, 2], np.int64))], "mask_unsq")
    m = node("Cast", [m], "mask_cast", to=TensorProto.FLOAT)
    m = node("Sub", [const(np.array(1.0, np.float32)), m], "mask_sub")
    mask = node("Mul", [m, const(np.array(np.finfo(np.float32).min, np.float32))], "mask_mul")

    heads_shape = node("Concat", [batch_1, seq_1, const(np.array([HEADS, HEAD_DIM], np.int64))], "heads_shape", axis=0)
    merged_shape = node("Concat", [batch_1, seq_1, const(np.array([HIDDEN], np.int64))], "merged_shape", axis=0)
    scale = const(np.array(np.sqrt(HEAD_DIM), np.float32), "scale")

    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"
        q = linear(h, HIDDEN, HIDDEN, p + ".attention.self.query")
        k = linear(h, HIDDEN, HIDDEN, p + ".attention.self.key")
        v = linear(h, HIDDEN, HIDDEN, p + ".attention.self.value")
        q = node("Transpose", [node("Reshape", [q, heads_shape], p + "/q_reshape")], p + "/q_t", perm=[0, 2, 1, 3])
        k = node("Transpose", [node("Reshape", [k, heads_shape], p + "/k_reshape")], p + "/k_t", perm=[0, 2, 3, 1])
        v = node("Transpose", [node("Reshape", [v, heads_shape], p + "/v_reshape")], p + "/v_t", perm=[0, 2, 1, 3])
        scores = node("Div", [node("MatMul", [q, k], p + "/qk"), scale], p + "/scaled")
        probs = node("Softmax", [node("Add", [scores, mask], p + "/masked")], p + "/softmax", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], p + "/ctx")], p + "/ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merged_shape], p + "/ctx_merged")
        attn = linear(ctx, HIDDEN, HIDDEN, p + ".attention.output.dense")
        h = layer_norm(node("Add", [attn, h], p + "/attn_residual"), p + ".attention.output.LayerNorm")
        inter = linear(h, HIDDEN, INTER, p + ".intermediate.dense")
        g = node("Erf", [node("Div", [inter, const(np.array(np.sqrt(2.0), np.float32))], p + "/gelu_div")], p + "/erf")
        g = node("Add", [g, const(np.array(1.0, np.float32))], p + "/gelu_add")
        g = node("Mul", [node("Mul", [inter, g], p + "/gelu_mul"), const(np.array(0.5, np.float32))], p + "/gelu")
        ffn = linear(g, INTER, HIDDEN, p + ".output.dense")
        h = layer_norm(node("Add", [ffn, h], p + "/ffn_residual"), p + ".output.LayerNorm")

    nodes.append(helper.make_node("Identity", [h], ["last_hidden_state"], name="output_identity"))
    sym = ["batch_size", "sequence_length"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, sym)
              for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, sym + [HIDDEN])
    graph = helper.make_graph(nodes, "minilm_l6_like", inputs, [output], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onemodel-make_minilm")
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
