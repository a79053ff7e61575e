#!/usr/bin/python3
"""NumPy references for the operators of opsets newer than 17 (docs/ops-newer.md), written from the ONNX operator
documents, and the conformance cases made from them.

    /usr/bin/python3 tools/newer_ops_reference.py            checks the references on hand-worked cases
    /usr/bin/python3 tools/newer_ops_reference.py --write    also rewrites testdata/newer-ops/ (the cases)

The cases use the ONNX backend-test layout (node/<case>/model.onnx, test_data_set_0/input_N.pb, output_N.pb), so
tests/conformance' runner runs them like the backend cases (tools/conformance.sh does, in fast and exact mode,
native and wasm). Every expected output comes from the functions below, never from the engine.

The references compute in float64 and round once to the output type where the document gives a formula
(Mish, Swish), and repeat the document's float32 operations in its order where it gives a function body of
rounded steps (RotaryEmbedding); the moving operators (CenterCropPad, BitCast, TensorScatter) are exact.
"""
import os
import shutil
import sys

import numpy as np

F32 = np.float32

# ---- references (ops-newer.md cites the document of each) ----

def mish(x):
    """Mish-18: y = x * tanh(softplus(x)), softplus(x) = ln(1 + e^x)."""
    d = x.astype(np.float64)
    return (d * np.tanh(np.log1p(np.exp(d)))).astype(x.dtype)


def swish(x, alpha=1.0):
    """Swish-24: y = x * sigmoid(alpha * x)."""
    d = x.astype(np.float64)
    return (d / (1.0 + np.exp(-np.float64(F32(alpha)) * d))).astype(x.dtype)


def cumprod(x, axis, exclusive=0, reverse=0):
    """CumProd-26: inclusive or exclusive running product along axis, optionally from the end."""
    x = np.moveaxis(x, axis, -1)
    if reverse:
        x = x[..., ::-1]
    out = np.empty_like(x)
    acc = np.ones(x.shape[:-1], dtype=x.dtype)
    for j in range(x.shape[-1]):
        if exclusive:
            out[..., j] = acc
            acc = acc * x[..., j]
        else:
            acc = x[..., j] if j == 0 else acc * x[..., j]
            out[..., j] = acc
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


def bitcast(x, to):
    """BitCast-26: the same little-endian bytes read as `to` (same width)."""
    return np.frombuffer(x.astype(x.dtype.newbyteorder("<")).tobytes(), dtype=np.dtype(to).newbyteorder("<")).reshape(
        x.shape)


def center_crop_pad(x, shape, axes=None):
    """CenterCropPad-18: crop start floor((n - t) / 2); pad start floor((t - n) / 2), the odd pixel at the end."""
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
    out_shape = list(x.shape)
    src = [slice(None)] * x.ndim
    dst = [slice(None)] * x.ndim
    for a, t in zip(axes, shape):
        n = x.shape[a]
        out_shape[a] = t
        if t < n:
            b = (n - t) // 2
            src[a] = slice(b, b + t)
        elif t > n:
            b = (t - n) // 2
            dst[a] = slice(b, b + n)
    y = np.zeros(out_shape, dtype=x.dtype)
    y[tuple(dst)] = x[tuple(src)]
    return y


