#!/usr/bin/python3
# Writes depthwise.onnx: a MobileNet block in miniature (1x1 expand, depthwise 3x3, 1x1
# project, each with bias, Relu after the first two) over a [1, 16, 12, 12] input, with
# seeded random weights. Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)


def weight(name, shape, scale):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


initializers = [
    weight("w_expand", (32, 16, 1, 1), 0.25), weight("b_expand", (32,), 0.1),
    weight("w_depthwise", (32, 1, 3, 3), 0.3), weight("b_depthwise", (32,), 0.1),
    weight("w_project", (16, 32, 1, 1), 0.2), weight("b_project", (16,), 0.1),
]
nodes = [
    helper.make_node("Conv", ["x", "w_expand", "b_expand"], ["e"], name="expand"),
    helper.make_node("Relu", ["e"], ["e_relu"], name="expand_relu"),
    helper.make_node("Conv", ["e_relu", "w_depthwise", "b_depthwise"], ["d"], name="depthwise", group=32,
                     pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["d"], ["d_relu"], name="depthwise_relu"),
    helper.make_node("Conv", ["d_relu", "w_project", "b_project"], ["y"], name="project"),
]
graph = helper.make_graph(nodes, "depthwise_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])], initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tessel-test")
onnx.checker.check_model(model)
onnx.save(model, __file__.replace("make_depthwise.py", "depthwise.onnx"))
