#!/usr/bin/env bash
# Golden-hash harness: every row this machine offers (native targets x 1/2 threads, wasm in Node, wasm in
# headless Chromium), compared line by line. Arguments go to golden.mjs (see tools/golden/README.md).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec node "$here/golden.mjs" "$@"
