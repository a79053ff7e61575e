#!/usr/bin/python3
"""A plain double-precision reference for CTC decoding (docs/ctc.md), and the generator of testdata/ctc/cases.json.

Written from the rules of docs/ctc.md, independently of the engine's code: greedy decoding with numpy's exp;
a prefix beam search over a dictionary keyed by label tuples that remembers every prefix it ever created (the
plain form of section 3's creation order), in Python floats with section 5's exp, ln and logadd written out
(Python floats are IEEE doubles without fused operations, so exact ties come out as exact ties, as in the
engine); and for small sizes the best text found by enumerating every alignment with numpy's logaddexp, an
independent check of the beam's accuracy. The tests (tests/cpp/ctc_cases_test.cc, tests/js/ctc.test.mjs)
require the engine to match within the tolerances of docs/ctc.md section 6.

In the JSON, a score of -inf is written as null (JSON has no infinities).

  /usr/bin/python3 tools/ctc_reference.py [OUTDIR]     (default testdata/ctc: cases.json and ties.json)
"""
import itertools
import json
import math
import os
import struct
import sys

import numpy as np

NEG_INF = -math.inf


def logaddexp(a, b):
    return float(np.logaddexp(a, b))


def det_exp(x):
    """docs/ctc.md section 5, exp."""
    if not x > -700.0:
        return 0.0
    x = min(x, 700.0)
    k = math.floor(x * 1.4426950408889634 + 0.5)
    r = (x - k * 6.93147180369123816490e-01) - k * 1.90821492927058770002e-10
    p = 1.0 / math.factorial(13)
    for n in range(12, -1, -1):
        p = p * r + 1.0 / math.factorial(n)
    return p * struct.unpack("<d", struct.pack("<Q", (k + 1023) << 52))[0]