def col2im(x, image_shape, block_shape, dilations=None, pads=None, strides=None):
    """Col2Im-18: input [N, C * prod(block), L]; block offset k (row-major) of block position l (row-major) goes
    to image position l_d * stride_d - pad_begin_d + k_d * dilation_d and is added there (dropped in the pads).
    Sums in increasing k, float32 from +0 (the engine's order; the document leaves it open)."""
    k = len(image_shape)
    dil = dilations or [1] * k
    pad = pads or [0] * (2 * k)
    st = strides or [1] * k
    grid = [(image_shape[d] + pad[d] + pad[d + k] - dil[d] * (block_shape[d] - 1) - 1) // st[d] + 1 for d in range(k)]
    n, ck, length = x.shape
    taps = int(np.prod(block_shape))
    c = ck // taps
    assert length == int(np.prod(grid))
    y = np.zeros([n, c] + list(image_shape), dtype=F32)
    for b in range(n):
        for ch in range(c):
            for ki, koff in enumerate(np.ndindex(*block_shape)):
                for li, loff in enumerate(np.ndindex(*grid)):
                    pos = tuple(loff[d] * st[d] - pad[d] + koff[d] * dil[d] for d in range(k))
                    if all(0 <= pos[d] < image_shape[d] for d in range(k)):
                        y[(b, ch) + pos] = F32(y[(b, ch) + pos] + x[b, ch * taps + ki, li])
    return y


def rotary_embedding(x, cos_cache, sin_cache, position_ids=None, interleaved=0, num_heads=0, rotary_dim=0):
    """RotaryEmbedding-23 (its function body, float32 steps): first = cos*x1 - sin*x2, second = sin*x1 + cos*x2 on
    the halves (or even/odd entries) of the first rotary_dim entries of each head; the rest is copied."""
    if x.ndim == 3:
        b, s, hidden = x.shape
        xv = x.reshape(b, s, num_heads, hidden // num_heads)
    else:
        xv = np.transpose(x, (0, 2, 1, 3))  # [B, S, H, D]
    d = xv.shape[3]
    r = rotary_dim or d
    cos = cos_cache[position_ids] if position_ids is not None else cos_cache  # [B, S, r/2]
    sin = sin_cache[position_ids] if position_ids is not None else sin_cache
    cos = cos[:, :, None, :]
    sin = sin[:, :, None, :]
    rot = xv[..., :r]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :r // 2], rot[..., r // 2:]
    first = cos * x1 - sin * x2
    second = sin * x1 + cos * x2
    out = xv.copy()
    if interleaved:
        out[..., 0:r:2] = first
        out[..., 1:r:2] = second
    else:
        out[..., :r // 2] = first
        out[..., r // 2:r] = second
    return out.reshape(x.shape) if x.ndim == 3 else np.transpose(out, (0, 2, 1, 3))


def tensor_scatter(past, update, write_indices=None, mode="linear", axis=-2):
    """TensorScatter-24: update row s of every index prefix goes to row write_indices[b] + s of the cache axis
    (modulo its extent when circular)."""
    axis %= past.ndim
    w = np.zeros(past.shape[0], np.int64) if write_indices is None else write_indices
    out = past.copy()
    for prefix in np.ndindex(*past.shape[:axis]):
        for s in range(update.shape[axis]):
            at = w[prefix[0]] + s
            if mode == "circular":
                at %= past.shape[axis]
            out[prefix + (at,)] = update[prefix + (s,)]
    return out


def attention(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, scale=None, is_causal=0, q_heads=0,
              kv_heads=0, softcap=0.0):
    """Attention-23/24 in float64 (results rounded to float32): K, V = concat(past, new); S = (Q s)(K s)^T with
    s = sqrt(scale), scale 1/sqrt(head size) by default; softcap * tanh(S / softcap) when softcap > 0; plus the
    mask (a bool mask: 0 where true, -inf where false; columns past a short mask: -inf), -inf for later keys
    under is_causal (offset: the past length, or nonpad - q_len with nonpad and no past) and -inf at or past
    nonpad_kv_seqlen; softmax over the keys; times V. Grouped heads: query head h reads kv head h // (Hq / Hkv).
    Returns Y, present_key, present_value."""
    three_d = q.ndim == 3
    if three_d:
        split = lambda t, h: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(0, 2, 1, 3)
        q, k, v = split(q, q_heads), split(k, kv_heads), split(v, kv_heads)
    pk = np.concatenate([past_k, k], axis=2) if past_k is not None else k
    pv = np.concatenate([past_v, v], axis=2) if past_v is not None else v
    b, hq, sq, d = q.shape
    hkv, t = pk.shape[1], pk.shape[2]
    sc = np.float64(F32(np.sqrt(F32(scale if scale is not None else 1 / np.sqrt(d)))))
    kk = np.repeat(pk.astype(np.float64), hq // hkv, axis=1)
    vv = np.repeat(pv.astype(np.float64), hq // hkv, axis=1)
    s = np.matmul(q.astype(np.float64) * sc, np.swapaxes(kk * sc, 2, 3))
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    bias = np.zeros((b, hq, sq, t))
    if mask is not None:
        m = np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_ else mask.astype(np.float64)
        m = np.pad(m, [(0, 0)] * (m.ndim - 1) + [(0, t - m.shape[-1])], constant_values=-np.inf)
        bias = bias + m
    i = np.arange(sq).reshape(1, 1, sq, 1)
    j = np.arange(t).reshape(1, 1, 1, t)
    if is_causal:
        off = past_k.shape[2] if past_k is not None else (
            (nonpad.reshape(b, 1, 1, 1) - sq) if nonpad is not None else 0)
        bias = bias + np.where(j > i + off, -np.inf, 0.0)
    if nonpad is not None:
        bias = bias + np.where(j < nonpad.reshape(b, 1, 1, 1), 0.0, -np.inf)
    s = s + bias
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    y = np.matmul(e / e.sum(axis=-1, keepdims=True), vv).astype(F32)
    if three_d:
        y = y.transpose(0, 2, 1, 3).reshape(b, sq, -1)
    return y, pk, pv


def narrow_float(code, ebits, mbits, bias, kind):
    """A float8 / float4 code as a float, from the format: 1 sign bit, ebits exponent bits (bias), mbits mantissa
    bits; kind 'fn' (all ones besides the sign is NaN, no infinity), 'fnuz' (0x80 is the only NaN, no -0),
    'ieee' (exponent all ones: infinity or NaN), 'plain' (float4e2m1: neither)."""
    bits = 1 + ebits + mbits
    neg = (code >> (bits - 1)) & 1
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    if kind == "fnuz" and code == 0x80:
        return np.nan
    if kind == "fn" and e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
        return np.nan
    if kind == "ieee" and e == (1 << ebits) - 1:
        return np.nan if m else (-np.inf if neg else np.inf)
    v = m * 2.0 ** (1 - bias - mbits) if e == 0 else (m + (1 << mbits)) * 2.0 ** (e - bias - mbits)
    return -v if neg else v


# ---- hand-worked checks of the references (values worked on paper, see each comment) ----

def close(got, want, tol=1e-6):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol), (got, want)


def check_by_hand():
    # Mish(0) = 0; Mish(1) = tanh(ln(1 + e)) = tanh(1.3132617) = 0.8650984; Mish(-1) = -tanh(ln(1 + 1/e))
    # = -tanh(0.3132617) = -0.3034014.
    close(mish(np.array([0, 1, -1], F32)), [0, 0.8650984, -0.3034014])
    # Swish(1) = 1 / (1 + e^-1) = 0.7310586; alpha 0.5: Swish(2) = 2 * sigmoid(1) = 1.4621172.
    close(swish(np.array([1], F32)), [0.7310586])
    close(swish(np.array([2], F32), 0.5), [1.4621172])
    # The CumProd document's examples.
    x = np.array([1, 2, 3], F32)
    close(cumprod(x, 0), [1, 2, 6])
    close(cumprod(x, 0, exclusive=1), [1, 1, 2])
    close(cumprod(x, 0, reverse=1), [6, 6, 3])
    close(cumprod(x, 0, exclusive=1, reverse=1), [6, 3, 1])
    # 1.0f is 0x3F800000 = 1065353216.
    assert bitcast(np.array([1.0], F32), np.int32)[0] == 1065353216
    # [1..5] cropped to 2: start (5 - 2) // 2 = 1 -> [2, 3]; padded to 8: start (8 - 5) // 2 = 1 -> [0,1..5,0,0].
    close(center_crop_pad(np.arange(1, 6, dtype=F32), [2]), [2, 3])
    close(center_crop_pad(np.arange(1, 6, dtype=F32), [8]), [0, 1, 2, 3, 4, 5, 0, 0])
    # Col2Im 1-D, image 3, block 2: blocks at 0 and 1; column (k, l): image[l + k] += x. x = [[1, 2], [10, 20]]
    # (k = 0 row, k = 1 row): image = [1, 2 + 10, 20] = [1, 12, 20].
    close(col2im(np.array([[[1, 2], [10, 20]]], F32), [3], [2]), [[[1, 12, 20]]])
    # RotaryEmbedding, one head of 4, halves, cos 0.5, sin 2 at the one position: x = [1, 2, 3, 4],
    # x1 = [1, 2], x2 = [3, 4]: first = 0.5*[1, 2] - 2*[3, 4] = [-5.5, -7]; second = 2*[1, 2] + 0.5*[3, 4]
    # = [3.5, 6]. Interleaved: x1 = [1, 3], x2 = [2, 4]: first = [0.5 - 4, 1.5 - 8] = [-3.5, -6.5],
    # second = [2 + 1, 6 + 2] = [3, 8], stored alternately.
    x = np.array([1, 2, 3, 4], F32).reshape(1, 1, 1, 4)
    cs, sn = np.full((1, 1, 2), 0.5, F32), np.full((1, 1, 2), 2, F32)
    close(rotary_embedding(x, cs, sn).ravel(), [-5.5, -7, 3.5, 6])
    close(rotary_embedding(x, cs, sn, interleaved=1).ravel(), [-3.5, 3, -6.5, 8])
    # TensorScatter: cache rows [0, 0, 0, 0], update [7, 8] at 3, circular -> rows 3 and 0: [8, 0, 0, 7].
    past = np.zeros((1, 4, 1), F32)
    upd = np.array([7, 8], F32).reshape(1, 2, 1)
    close(tensor_scatter(past, upd, np.array([3]), "circular").ravel(), [8, 0, 0, 7])
    # float8e4m3fn 0x7E = 2^8 * 1.75 = 448, e5m2 0x7B = 2^15 * 1.75 = 57344, float4e2m1 0x7 = 2^2 * 1.5 = 6.
    assert narrow_float(0x7E, 4, 3, 7, "fn") == 448 and narrow_float(0x7B, 5, 2, 15, "ieee") == 57344
    assert narrow_float(0x7, 2, 1, 1, "plain") == 6 and narrow_float(0xFE, 4, 3, 7, "fn") == -448
    # Attention, one head, Q = [1, 0], K = I, V = [[1, 2], [3, 4]], scale 1: scores [1, 0], weights
    # [e / (e + 1), 1 / (e + 1)] = [0.7310586, 0.2689414], Y = [0.7310586 + 3 * 0.2689414, 1.4621172 + 4 * 0.2689414]
    # = [1.5378828, 2.5378828]. Causal with no past: key 1 is later than query 0, Y = V[0] = [1, 2]. A float
    # mask [0, 1] makes the scores [1, 1]: Y = [2, 3].
    qa = np.array([1, 0], F32).reshape(1, 1, 1, 2)
    ka = np.eye(2, dtype=F32).reshape(1, 1, 2, 2)
    va = np.array([1, 2, 3, 4], F32).reshape(1, 1, 2, 2)
    close(attention(qa, ka, va, scale=1.0)[0].ravel(), [1.5378828, 2.5378828])
    close(attention(qa, ka, va, scale=1.0, is_causal=1)[0].ravel(), [1, 2])
    close(attention(qa, ka, va, mask=np.array([0, 1], F32), scale=1.0)[0].ravel(), [2, 3])


# ---- conformance cases (testdata/newer-ops, the backend-test layout) ----

def write_cases(root):
    import onnx
    from onnx import helper as h, numpy_helper as nh

    shutil.rmtree(root, ignore_errors=True)
    elem = {np.dtype(F32): onnx.TensorProto.FLOAT, np.dtype(np.float16): onnx.TensorProto.FLOAT16,
            np.dtype(np.int64): onnx.TensorProto.INT64, np.dtype(np.int32): onnx.TensorProto.INT32,
            np.dtype(np.int16): onnx.TensorProto.INT16, np.dtype(np.uint8): onnx.TensorProto.UINT8,
            np.dtype(np.bool_): onnx.TensorProto.BOOL, np.dtype(np.int8): onnx.TensorProto.INT8}

    def case(name, op, opset, inputs, outputs, inits=(), **attrs):
        """inputs / outputs: lists of (name, array); an input named '' is omitted (an optional input); inits:
        TensorProtos given as initializers."""
        d = os.path.join(root, "node", "test_" + name)
        os.makedirs(os.path.join(d, "test_data_set_0"))
        given = [(n, a) for n, a in inputs if n and a is not None]
        node = h.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **attrs)
        vi = lambda n, a: h.make_tensor_value_info(n, elem[a.dtype], list(a.shape))
        g = h.make_graph([node], name, [vi(n, a) for n, a in given], [vi(n, a) for n, a in outputs],
                         initializer=list(inits))
        onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8),
                  os.path.join(d, "model.onnx"))
        for prefix, values in (("input", given), ("output", outputs)):
            for i, (_, a) in enumerate(values):
                with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (prefix, i)), "wb") as f:
                    f.write(nh.from_array(np.ascontiguousarray(a)).SerializeToString())

    rng = np.random.default_rng(13)
    x = np.array([-20, -3, -1, -0.5, -1e-3, 0, 1e-3, 0.5, 1, 3, 10, 20], F32).reshape(3, 4)
    case("mish", "Mish", 18, [("x", x)], [("y", mish(x))])
    xh = np.array([-4, -1, -0.25, 0, 0.25, 1, 2, 4], np.float16)
    case("mish_float16", "Mish", 18, [("x", xh)], [("y", mish(xh))])
    case("swish", "Swish", 24, [("x", x)], [("y", swish(x))])
    case("swish_alpha", "Swish", 24, [("x", x)], [("y", swish(x, 0.5))], alpha=0.5)

    c = np.array([[1, 2, 3, 4], [-1, 0.5, 2, -3], [2, 2, 2, 2]], F32)
    ax = np.array(1, np.int64)
    case("cumprod_axis1", "CumProd", 26, [("x", c), ("axis", ax)], [("y", cumprod(c, 1))])
    case("cumprod_exclusive_reverse", "CumProd", 26, [("x", c), ("axis", np.array(-1, np.int64))],
         [("y", cumprod(c, 1, exclusive=1, reverse=1))], exclusive=1, reverse=1)
    ci = np.array([[3, -2], [5, 7], [-1, 4]], np.int64)
    case("cumprod_int64_axis0", "CumProd", 26, [("x", ci), ("axis", np.array(0, np.int64))],
         [("y", cumprod(ci, 0))])

    bf = np.array([1.0, -2.5, 0.0, -0.0, np.inf, 3.0e-42], F32)
    case("bitcast_float_to_int32", "BitCast", 26, [("x", bf)], [("y", bitcast(bf, np.int32))],
         to=onnx.TensorProto.INT32)
    bi = np.array([0x3F800000, 0x7F800000, 1, -1082130432], np.int32)
    case("bitcast_int32_to_float", "BitCast", 26, [("x", bi)], [("y", bitcast(bi, F32))], to=onnx.TensorProto.FLOAT)
    bh = np.array([1.0, -2.0, 65504, 0.5], np.float16)
    case("bitcast_float16_to_int16", "BitCast", 26, [("x", bh)], [("y", bitcast(bh, np.int16))],
         to=onnx.TensorProto.INT16)

    img = rng.standard_normal((3, 5, 6)).astype(F32)
    for name, shape, axes in (("crop", [2, 3, 4], None), ("pad", [4, 8, 9], None), ("crop_and_pad", [3, 2, 9], None),
                              ("axes", [4, 3], [2, -2])):
        kw = {"axes": axes} if axes else {}
        case("center_crop_pad_" + name, "CenterCropPad", 18, [("x", img), ("shape", np.array(shape, np.int64))],
             [("y", center_crop_pad(img, shape, axes))], **kw)

    for name, image, block, kw in (("2d", [5, 5], [1, 5], {}), ("2d_pads_strides", [5, 4], [2, 2],
                                                              {"pads": [1, 0, 1, 1], "strides": [2, 1]}),
                                   ("2d_dilations", [6, 6], [2, 2], {"dilations": [2, 3]}),
                                   ("1d", [7], [3], {"strides": [2]}), ("3d", [3, 3, 2], [2, 2, 1], {})):
        k = len(image)
        grid = [(image[d] + (kw.get("pads", [0] * 2 * k)[d] + kw.get("pads", [0] * 2 * k)[d + k])
                 - kw.get("dilations", [1] * k)[d] * (block[d] - 1) - 1) // kw.get("strides", [1] * k)[d] + 1
                for d in range(k)]
        cx = rng.standard_normal((2, 2 * int(np.prod(block)), int(np.prod(grid)))).astype(F32)
        case("col2im_" + name, "Col2Im", 18,
             [("x", cx), ("image_shape", np.array(image, np.int64)), ("block_shape", np.array(block, np.int64))],
             [("y", col2im(cx, image, block, **kw))], **kw)

    b, hh, s, d = 2, 3, 4, 8
    q = rng.standard_normal((b, hh, s, d)).astype(F32)
    ang = rng.uniform(0, 6, (10, d // 2))
    cos, sin = np.cos(ang).astype(F32), np.sin(ang).astype(F32)
    pos = np.array([[0, 1, 2, 3], [5, 6, 7, 9]], np.int64)
    rope = [("x", q), ("cos_cache", cos), ("sin_cache", sin), ("position_ids", pos)]
    case("rotary_embedding", "RotaryEmbedding", 23, rope, [("y", rotary_embedding(q, cos, sin, pos))])
    case("rotary_embedding_interleaved", "RotaryEmbedding", 23, rope,
         [("y", rotary_embedding(q, cos, sin, pos, interleaved=1))], interleaved=1)
    cos4, sin4 = cos[:, :2].copy(), sin[:, :2].copy()
    case("rotary_embedding_partial", "RotaryEmbedding", 23,
         [("x", q), ("cos_cache", cos4), ("sin_cache", sin4), ("position_ids", pos)],
         [("y", rotary_embedding(q, cos4, sin4, pos, rotary_dim=4))], rotary_embedding_dim=4)
    q3 = q.transpose(0, 2, 1, 3).reshape(b, s, hh * d).copy()
    cos3, sin3 = cos[pos], sin[pos]
    case("rotary_embedding_3d_no_position_ids", "RotaryEmbedding", 23,
         [("x", q3), ("cos_cache", cos3), ("sin_cache", sin3)],
         [("y", rotary_embedding(q3, cos3, sin3, num_heads=hh))], num_heads=hh)

    past = rng.standard_normal((2, 3, 5, 4)).astype(F32)
    upd = rng.standard_normal((2, 3, 2, 4)).astype(F32)
    wi = np.array([3, 1], np.int64)
    case("tensor_scatter_linear", "TensorScatter", 24, [("past", past), ("update", upd), ("write_indices", wi)],
         [("present", tensor_scatter(past, upd, wi))])
    wc = np.array([4, -1], np.int64)
    case("tensor_scatter_circular", "TensorScatter", 24, [("past", past), ("update", upd), ("write_indices", wc)],
         [("present", tensor_scatter(past, upd, wc, "circular"))], mode="circular")
    pa = rng.standard_normal((2, 6, 3)).astype(F32)
    ua = rng.standard_normal((2, 2, 3)).astype(F32)
    case("tensor_scatter_axis1_no_indices", "TensorScatter", 24, [("past", pa), ("update", ua)],
         [("present", tensor_scatter(pa, ua, None, axis=1))], axis=1)

    # Narrow initializers only cast (ops-newer.md section 10): float8 and 4-bit codes built as raw bytes (onnx 1.12
    # has no names for these types), expected values decoded from the formats above.
    def narrow_init(code, raw, n):
        t = onnx.TensorProto()
        t.name, t.data_type, t.raw_data = "w", code, bytes(raw)
        t.dims.append(n)
        return t

    e4 = [0x00, 0x01, 0x38, 0x7E, 0xFE, 0x80, 0x7F, 0x47]
    case("cast_float8e4m3fn_initializer", "Cast", 21, [("w", None)],
         [("y", np.array([narrow_float(c, 4, 3, 7, "fn") for c in e4], F32))], inits=[narrow_init(17, e4, 8)],
         to=onnx.TensorProto.FLOAT)
    e5 = [0x01, 0x3C, 0x7B, 0x7C, 0xFC, 0xC0]
    case("cast_float8e5m2_initializer_to_float16", "Cast", 21, [("w", None)],
         [("y", np.array([narrow_float(c, 5, 2, 15, "ieee") for c in e5], np.float16))],
         inits=[narrow_init(19, e5, 6)], to=onnx.TensorProto.FLOAT16)
    packed = [0x21, 0xF8, 0x07]  # elements 1, 2, 8, 15, 7 (low nibble first; the last high nibble unused)
    nib = [1, 2, 8, 15, 7]
    case("cast_int4_initializer", "Cast", 21, [("w", None)],
         [("y", np.array([v - 16 if v >= 8 else v for v in nib], np.int32))], inits=[narrow_init(22, packed, 5)],
         to=onnx.TensorProto.INT32)
    case("cast_uint4_initializer_to_float", "Cast", 21, [("w", None)], [("y", np.array(nib, F32))],
         inits=[narrow_init(21, packed, 5)], to=onnx.TensorProto.FLOAT)
    case("cast_float4e2m1_initializer", "Cast", 21, [("w", None)],
         [("y", np.array([narrow_float(v, 2, 1, 1, "plain") for v in nib], F32))], inits=[narrow_init(23, packed, 5)],
         to=onnx.TensorProto.FLOAT)

    aq = rng.standard_normal((2, 4, 3, 8)).astype(F32)
    ak = rng.standard_normal((2, 2, 5, 8)).astype(F32)
    av = rng.standard_normal((2, 2, 5, 6)).astype(F32)
    y, _, _ = attention(aq, ak, av)
    case("attention_gqa", "Attention", 23, [("q", aq), ("k", ak), ("v", av)], [("y", y)])
    am = rng.standard_normal((3, 4)).astype(F32)
    y, _, _ = attention(aq, ak, av, mask=am, scale=0.25, softcap=2.0)
    case("attention_float_mask_short_scale_softcap", "Attention", 23, [("q", aq), ("k", ak), ("v", av), ("mask", am)],
         [("y", y)], scale=0.25, softcap=2.0)
    pk = rng.standard_normal((2, 2, 2, 8)).astype(F32)
    pv = rng.standard_normal((2, 2, 2, 6)).astype(F32)
    bm = rng.standard_normal((2, 1, 3, 7)) > -0.5
    bm[..., 0] = True  # no row masked everywhere
    y, kp, vp = attention(aq, ak, av, mask=bm, past_k=pk, past_v=pv, is_causal=1)
    case("attention_past_bool_mask_causal", "Attention", 23,
         [("q", aq), ("k", ak), ("v", av), ("mask", bm), ("past_key", pk), ("past_value", pv)],
         [("y", y), ("present_key", kp), ("present_value", vp)], is_causal=1)
    q3 = aq.transpose(0, 2, 1, 3).reshape(2, 3, 32).copy()
    k3 = ak.transpose(0, 2, 1, 3).reshape(2, 5, 16).copy()
    v3 = av.transpose(0, 2, 1, 3).reshape(2, 5, 12).copy()
    y, _, _ = attention(q3, k3, v3, q_heads=4, kv_heads=2, is_causal=1)
    case("attention_3d_causal", "Attention", 23, [("q", q3), ("k", k3), ("v", v3)], [("y", y)], q_num_heads=4,
         kv_num_heads=2, is_causal=1)
    npd = np.array([5, 4], np.int64)
    y, _, _ = attention(aq, ak, av, nonpad=npd, is_causal=1)
    case("attention_nonpad_causal", "Attention", 24,
         [("q", aq), ("k", ak), ("v", av), ("", None), ("", None), ("", None), ("nonpad_kv_seqlen", npd)], [("y", y)],
         is_causal=1)


def main():
    check_by_hand()
    print("newer_ops_reference: hand-worked cases pass")
    if "--write" in sys.argv[1:]:
        root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "testdata", "newer-ops")
        write_cases(root)
        print("newer_ops_reference: wrote", root)


if __name__ == "__main__":
    main()
