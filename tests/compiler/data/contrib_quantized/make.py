#!/usr/bin/python3
"""Writes model.onnx (ONNX Runtime's com.microsoft quantized operators; channels_last.onnx the
same with a channels-last pool) with inputs and the
NumPy reference outputs (float32 arithmetic: dequantize, the float operator, quantize with
round half to even and saturation) for compiler.test_onnx_contrib_quantized. Run it from
this directory with Debian's /usr/bin/python3 (onnx, numpy)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
f32 = np.float32


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


inits = [scalar("as", 0.05, f32), scalar("az", 120, np.uint8), scalar("bs", 0.04, f32), scalar("bz", 130, np.uint8),
         scalar("ys", 0.07, f32), scalar("yz", 110, np.uint8), scalar("ps", 0.004, f32), scalar("pz", 0, np.uint8),
         scalar("ms", 0.02, f32), scalar("mz", 128, np.uint8)]
W = rng.integers(-127, 128, (12, 16)).astype(np.int8)           # QGemm B, transB=1: [N, K]
ws = (0.003 + 0.001 * (np.arange(12) % 3)).astype(f32)          # per column
C = rng.integers(-2000, 2000, 12).astype(np.int32)              # bias in ms * ws units
inits += [numpy_helper.from_array(W, "W"), numpy_helper.from_array(ws, "ws"),
          numpy_helper.from_array(np.zeros(12, np.int8), "wz"), numpy_helper.from_array(C, "C"),
          scalar("gs", 0.2, f32), scalar("gz", 100, np.uint8)]
ms_ = "com.microsoft"
nodes = [
    helper.make_node("QLinearAdd", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["add"], name="qadd", domain=ms_),
    helper.make_node("QLinearMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["mul"], name="qmul", domain=ms_),
    helper.make_node("QLinearSigmoid", ["a", "as", "az", "ps", "pz"], ["sigmoid"], name="qsigmoid", domain=ms_),
    helper.make_node("QLinearLeakyRelu", ["a", "as", "az", "ys", "yz"], ["leaky"], name="qleaky", domain=ms_, alpha=0.1),
    helper.make_node("QLinearAveragePool", ["a", "as", "az", "ys", "yz"], ["avgpool"], name="qavgpool", domain=ms_,
                     kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0),
    helper.make_node("QLinearGlobalAveragePool", ["a", "as", "az", "ys", "yz"], ["gap"], name="qgap", domain=ms_,
                     channels_last=0),
    helper.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b", "bs", "bz"], ["concat"], name="qconcat",
                     domain=ms_, axis=1),
    helper.make_node("QGemm", ["m", "ms", "mz", "W", "ws", "wz", "C"], ["gemm_float"], name="qgemm_float", domain=ms_,
                     transB=1),
    helper.make_node("QGemm", ["m", "ms", "mz", "W", "ws", "wz", "C", "gs", "gz"], ["gemm"], name="qgemm", domain=ms_,
                     transB=1),
]
u8 = TensorProto.UINT8
inputs = [helper.make_tensor_value_info("a", u8, [1, 4, 6, 6]), helper.make_tensor_value_info("b", u8, [1, 4, 6, 6]),
          helper.make_tensor_value_info("m", u8, [3, 16])]
outputs = [helper.make_tensor_value_info(n, u8, None) for n in ("add", "mul", "sigmoid", "leaky", "avgpool", "gap",
                                                                 "concat")]
outputs += [helper.make_tensor_value_info("gemm_float", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("gemm", u8, None)]
graph = helper.make_graph(nodes, "contrib_quantized", inputs, outputs, inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms_, 1)])
model.ir_version = 8
onnx.save(model, "model.onnx")
# The same with a channels_last pool, which Tessel refuses by name.
for node in model.graph.node:
    if node.name == "qgap":
        for attribute in node.attribute:
            if attribute.name == "channels_last":
                attribute.i = 1
onnx.save(model, "channels_last.onnx")

a = rng.integers(0, 256, (1, 4, 6, 6)).astype(np.uint8)
b = rng.integers(0, 256, (1, 4, 6, 6)).astype(np.uint8)
m = rng.integers(0, 256, (3, 16)).astype(np.uint8)
for name, value in (("a", a), ("b", b), ("m", m)):
    np.save(name + ".npy", value)


def dq(q, s, z):
    return (q.astype(np.int32) - np.int32(z)).astype(f32) * f32(s)


def q(x, s, z):
    return np.clip(np.round(x.astype(f32) / f32(s)) + f32(z), 0, 255).astype(np.uint8)


A, B = dq(a, 0.05, 120), dq(b, 0.04, 130)
expected = {
    "add": q(A + B, 0.07, 110),
    "mul": q(A * B, 0.07, 110),
    "sigmoid": q(f32(1) / (f32(1) + np.exp(-A)), 0.004, 0),
    "leaky": q(np.where(A >= 0, A, f32(0.1) * A), 0.07, 110),
    "gap": q(A.mean(axis=(2, 3), keepdims=True, dtype=f32), 0.07, 110),
    "concat": q(np.concatenate([A, B], axis=1), 0.07, 110),
}
padded = np.pad(A, ((0, 0), (0, 0), (1, 1), (1, 1)))
ones = np.pad(np.ones_like(A), ((0, 0), (0, 0), (1, 1), (1, 1)))
pool = np.zeros_like(A)
for y in range(6):
    for x in range(6):
        pool[:, :, y, x] = padded[:, :, y:y + 3, x:x + 3].sum(axis=(2, 3)) / ones[:, :, y:y + 3, x:x + 3].sum(axis=(2, 3))
expected["avgpool"] = q(pool, 0.07, 110)
M = dq(m, 0.02, 128)
Wf = W.astype(f32) * ws[:, None]
bias = C.astype(f32) * (f32(0.02) * ws)
gemm = M @ Wf.T + bias
expected["gemm_float"] = gemm.astype(f32)
expected["gemm"] = q(gemm, 0.2, 100)
for name, value in expected.items():
    np.save("expected_" + name + ".npy", value)
