#!/usr/bin/python3
"""The graphs bench/graph_view.sh opens in the Studio:

  graph_models.py zoo NAME DIR          a model of bench/model_zoo.py (densenet121, inception_v3,
                                        resnet50, ...) exported to DIR/model.onnx (cached)
  graph_models.py encoder LAYERS FILE   a BERT-style encoder of LAYERS post-norm layers (d_model
                                        256, 4 heads, 64 tokens), as torch_models.py's transformer
  graph_models.py dense NODES FILE      a generated DenseNet-shaped graph of about NODES operations
  graph_models.py flat NODES FILE       a generated residual network of about NODES operations whose
                                        names have no module path: every operation is a box

The dense graph is named as PyTorch names modules ("/block3/layer12/conv"): blocks of 24
layers, each layer an operation reading the concatenation of every earlier layer of its block
(the fan-in that made dot take minutes on DenseNet-121), an activation and the concatenation
itself, and a transition between blocks. Its operators are in a domain of its own
(com.tessel.bench), so the Studio opens it for viewing without compiling: what is measured is
the graph view, not the compiler. Needs /usr/bin/python3 with onnx (and torch for zoo, encoder).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOMAIN = "com.tessel.bench"
LAYERS_PER_BLOCK = 24


class GeneratedGraph:
    """A graph of operators in the bench's own domain, every tensor 1x8x4x4 float."""

    SHAPE = [1, 8, 4, 4]

    def __init__(self):
        from onnx import TensorProto, helper

        self.helper, self.float = helper, TensorProto.FLOAT
        self.operations, self.values = [], []

    def __len__(self):
        return len(self.operations)

    def op(self, kind, inputs, name):
        output = name + ":0"
        self.operations.append(self.helper.make_node(kind, inputs, [output], name=name, domain=DOMAIN))
        self.values.append(self.helper.make_tensor_value_info(output, self.float, self.SHAPE))
        return output

    def save(self, name, output, path):
        import onnx

        info = self.helper.make_tensor_value_info
        graph = self.helper.make_graph(self.operations, name, [info("input", self.float, self.SHAPE)],
                                       [info(output, self.float, self.SHAPE)], value_info=self.values[:-1])
        opsets = [self.helper.make_opsetid("", 17), self.helper.make_opsetid(DOMAIN, 1)]
        onnx.save(self.helper.make_model(graph, opset_imports=opsets), path)


def dense(nodes, path):
    g = GeneratedGraph()
    current = g.op("Stem", ["input"], "/stem/conv")
    block = 0
    while len(g) < nodes:
        block += 1
        features = [current]
        for layer in range(1, LAYERS_PER_BLOCK + 1):
            prefix = f"/block{block}/layer{layer}"
            joined = g.op("Join", list(features), prefix + "/concat") if len(features) > 1 else features[0]
            activated = g.op("Activation", [g.op("Layer", [joined], prefix + "/conv")], prefix + "/relu")
            features.append(activated)
            if len(g) >= nodes:
                break
        current = g.op("Transition", [g.op("Join", features, f"/transition{block}/concat")], f"/transition{block}/pool")
    g.save("dense_generated", current, path)
    print(f"{path}: {len(g)} operations in {block} blocks")


def flat(nodes, path):
    g = GeneratedGraph()
    # Residual blocks (Layer, Activation, Layer, Add with the skip, Activation) with a side
    # branch every fourth block: the shape of a deep CNN, named "block12_conv1" as some
    # exporters do, so nothing groups it.
    current, block = "input", 0
    while len(g) < nodes:
        name = f"block{block}_"
        y = g.op("Activation", [g.op("Layer", [current], name + "conv1")], name + "relu1")
        y = g.op("Add", [g.op("Layer", [y], name + "conv2"), current], name + "add")
        current = g.op("Activation", [y], name + "relu2")
        if block % 4 == 3:
            current = g.op("Join", [current, g.op("Pool", [current], name + "pool")], name + "join")
        block += 1
    g.save("flat_generated", current, path)
    print(f"{path}: {len(g)} operations in {block} residual blocks")


def encoder(layers, path):
    import torch

    sys.path.insert(0, HERE)
    from torch_models import StaticShapeEncoder

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False).eval()
    tokens = 64
    x = torch.randn(1, tokens, 256)
    torch.onnx.export(StaticShapeEncoder(model, tokens), (x,), path, opset_version=14, input_names=["input"],
                      output_names=["output"], do_constant_folding=True)
    print(f"{path}: {layers}-layer encoder")


def zoo(name, directory):
    sys.path.insert(0, HERE)
    import model_zoo

    entries = {entry.name: entry for entry in model_zoo.zoo()}
    if name not in entries:
        print(f"graph_models.py: no model {name} in bench/model_zoo.py (see model_zoo.py --list)", file=sys.stderr)
        return 2
    nodes = model_zoo.export(entries[name], 1, directory)
    print(f"{directory}/model.onnx: {name}, {nodes} ONNX nodes")
    return 0


def main():
    args = sys.argv[1:]
    if len(args) != 3 or args[0] not in ("zoo", "encoder", "dense", "flat"):
        print(__doc__)
        return 0 if args and args[0] in ("-h", "--help") else 2
    command, what, where = args
    if command == "zoo":
        return zoo(what, where)
    if not what.isdigit() or int(what) < 1:
        print(f"graph_models.py {command}: expected a positive count, got '{what}'", file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(where)), exist_ok=True)
    {"encoder": encoder, "dense": dense, "flat": flat}[command](int(what), where)
    return 0


if __name__ == "__main__":
    sys.exit(main())
