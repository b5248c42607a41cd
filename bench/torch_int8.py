#!/usr/bin/python3
"""PyTorch side of bench/compare_int8.sh: torchvision's quantizable models in FP32 ONNX for
Tessel to quantize, and PyTorch's own int8 versions (eager-mode post-training static
quantization on its `onednn` engine) timed as the peer; and a BERT-style encoder whose dense
layers both sides quantize dynamically (PyTorch: quantize_dynamic of its nn.Linear layers).

Commands (MODEL: resnet18, resnet50, mobilenet_v2, bert):
  export MODEL DIR     DIR/model.onnx (FP32, opset 13), DIR/input.npy (one input) and
                       DIR/calibration.npy (8 random inputs, the calibration set of both sides)
  time MODEL DIR [--threads T] [--runs N] [--engine onednn|qnnpack]
                       PyTorch int8: fuse, calibrate on DIR/calibration.npy, convert (bert:
                       quantize_dynamic); then its median and minimum latency on DIR/input.npy
                       in ms ("MEDIAN MIN")
Weights are random (fixed seed) in eval mode; batch 1; 224x224 images. bert: BERT-base's
dimensions (hidden 768, 12 heads, feed-forward 3072, GELU, post-norm) over 128 tokens, 2
layers, written with constant shapes so the export has no shape arithmetic.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "bert")
BERT = {"hidden": 768, "heads": 12, "feed_forward": 3072, "tokens": 128, "layers": 2}


def bert_encoder():
    import torch
    import torch.nn.functional as F
    from torch import nn

    hidden, heads, tokens = BERT["hidden"], BERT["heads"], BERT["tokens"]
    head = hidden // heads

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden)
            self.up = nn.Linear(hidden, BERT["feed_forward"])
            self.down = nn.Linear(BERT["feed_forward"], hidden)
            self.norm2 = nn.LayerNorm(hidden)

        def forward(self, x):
            q, k, v = self.qkv(x).split(hidden, dim=-1)
            q = q.reshape(tokens, heads, head).transpose(0, 1) * (1.0 / head ** 0.5)
            k = k.reshape(tokens, heads, head).permute(1, 2, 0)
            v = v.reshape(tokens, heads, head).transpose(0, 1)
            context = torch.matmul(torch.softmax(torch.matmul(q, k), dim=-1), v)
            x = self.norm1(x + self.out(context.transpose(0, 1).reshape(1, tokens, hidden)))
            return self.norm2(x + self.down(F.gelu(self.up(x))))

    return nn.Sequential(*[Layer() for _ in range(BERT["layers"])])


def input_shape(name):
    return (1, BERT["tokens"], BERT["hidden"]) if name == "bert" else (1, 3, 224, 224)


def build(name):
    import torch
    import torchvision

    torch.manual_seed(0)
    if name == "bert":
        model = bert_encoder()
    else:
        model = getattr(torchvision.models.quantization, name)(weights=None, quantize=False)
    model.eval()
    return model


def export(name, directory):
    import torch

    os.makedirs(directory, exist_ok=True)
    model = build(name)
    rng = np.random.default_rng(0)
    shape = input_shape(name)
    image = rng.standard_normal(shape).astype(np.float32)
    np.save(os.path.join(directory, "input.npy"), image)
    np.save(os.path.join(directory, "calibration.npy"), rng.standard_normal((8,) + shape[1:]).astype(np.float32))
    torch.onnx.export(model, torch.from_numpy(image), os.path.join(directory, "model.onnx"), opset_version=13,
                      input_names=["input"], output_names=["output"], do_constant_folding=True)


def time_int8(name, directory, threads, runs, engine):
    import torch

    torch.set_num_threads(threads)
    torch.backends.quantized.engine = engine
    model = build(name)
    if name == "bert":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    else:
        model.fuse_model()
        model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
        torch.ao.quantization.prepare(model, inplace=True)
        with torch.no_grad():
            for sample in np.load(os.path.join(directory, "calibration.npy")):
                model(torch.from_numpy(sample[None]))
        torch.ao.quantization.convert(model, inplace=True)
    image = torch.from_numpy(np.load(os.path.join(directory, "input.npy")))
    times = []
    with torch.no_grad():
        for _ in range(5):
            model(image)
        for _ in range(runs):
            start = time.perf_counter()
            model(image)
            times.append((time.perf_counter() - start) * 1e3)
    print(f"{statistics.median(times):.4f} {min(times):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export")
    e.add_argument("model", choices=MODELS)
    e.add_argument("directory")
    t = sub.add_parser("time")
    t.add_argument("model", choices=MODELS)
    t.add_argument("directory")
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--runs", type=int, default=20)
    t.add_argument("--engine", default="onednn", choices=("onednn", "qnnpack"))
    args = parser.parse_args()
    if args.command == "export":
        export(args.model, args.directory)
    else:
        time_int8(args.model, args.directory, args.threads, args.runs, args.engine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
