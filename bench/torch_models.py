#!/usr/bin/python3
"""PyTorch side of bench/compare_torch.sh: exports the benchmark models to ONNX with a
reference input and output, times PyTorch on them, and compares output files.

Commands (MODEL: resnet18, mobilenet_v2, squeezenet1_1, transformer):
  export MODEL DIR          DIR/model.onnx, DIR/input.npy, DIR/output.npy (PyTorch's output) and
                            the same pair as DIR/test_data_set_0/{input_0,output_0}.pb
  time MODEL DIR [--threads T] [--runs N] [--warmup W]
                            PyTorch's median and minimum latency on DIR/input.npy, in ms
                            (one line: "MEDIAN MIN")
  compare GOT.npy EXPECTED.npy
                            the largest absolute difference (one line)
Weights are random (fixed seed) in eval mode; batch 1; images 224x224; the transformer is
nn.TransformerEncoder (d_model 256, 4 heads, 2 layers, feed-forward 1024) over 64 tokens.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

MODELS = ("resnet18", "mobilenet_v2", "squeezenet1_1", "transformer")
OPSET = 13


def build_model(name):
    import torch
    import torchvision

    torch.manual_seed(0)
    if name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0,
                                                 batch_first=True)
        # No nested tensors: the exporter traces the plain math path.
        model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        shape = (1, 64, 256)
    else:
        model = getattr(torchvision.models, name)(weights=None)
        shape = (1, 3, 224, 224)
    model.eval()
    return model, shape


class StaticShapeEncoder:
    """The same computation as a (post-norm, ReLU) nn.TransformerEncoder, written with its
    shapes as Python constants, so the exported graph has constant Reshape shapes instead of
    Shape/Gather/Slice chains computed from the input (Tessel compiles static shapes)."""

    def __new__(cls, encoder, tokens):
        import torch
        import torch.nn.functional as F

        class Module(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = encoder

            def forward(self, x):
                for layer in self.encoder.layers:
                    attention = layer.self_attn
                    d, heads = attention.embed_dim, attention.num_heads
                    head = d // heads
                    q, k, v = F.linear(x, attention.in_proj_weight, attention.in_proj_bias).split(d, dim=-1)
                    q = q.reshape(tokens, heads, head).transpose(0, 1) * (1.0 / head ** 0.5)
                    k = k.reshape(tokens, heads, head).permute(1, 2, 0)
                    v = v.reshape(tokens, heads, head).transpose(0, 1)
                    weights = torch.softmax(torch.matmul(q, k), dim=-1)
                    context = torch.matmul(weights, v).transpose(0, 1).reshape(1, tokens, d)
                    x = layer.norm1(x + attention.out_proj(context))
                    x = layer.norm2(x + layer.linear2(torch.relu(layer.linear1(x))))
                return x

        return Module().eval()


def load_model(name, directory):
    """The model with the exported weights (built again from the same seed)."""
    model, _ = build_model(name)
    state = os.path.join(directory, "state.pt")
    if os.path.exists(state):
        import torch
        model.load_state_dict(torch.load(state))
    return model


def export(name, directory):
    import onnx
    import onnx.numpy_helper
    import torch

    os.makedirs(os.path.join(directory, "test_data_set_0"), exist_ok=True)
    model, shape = build_model(name)
    generator = np.random.default_rng(1)
    data = generator.standard_normal(shape).astype(np.float32)
    x = torch.from_numpy(data)
    path = os.path.join(directory, "model.onnx")
    exported = model
    if name == "transformer":
        exported = StaticShapeEncoder(model, shape[1])
        with torch.no_grad():
            difference = (exported(x) - model(x)).abs().max().item()
        assert difference < 1e-4, f"the static-shape encoder differs from nn.TransformerEncoder by {difference}"
    # Exported with autograd on, as the exporter traces the plain math (not the encoder's fused
    # inference fast path, which PyTorch's timing below does use).
    torch.onnx.export(exported, (x,), path, opset_version=OPSET, input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    torch.save(model.state_dict(), os.path.join(directory, "state.pt"))
    with torch.no_grad():
        expected = model(x).numpy()
    np.save(os.path.join(directory, "input.npy"), data)
    np.save(os.path.join(directory, "output.npy"), expected)
    for kind, array, onnx_name in (("input", data, "input"), ("output", expected, "output")):
        tensor = onnx.numpy_helper.from_array(array, onnx_name)
        with open(os.path.join(directory, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(tensor.SerializeToString())
    print(f"{name}: exported {path} (input {list(shape)}, output {list(expected.shape)})")


def time_model(name, directory, threads, runs, warmup):
    import torch

    torch.set_num_threads(threads)
    model = load_model(name, directory)
    x = torch.from_numpy(np.load(os.path.join(directory, "input.npy")))
    times = []
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        for _ in range(runs):
            start = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - start) * 1000.0)
    print(f"{statistics.median(times):.3f} {min(times):.3f}")


def compare(got_path, expected_path):
    got = np.load(got_path).astype(np.float64)
    expected = np.load(expected_path).astype(np.float64)
    if got.size != expected.size:
        print(f"shape mismatch: {got.shape} vs {expected.shape}", file=sys.stderr)
        return 1
    print(f"{np.max(np.abs(got.reshape(-1) - expected.reshape(-1))):.3g}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("export")
    p.add_argument("model", choices=MODELS)
    p.add_argument("directory")
    p = commands.add_parser("time")
    p.add_argument("model", choices=MODELS)
    p.add_argument("directory")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p = commands.add_parser("compare")
    p.add_argument("got")
    p.add_argument("expected")
    args = parser.parse_args()
    if args.command == "export":
        export(args.model, args.directory)
    elif args.command == "time":
        time_model(args.model, args.directory, args.threads, args.runs, args.warmup)
    else:
        return compare(args.got, args.expected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
