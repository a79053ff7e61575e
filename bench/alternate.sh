#!/bin/bash
# Whole-model ratios that hold up on a shared, noisy machine: ORT and OneModel alternated ROUNDS times, each
# run in its own process, and the minimum of each side's per-repetition minima compared (medians of one run
# move by tens of percent when other tenants load the machine). Uses the inputs bench/run.mjs wrote.
#   bench/alternate.sh native|wasm THREADS ROUNDS ROW...   (ROW: a row name of bench/run.mjs, whole model or layer)
#   e.g. bench/alternate.sh native 1 4 resnet50_224 ppocr_det_640
# Needs: bench/setup.sh (models, ORT, the CLI, dist/) and one `node bench/run.mjs --rows models` run (inputs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kind=$1 threads=$2 rounds=$3
shift 3
models=${ONEMODEL_MODELS:-$HOME/.cache/onemodel/models}
inputs=${ONEMODEL_BENCH_INPUTS:-$HOME/.cache/onemodel/bench/whole}
layers=${ONEMODEL_BENCH_LAYERS:-$HOME/.cache/onemodel/bench}
declare -A file=([ppocr_det_640]=ppocr_det.onnx [ppocr_rec_48x320]=ppocr_rec.onnx [ppocr_cls_48x192]=ppocr_cls.onnx
  [silero_vad_512]=silero_vad_v5.onnx [oww_melspec_1760]=oww_melspectrogram.onnx [oww_embedding]=oww_embedding.onnx
  [minilm_b1_s128]=minilm_l6_like.onnx [minilm_b8_s128]=minilm_l6_like.onnx [resnet50_224]=resnet50.onnx
  [mobilenetv3_224]=mobilenetv3_large.onnx [isnet_int8_1024]=isnet_small.onnx)
min_of() { grep -o 'min_ms=[0-9.]*' | cut -d= -f2; }
for row in "$@"; do
  if [[ -n ${file[$row]:-} ]]; then
    model=$models/${file[$row]} dir=$inputs
  elif [[ -f $layers/$row.onnx ]]; then
    model=$layers/$row.onnx dir=$layers # a layer row: its model and inputs side by side
  else
    echo "alternate: unknown row $row" >&2
    exit 2
  fi
  args=()
  for f in "$dir/$row".*.npy; do n=${f#"$dir/$row".}; args+=(--input "${n%.npy}=$f"); done
  common=(--threads "$threads" --seconds 0.3 --reps 3)
  for ((i = 0; i < rounds; ++i)); do
    if [[ $kind == native ]]; then
      a=$(node "$here/worker.mjs" --engine ort-node --model "$model" "${args[@]}" "${common[@]}" | min_of)
      b=$("$here/../build/native/onemodel" bench "$model" "${args[@]}" "${common[@]}" | min_of)
    else
      a=$(node "$here/worker.mjs" --engine ort-web --model "$model" "${args[@]}" "${common[@]}" | min_of)
      b=$(node "$here/worker.mjs" --engine onemodel-wasm --model "$model" "${args[@]}" "${common[@]}" | min_of)
    fi
    echo "$a $b"
  done | awk -v row="$row" -v t="$threads" -v k="$kind" '{ if (NR == 1 || $1 < a) a = $1; if (NR == 1 || $2 < b) b = $2 }
    END { printf "%-18s %-6s t%d  ORT min %10.3f ms  OneModel fast min %10.3f ms  ratio %.2f\n", row, k, t, a, b, b / a }'
done
