#!/usr/bin/python3
"""Writes the example models Tessel Studio opens by default (run with Debian's /usr/bin/python3,
which has python3-torch and python3-onnx):

  tiny_resnet.onnx   a small residual CNN (conv, BatchNorm, ReLU, max pool, a residual block,
                     global average pool, linear) on a 1x3x32x32 image, random weights (seed 0)
  tiny_resnet/test_data_set_0/{input_0,output_0}.pb   an input and PyTorch's output for it
  tiny_resnet_dynamic_batch.onnx   the same model exported with a dynamic batch dimension
                     ("batch"), as PyTorch exports usually are: the Studio asks for its shape
  long_chain.onnx    a model of a few thousand small operations (blocks of a 1x1 convolution,
                     bias, ReLU, scale and a residual add on 1x4x8x8 activations), for testing
                     that Tessel Studio stays responsive while a large graph loads and lays out

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


def make_long_chain(path, blocks=600):
    """Writes long_chain.onnx: `blocks` residual blocks, five operations each, built with the
    ONNX helper directly (no tracing: a trace of 3,000 operations takes minutes). Weights are
    tiny (4x4 1x1 kernels) so the file stays small enough to commit."""
    from onnx import TensorProto, helper
    rng = np.random.default_rng(0)
    channels = 4
    nodes, initializers = [], []
    current = "input"
    for b in range(blocks):
        weight, bias, scale = f"block{b}.weight", f"block{b}.bias", f"block{b}.scale"
        initializers.append(onnx.numpy_helper.from_array(
            (rng.standard_normal((channels, channels, 1, 1)) * 0.3).astype(np.float32), weight))
        initializers.append(onnx.numpy_helper.from_array(
            (rng.standard_normal((1, channels, 1, 1)) * 0.1).astype(np.float32), bias))
        initializers.append(onnx.numpy_helper.from_array(
            rng.uniform(0.5, 1.0, (1, channels, 1, 1)).astype(np.float32), scale))
        conv, biased, relu, scaled, out = (f"b{b}_{n}" for n in ("conv", "bias", "relu", "scale", "out"))
        nodes += [
            helper.make_node("Conv", [current, weight], [conv], name=f"block{b}/Conv"),
            helper.make_node("Add", [conv, bias], [biased], name=f"block{b}/Add_bias"),
            helper.make_node("Relu", [biased], [relu], name=f"block{b}/Relu"),
            helper.make_node("Mul", [relu, scale], [scaled], name=f"block{b}/Mul_scale"),
            helper.make_node("Add", [scaled, current], [out], name=f"block{b}/Add_residual"),
        ]
        current = out
    nodes.append(helper.make_node("Identity", [current], ["output"], name="output/Identity"))
    graph = helper.make_graph(
        nodes, "long_chain",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, channels, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, channels, 8, 8])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_examples.py")
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print(path)


def make_tiny_resnet():
    """The example network with its random weights (seed 0) and an input image."""
    torch.manual_seed(0)
    model = TinyResNet().eval()
    # Non-trivial BatchNorm statistics, so folding them is visible in the pass timeline.
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.running_mean.uniform_(-0.1, 0.1)
            module.running_var.uniform_(0.5, 1.5)
    image = torch.rand(1, 3, 32, 32)
    return model, image


def make_dynamic_batch(path):
    model, image = make_tiny_resnet()
    torch.onnx.export(model, image, path, input_names=["image"], output_names=["probabilities"], opset_version=13,
                      dynamic_axes={"image": {0: "batch"}, "probabilities": {0: "batch"}})
    print(path)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    model, image = make_tiny_resnet()
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
    make_dynamic_batch(os.path.join(out, "tiny_resnet_dynamic_batch.onnx"))
    make_long_chain(os.path.join(out, "long_chain.onnx"))


if __name__ == "__main__":
    main()
