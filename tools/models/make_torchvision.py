#!/usr/bin/env python3
"""Exports ResNet-50 and MobileNetV3-Large from torchvision (random weights: nothing is downloaded) to ONNX,
opset 17, with a dynamic batch axis, into DIR (default: the current directory). The weights come from a fixed
seed, so the same torch version writes the same files. Used by tools/models/fetch.sh for the whole-model
bench rows (bench/whole_models.mjs)."""
import os
import sys

import torch
import torchvision


def export(model, path, size):
    model.eval()
    x = torch.randn(1, 3, size, size)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, x, tmp, opset_version=17, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    os.replace(tmp, path)
    print(f"make_torchvision.py: wrote {path}")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    torch.manual_seed(20261201)
    export(torchvision.models.resnet50(weights=None), os.path.join(out, "resnet50.onnx"), 224)
    torch.manual_seed(20261202)
    export(torchvision.models.mobilenet_v3_large(weights=None), os.path.join(out, "mobilenetv3_large.onnx"), 224)


if __name__ == "__main__":
    main()
