#!/usr/bin/python3
"""Generates the ONNX backend test data (node and simple cases) from Debian's python3-onnx (1.12) into a cache
outside the repository. Never committed.

Debian's numpy 1.24 removed the aliases np.float, np.int, np.bool and np.object that onnx 1.12's case
generators still use; they are restored as the builtins before the generator is imported.

    /usr/bin/python3 tools/gen_backend_data.py [OUTDIR]     (default: $ONEMODEL_CACHE or ~/.cache/onemodel,
                                                               then /onnx-backend-1.12)
"""
import argparse
import os
import sys

import warnings

import numpy as np

warnings.filterwarnings("ignore", category=FutureWarning)

for alias, builtin in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if not hasattr(np, alias):
        setattr(np, alias, builtin)

import onnx  # noqa: E402
from onnx.backend.test import cmd_tools  # noqa: E402


def main():
    cache = os.environ.get("ONEMODEL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "onemodel"))
    default = os.path.join(cache, "onnx-backend-" + onnx.__version__)
    out = sys.argv[1] if len(sys.argv) > 1 else default
    stamp = os.path.join(out, ".complete")
    if os.path.exists(stamp):
        print(out)
        return
    os.makedirs(out, exist_ok=True)
    cmd_tools.generate_data(argparse.Namespace(output=out, op_type=None))
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(out)


if __name__ == "__main__":
    main()
