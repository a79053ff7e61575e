#!/bin/sh
# CTest entry conformance_subset: runs the conformance runner ($1) over the node cases selected by the
# remaining arguments (--filter ...) in both modes. The data directory is $ONEMODEL_BACKEND_DATA, else
# ${ONEMODEL_CACHE:-~/.cache/onemodel}/onnx-backend-1.12.0 (where tools/gen_backend_data.py writes it).
# Without data the test is skipped (exit 77): generating it needs Python, which CTest must not.
runner=$1
shift
data=${ONEMODEL_BACKEND_DATA:-${ONEMODEL_CACHE:-$HOME/.cache/onemodel}/onnx-backend-1.12.0}
if [ ! -d "$data/node" ]; then
  echo "conformance_subset: no backend-test data in $data; run /usr/bin/python3 tools/gen_backend_data.py (tools/test.sh does)"
  exit 77
fi
exec "$runner" "$data" "$@"