def det_ln(x):
    """docs/ctc.md section 5, ln (for x > 0)."""
    if x == 0.0:
        return -math.inf
    e = 0
    if x < 2.2250738585072014e-308:
        x, e = x * 18014398509481984.0, -54
    bits = struct.unpack("<Q", struct.pack("<d", x))[0]
    e += ((bits >> 52) & 0x7FF) - 1023
    m = struct.unpack("<d", struct.pack("<Q", (bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000))[0]
    if m > 1.4142135623730951:
        m, e = m * 0.5, e + 1
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    q = 1.0 / 19.0
    for j in range(8, -1, -1):
        q = q * z + 1.0 / (2 * j + 1)
    return float(e) * 0.6931471805599453 + (2.0 * s) * q


def logadd(a, b):
    """docs/ctc.md section 5, logadd."""
    if b > a:
        a, b = b, a
    if b == -math.inf or b - a < -40.0:
        return a
    return a + det_ln(1.0 + det_exp(b - a))


def log_probs(row, kind):
    """lp(j) of one step (docs/ctc.md section 4), with section 5's exp and ln."""
    z = [float(v) for v in row]
    if kind == "logProbabilities":
        return z
    m = max(z)
    total = 0.0
    for v in z:
        total = total + det_exp(v - m)
    ln_total = det_ln(total)
    return [(v - m) - ln_total for v in z]


def numpy_log_probs(row, kind):
    """lp(j) with numpy's exp and log, for the enumeration."""
    z = np.asarray(row, dtype=np.float64)
    if kind == "logProbabilities":
        return z
    m = z.max()
    return (z - m) - math.log(float(np.exp(z - m).sum()))


def greedy(scores, kind, blank):
    """Best path (docs/ctc.md section 2) with double-precision probabilities."""
    steps = scores.shape[0]
    runs, probs = [], []
    previous = -1
    for t in range(steps):
        z = scores[t].astype(np.float64)
        best = int(np.argmax(z))  # the first maximum: the lowest index on ties
        if kind == "logits":
            p = 1.0 / float(np.exp(z - z[best]).sum())
        else:
            p = min(math.exp(z[best]), 1.0)
        probs.append(p)
        if best != blank:
            if best == previous:
                runs[-1][2] = t
                runs[-1][3] = max(runs[-1][3], p)
            else:
                runs.append([best, t, t, p])
        previous = best
    confidence = sum(r[3] for r in runs) / len(runs) if runs else 0.0
    return {"labels": [r[0] for r in runs], "runs": runs, "stepProbabilities": probs, "confidence": confidence}


def beam_search(scores, kind, blank, width, top_n):
    """Prefix beam search (docs/ctc.md section 3), prefixes as tuples in dictionaries."""
    created = {(): 0}  # prefix -> creation order, kept for the whole search like the engine's tree
    beam = [((), 0.0, NEG_INF)]
    classes = scores.shape[1]
    for t in range(scores.shape[0]):
        lp = log_probs(scores[t], kind)
        nxt = {}  # prefix -> [pb, pnb]

        def add(prefix, which, value):
            if prefix not in created:
                created[prefix] = len(created)
            entry = nxt.setdefault(prefix, [NEG_INF, NEG_INF])
            entry[which] = logadd(entry[which], value)

        for prefix, pb, pnb in beam:
            total = logadd(pb, pnb)
            add(prefix, 0, total + lp[blank])
            c = prefix[-1] if prefix else None
            if c is not None:
                add(prefix, 1, pnb + lp[c])
            for j in range(classes):
                if j == blank:
                    continue
                value = (pb if j == c else total) + lp[j]
                if value == NEG_INF:
                    continue
                add(prefix + (j,), 1, value)
        ranked = sorted(nxt.items(), key=lambda kv: (-logadd(kv[1][0], kv[1][1]), created[kv[0]]))
        beam = [(p, v[0], v[1]) for p, v in ranked[:width]]
    out = []
    for prefix, pb, pnb in beam[:top_n]:
        lp_total = logadd(pb, pnb)
        conf = det_exp(lp_total / len(prefix)) if prefix else 0.0
        out.append({"labels": list(prefix), "logProbability": lp_total, "confidence": conf})
    return out


def collapse(path, blank):
    out, previous = [], None
    for k in path:
        if k != previous and k != blank:
            out.append(k)
        previous = k
    return tuple(out)


def exhaustive(scores, kind, blank):
    """The text of largest total probability over every alignment (docs/ctc.md section 3)."""
    steps, classes = scores.shape
    lps = [numpy_log_probs(scores[t], kind) for t in range(steps)]
    totals = {}
    for path in itertools.product(range(classes), repeat=steps):
        lp = sum(lps[t][k] for t, k in enumerate(path))
        text = collapse(path, blank)
        totals[text] = logaddexp(totals.get(text, NEG_INF), lp)
    best = max(totals.items(), key=lambda kv: kv[1])
    return {"labels": list(best[0]), "logProbability": best[1]}


def distinct_prefix_bound(steps, classes):
    return sum((classes - 1) ** n for n in range(steps + 1))


def make_case(index):
    seed = 1000 + index
    rng = np.random.default_rng(seed)
    kind = "logits" if index % 2 == 0 else "logProbabilities"
    large = index >= 34  # a few sizes beyond enumeration: the beam against the reference only
    ties = 26 <= index < 32
    classes = int(rng.integers(20, 40)) if large else int(rng.integers(2, 7))
    # Small cases stay small enough to enumerate (classes^steps <= 20000), except every seventh.
    most = 9 if index % 7 == 5 else min(9, int(math.log(20000) / math.log(classes)))
    steps = int(rng.integers(20, 50)) if large else int(rng.integers(2, most + 1))
    steps, classes = {1: (0, classes), 2: (steps, 1), 4: (1, classes)}.get(index, (steps, classes))
    batch = None if index % 3 == 0 else int(rng.integers(1, 4))
    blank = 0 if index % 4 == 0 else int(rng.integers(0, classes))
    width = [1, 2, 3, 4, 8, 16][index % 6]
    top_n = int(rng.integers(1, min(width, 4) + 1))
    scale = [1.0, 3.0, 6.0][index % 3]
    items = batch or 1
    z = rng.standard_normal((items, steps, classes)) * scale
    z[:, :, blank] += 1.5  # recognisers emit mostly blanks
    if ties:  # two score values only: equal prefixes scores abound, so creation order decides rankings
        z = np.log(rng.integers(1, 3, (items, steps, classes)).astype(np.float64))
    if kind == "logProbabilities":
        m = z.max(axis=2, keepdims=True) if classes > 0 else 0.0
        z = (z - m) - np.log(np.exp(z - m).sum(axis=2, keepdims=True))
    z = z.astype(np.float32)
    if index % 5 == 3 and classes > 1 and steps > 0:  # some impossible classes (probability 0)
        mask = rng.random((items, steps, classes)) < 0.2
        mask[:, :, blank] = False
        z[mask] = -np.inf
    case = {
        "name": f"case{index:02d}",
        "seed": seed,
        "scores": kind,
        "blank": blank,
        "batch": batch,
        "steps": steps,
        "classes": classes,
        "beamWidth": width,
        "topN": top_n,
        "data": [None if v == -np.inf else float(v) for v in z.reshape(-1)],
        "greedy": [],
        "beam": [],
    }
    # Enumeration for small sizes, not where best texts may tie.
    small = not ties and classes**steps <= 20000 and distinct_prefix_bound(steps, classes) <= 4096
    if small:
        case["exhaustive"] = []
    for b in range(items):
        s = z[b]
        case["greedy"].append(greedy(s, kind, blank))
        case["beam"].append(beam_search(s, kind, blank, width, top_n))
        if small:
            case["exhaustive"].append(exhaustive(s, kind, blank))
    return case


def make_tie_case(index):
    """A small case whose scores take two or three values, so equal prefix scores are everywhere and the
    creation order (docs/ctc.md section 3) decides rankings, including prefixes pruned and created again."""
    seed = 50000 + index
    rng = np.random.default_rng(seed)
    classes = int(rng.integers(2, 6))
    steps = int(rng.integers(1, 9))
    blank = int(rng.integers(0, classes))
    width = int(rng.integers(1, 6))
    top_n = int(rng.integers(1, width + 1))
    kind = "logits" if index % 2 else "logProbabilities"
    z = np.log(rng.integers(1, 3 + index % 3, (steps, classes)).astype(np.float64))
    if kind == "logProbabilities":
        z = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    z = z.astype(np.float32)
    if index % 4 == 1:  # probability-0 classes: extensions created later than their parent's first visit
        mask = rng.random(z.shape) < 0.25
        mask[:, blank] = False
        z[mask] = -np.inf
    return {
        "name": f"tie{index:03d}",
        "seed": seed,
        "scores": kind,
        "blank": blank,
        "batch": None,
        "steps": steps,
        "classes": classes,
        "beamWidth": width,
        "topN": top_n,
        "data": [None if v == -np.inf else float(v) for v in z.reshape(-1)],
        "greedy": [greedy(z, kind, blank)],
        "beam": [beam_search(z, kind, blank, width, top_n)],
    }


def write(path, cases):
    with open(path, "w") as f:
        json.dump({"generator": "tools/ctc_reference.py", "cases": cases}, f, separators=(",", ":"))
        f.write("\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata", "ctc")
    os.makedirs(out, exist_ok=True)
    cases = [make_case(i) for i in range(40)]
    write(os.path.join(out, "cases.json"), cases)
    print(f"cases.json: {len(cases)} cases, {sum('exhaustive' in c for c in cases)} with the enumerated best text")
    ties = [make_tie_case(i) for i in range(300)]
    write(os.path.join(out, "ties.json"), ties)
    print(f"ties.json: {len(ties)} cases of tied scores")


if __name__ == "__main__":
    main()
