#!/usr/bin/env bash
# Sets up whatever is missing, then runs the bundled sample model testdata/classifier.onnx on the input
# [5.1, 3.5, 1.4, 0.2] natively (CLI) and in Node (npm package). Both print the class probabilities
# (getting-started.md gives 0.2323, 0.2813, 0.4864).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
echo
echo "== native: build/native/onemodel run testdata/classifier.onnx --input x=testdata/classifier_x.npy"
./build/native/onemodel run testdata/classifier.onnx --input x=testdata/classifier_x.npy
echo
echo "== Node: import { InferenceSession, Tensor } from 'onemodel'"
node tools/demo.mjs
