#!/usr/bin/env python3
"""Fits the rational erfcx used by the fast erf-form GELU (engine/kernels/vmath-inl.h GeluErfFast).

erfcx(a) = exp(a^2) * erfc(a) on a in [0, 10] as P(t) / Q(t), t = a / 10, P of degree 5 and Q of degree 6 with
P(0) = Q(0) = 1, by iterated linearised least squares on relative error with Lawson reweighting (double
precision, Chebyshev-clustered grid). Prints the coefficients rounded to float32 and the fit's maximum relative
error (3.8e-9). docs/exact-transcendentals.md section 8 says where the result is used and its measured bounds.

  /usr/bin/python3 tools/fit_gelu_erfcx.py
"""
import math

import numpy as np

A = 10.0


def erfcx(a):
    return math.erfc(a) * math.exp(a * a)


def fit(n_p, n_q, iters=60):
    a = np.unique(np.concatenate([np.linspace(0, A, 40000), A * (1 - np.cos(np.linspace(0, np.pi / 2, 40000)))]))
    t = a / A
    f = np.array([erfcx(x) for x in a])
    w = np.ones_like(t)
    q_prev = np.ones_like(t)
    for _ in range(iters):
        cols = [t**k for k in range(n_p + 1)] + [-f * t**k for k in range(1, n_q + 1)]
        m = np.stack(cols, 1) / q_prev[:, None] * w[:, None]
        c, *_ = np.linalg.lstsq(m, f / q_prev * w, rcond=None)
        p = c[:n_p + 1]
        q = np.concatenate([[1.0], c[n_p + 1:]])
        q_val = np.polyval(q[::-1], t)
        err = (np.polyval(p[::-1], t) / q_val - f) / f
        w = w * (1 + 3 * np.abs(err) / np.abs(err).max())
        w /= w.mean()
        q_prev = q_val
    return p, q, np.abs(err).max()


def main():
    p, q, err = fit(5, 6)
    print('max relative error %.3g' % err)
    print('P (t^0 .. t^5):', ', '.join('%.9gf' % np.float32(c) for c in p))
    print('Q (t^0 .. t^6):', ', '.join('%.9gf' % np.float32(c) for c in q))


if __name__ == '__main__':
    main()
