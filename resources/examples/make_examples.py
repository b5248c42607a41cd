#!/usr/bin/python3
"""Writes the example models Tessel Studio opens by default (run with Debian's /usr/bin/python3,
which has python3-torch and python3-onnx):

  tiny_resnet.onnx   a small residual CNN (conv, BatchNorm, ReLU, max pool, a residual block,
                     global average pool, linear) on a 1x3x32x32 image, random weights (seed 0)
  tiny_resnet/test_data_set_0/{input_0,output_0}.pb   an input and PyTorch's output for it

Usage: resources/examples/make_examples.py [DIR]   (default: this script's folder)
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch


class TinyResNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2))
        self.block = torch.nn.Sequential(
            torch.nn.Conv2d(16, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16))
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return torch.softmax(self.head(x), dim=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = TinyResNet().eval()
    # Non-trivial BatchNorm statistics, so folding them is visible in the pass timeline.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    image = torch.rand(1, 3, 32, 32)
    path = os.path.join(out, "tiny_resnet.onnx")
    torch.onnx.export(model, image, path, input_names=["image"], output_names=["probabilities"], opset_version=13)
    data = os.path.join(out, "tiny_resnet", "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    with torch.no_grad():
        expected = model(image)
    for name, array, tensor in (("input_0", image, "image"), ("output_0", expected, "probabilities")):
        proto = onnx.numpy_helper.from_array(array.numpy().astype(np.float32), tensor)
        with open(os.path.join(data, name + ".pb"), "wb") as f:
            f.write(proto.SerializeToString())
    print(path)


if __name__ == "__main__":
    main()
