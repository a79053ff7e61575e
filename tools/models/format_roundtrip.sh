#!/usr/bin/env bash
# The real models converted to the OneModel format (docs/format.md) must give bit-identical outputs to their
# ONNX files. For each model in the cache (tools/models/fetch.sh): `onemodel convert`, then `onemodel run` of
# the .onnx and of the .onemodel on the same inputs (written below as .npy, fixed seeds) in exact and fast
# mode, saving the outputs, and `cmp` of every saved output. Prints one line per model and mode, then
# `format round trip: N identical, N differ` and exits 1 when any differs or fails.
#
#   tools/models/format_roundtrip.sh [BUILD_DIR [MODEL_NAME...]]
# BUILD_DIR defaults to build/native; MODEL_NAMEs (such as resnet50) limit the run to those models of the
# cache (${ONEMODEL_CACHE:-~/.cache/onemodel}/models).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:-$root/build/native}/onemodel
shift || true
only=" $* "
models=${ONEMODEL_CACHE:-$HOME/.cache/onemodel}/models
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Inputs per model: NAME=SHAPE:DTYPE[:VALUE] (VALUE: a constant; otherwise uniform in [-1, 1), or token ids in [0, 100)).
declare -A inputs=(
  [isnet_medium]="input=1,3,1024,1024:f4"
  [isnet_small]="input=1,3,1024,1024:f4"
  [minilm_l6_like]="input_ids=2,16:i8 attention_mask=2,16:i8:1 token_type_ids=2,16:i8:0"
  [minilm_l6_like_fp16]="input_ids=2,16:i8 attention_mask=2,16:i8:1 token_type_ids=2,16:i8:0"
  [mobilenetv3_large]="input=1,3,224,224:f4"
  [resnet50]="input=1,3,224,224:f4"
  [oww_embedding]="input_1=1,76,32,1:f4"
  [oww_melspectrogram]="input=1,16000:f4"
  [ppocr_cls]="x=1,3,48,192:f4"
  [ppocr_det]="x=1,3,160,160:f4"
  [ppocr_rec]="x=1,3,48,160:f4"
  [ppocr_rec_fp16]="x=1,3,48,160:f4"
  [silero_vad_legacy]="input=1,512:f4 sr=:i8:16000 h=2,1,64:f4:0 c=2,1,64:f4:0"
  [silero_vad_v5]="input=1,512:f4 state=2,1,128:f4:0 sr=:i8:16000"
)

same=0
differ=0
for model in "$models"/*.onnx; do
  name=$(basename "$model" .onnx)
  if [ "$only" != "  " ] && [[ "$only" != *" $name "* ]]; then continue; fi
  spec=${inputs[$name]:-}
  if [ -z "$spec" ]; then
    echo "$name: no inputs listed in $0; skipped"
    continue
  fi
  args=()
  for item in $spec; do
    input=${item%%=*}
    /usr/bin/python3 - "$work/$name.$input.npy" "${item#*=}" <<'PY'
import sys, zlib
import numpy as np
path, spec = sys.argv[1], sys.argv[2].split(':')
shape = tuple(int(d) for d in spec[0].split(',') if d)
dtype = {'f4': np.float32, 'i8': np.int64}[spec[1]]
rng = np.random.default_rng(zlib.crc32(path.split('/')[-1].encode()))
if len(spec) > 2:
    a = np.full(shape, float(spec[2])).astype(dtype)
elif dtype == np.float32:
    a = rng.uniform(-1, 1, shape).astype(dtype)
else:
    a = rng.integers(0, 100, shape).astype(dtype)
np.save(path, a)
PY
    args+=(--input "$input=$work/$name.$input.npy")
  done
  if ! "$cli" convert "$model" "$work/$name.onemodel" >"$work/convert.log" 2>&1; then
    echo "$name: convert failed: $(cat "$work/convert.log")"
    differ=$((differ + 1))
    continue
  fi
  sizes="$(stat -c %s "$model") -> $(stat -c %s "$work/$name.onemodel") bytes"
  for mode in exact fast; do
    rm -rf "$work/a" "$work/b"
    "$cli" run "$model" "${args[@]}" --mode "$mode" --save-outputs "$work/a" >"$work/a.log" 2>&1
    ra=$?
    "$cli" run "$work/$name.onemodel" "${args[@]}" --mode "$mode" --save-outputs "$work/b" >"$work/b.log" 2>&1
    rb=$?
    if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
      echo "$name $mode: run failed (onnx $ra, onemodel $rb): $(tail -1 "$work/a.log") / $(tail -1 "$work/b.log")"
      differ=$((differ + 1))
      continue
    fi
    ok=1
    n=0
    for f in "$work"/a/*.npy; do
      n=$((n + 1))
      cmp -s "$f" "$work/b/$(basename "$f")" || ok=0
    done
    [ "$(ls "$work/b" | wc -l)" = "$n" ] || ok=0
    if [ $ok = 1 ] && [ $n -gt 0 ]; then
      echo "$name $mode: $n outputs bit-identical ($sizes)"
      same=$((same + 1))
    else
      echo "$name $mode: outputs DIFFER"
      differ=$((differ + 1))
    fi
  done
done
echo "format round trip: $same identical, $differ differ"
[ $differ = 0 ]
