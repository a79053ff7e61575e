#!/usr/bin/env bash
# Cross-builds targets of the aarch64 preset (docs/arm64.md) into build/arm64; the programs run under
# qemu-aarch64. tools/setup.sh installs the cross compiler and qemu.
#   tools/arm64/build.sh                       the CLI (build/arm64/onemodel)
#   tools/arm64/build.sh TARGET...             other targets (onemodel_tests, conformance_runner)
# ONEMODEL_ARM64_JOBS sets the parallel jobs (default: every core).
set -euo pipefail
cd "$(dirname "$0")/../.."
targets=("$@")
((${#targets[@]})) || targets=(onemodel_cli)
cmake --preset arm64 >/dev/null
cmake --build --preset arm64 -j "${ONEMODEL_ARM64_JOBS:-$(nproc)}" --target "${targets[@]}"
