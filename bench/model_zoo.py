#!/usr/bin/python3
"""Tessel's model zoo: real architectures exported by Debian's PyTorch and torchvision (random
weights from a fixed seed, eval mode), each compiled and run by Tessel against PyTorch's own
output, and timed against PyTorch in alternating rounds with the same threads.

usage: bench/model_zoo.py [--set small|default|all] [--models NAME,NAME...] [--batch B]
                          [--threads T] [--rounds R] [--runs N] [--out DIR] [--no-time]
                          [--timeout S] [--list]

One table, a line per model:
  model     the zoo name (--list shows them with their family and set)
  nodes     ONNX nodes in the exported graph
  kernels   kernels Tessel runs (fused operators and layout transforms)
  compile_s Tessel's compile time (import, passes, lowering, code generation)
  tessel_ms, torch_ms  median latency over the rounds (each round the median of --runs runs)
  ratio     torch_ms / tessel_ms: above 1 Tessel is faster
  per_image tessel_ms / batch
  max_err   the largest |Tessel - PyTorch| over the outputs, divided by the largest |PyTorch|
  status    ok, or what failed (export, compile, run, mismatch, timeout; trivial: PyTorch's
            outputs are constant, so matching them would prove nothing)
The exit status is 0 when every model's status is ok, 1 otherwise, 2 on a usage error, 77 when
PyTorch, torchvision or onnx is missing (CTest reports the test as skipped).
Exported models are cached in DIR (build/zoo by default) per model, batch and opset.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSEL = os.path.join(TOP, "build", "bin", "tessel")
RELATIVE_TOLERANCE = 1e-3


class Entry:
    def __init__(self, name, family, build, inputs, sets=("all",), opset=14):
        self.name, self.family, self.build, self.inputs, self.sets, self.opset = name, family, build, inputs, sets, opset


def image(size=224):
    return lambda batch: [("input", (batch, 3, size, size), "float32")]


def torchvision_classifier(name, **kwargs):
    def build():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kwargs)
    return build


def torchvision_segmentation(name):
    def build():
        import torch
        import torchvision

        class OutOnly(torch.nn.Module):
            """Segmentation models return a dict; the exported graph keeps its "out"."""
            def __init__(self, model):
                super().__init__()
                self.model = model

            def forward(self, x):
                return self.model(x)["out"]

        return OutOnly(getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None))
    return build


def recurrent(kind, layers, bidirectional, initial_state):
    def build():
        import torch

        class Recurrent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                cell = getattr(torch.nn, kind)
                self.rnn = cell(input_size=32, hidden_size=64, num_layers=layers, bidirectional=bidirectional,
                                batch_first=False)

            def forward(self, x, *state):
                if not state:
                    return self.rnn(x)[0]
                if kind == "LSTM":
                    output, (h, c) = self.rnn(x, (state[0], state[1]))
                    return output, h, c
                output, h = self.rnn(x, state[0])
                return output, h

        return Recurrent()

    def inputs(batch):
        shapes = [("input", (20, batch, 32), "float32")]
        if initial_state:
            directions = 2 if bidirectional else 1
            shapes.append(("h0", (layers * directions, batch, 64), "float32"))
            if kind == "LSTM":
                shapes.append(("c0", (layers * directions, batch, 64), "float32"))
        return shapes

    return build, inputs


def transformer_encoder(d_model, heads, layers, tokens):
    def build():
        import torch
        layer = torch.nn.TransformerEncoderLayer(d_model=d_model, nhead=heads, dim_feedforward=4 * d_model,
                                                 dropout=0.0, batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
    return build, lambda batch: [("input", (batch, tokens, d_model), "float32")]


def gpt_decoder(vocabulary, d_model, heads, layers, tokens):
    """A GPT-style decoder: token and position embeddings, pre-norm blocks with causal
    self-attention (the mask a buffer sliced to the sequence length, as GPT-2's code does),
    GELU MLP, tied output projection."""
    def build():
        import torch
        import torch.nn.functional as F

        class Block(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.norm1 = torch.nn.LayerNorm(d_model)
                self.qkv = torch.nn.Linear(d_model, 3 * d_model)
                self.proj = torch.nn.Linear(d_model, d_model)
                self.norm2 = torch.nn.LayerNorm(d_model)
                self.up = torch.nn.Linear(d_model, 4 * d_model)
                self.down = torch.nn.Linear(4 * d_model, d_model)
                self.register_buffer("causal", torch.tril(torch.ones(tokens, tokens, dtype=torch.bool)))

            def forward(self, x):
                b, t, d = x.shape
                q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
                q = q.view(b, t, heads, d // heads).transpose(1, 2)
                k = k.view(b, t, heads, d // heads).transpose(1, 2)
                v = v.view(b, t, heads, d // heads).transpose(1, 2)
                scores = q @ k.transpose(-2, -1) * (1.0 / (d // heads) ** 0.5)
                scores = scores.masked_fill(~self.causal[:t, :t], float("-inf"))
                attention = F.softmax(scores, dim=-1) @ v
                x = x + self.proj(attention.transpose(1, 2).reshape(b, t, d))
                return x + self.down(F.gelu(self.up(self.norm2(x))))

        class Decoder(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.tokens = torch.nn.Embedding(vocabulary, d_model)
                self.positions = torch.nn.Embedding(tokens, d_model)
                self.blocks = torch.nn.ModuleList(Block() for _ in range(layers))
                self.norm = torch.nn.LayerNorm(d_model)

            def forward(self, ids):
                positions = torch.arange(ids.shape[1]).unsqueeze(0)
                x = self.tokens(ids) + self.positions(positions)
                for block in self.blocks:
                    x = block(x)
                return self.norm(x) @ self.tokens.weight.t()

        return Decoder()

    return build, lambda batch: [("ids", (batch, tokens), "int64")]


def unet(base, depth):
    """A small UNet (Ronneberger et al.): double 3x3 conv blocks, max-pool down, 2x2 stride-2
    transposed convolutions up, skip connections concatenated."""
    def build():
        import torch
        nn = torch.nn

        def block(channels_in, channels_out):
            return nn.Sequential(nn.Conv2d(channels_in, channels_out, 3, padding=1), nn.BatchNorm2d(channels_out),
                                 nn.ReLU(inplace=True), nn.Conv2d(channels_out, channels_out, 3, padding=1),
                                 nn.BatchNorm2d(channels_out), nn.ReLU(inplace=True))

        class UNet(nn.Module):
            def __init__(self):
                super().__init__()
                widths = [base * 2 ** i for i in range(depth + 1)]
                self.stem = block(3, widths[0])
                self.down = nn.ModuleList(block(widths[i], widths[i + 1]) for i in range(depth))
                self.up = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                                        for i in reversed(range(depth)))
                self.merge = nn.ModuleList(block(2 * widths[i], widths[i]) for i in reversed(range(depth)))
                self.head = nn.Conv2d(widths[0], 2, 1)

            def forward(self, x):
                skips = [self.stem(x)]
                for down in self.down:
                    skips.append(down(nn.functional.max_pool2d(skips[-1], 2)))
                x = skips.pop()
                for up, merge in zip(self.up, self.merge):
                    x = merge(torch.cat([up(x), skips.pop()], 1))
                return self.head(x)

        return UNet()
    return build


def scripted_control_flow(channels, classes):
    """A TorchScript module whose control flow the data decides, as scripted models have: a
    while loop halving the activations until their mean magnitude is below 1, then an If on
    the sign of their sum (ONNX Loop and If that Tessel runs interpreted)."""
    def build():
        import torch

        class Gated(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, channels, 3, padding=1)
                self.head = torch.nn.Linear(channels, classes)

            def forward(self, x):
                y = self.conv(x) * 40.0
                while bool(y.abs().mean() > 1.0):
                    y = y * 0.5
                if bool(y.sum() > 0):
                    z = torch.relu(y)
                else:
                    z = torch.sigmoid(y)
                return self.head(z.mean(dim=(2, 3)))

        return torch.jit.script(Gated())
    return build


def zoo():
    entries = []

    def add(name, family, build, inputs=image(), sets=("all",), opset=14):
        entries.append(Entry(name, family, build, inputs, sets, opset))

    default = ("default", "all")
    small = ("small", "default", "all")
    classifiers = [
        ("resnet18", "resnet", default), ("resnet34", "resnet", ()), ("resnet50", "resnet", default),
        ("resnet101", "resnet", ()), ("resnet152", "resnet", ()),
        ("resnext50_32x4d", "resnext", default), ("resnext101_32x8d", "resnext", ()),
        ("wide_resnet50_2", "wide_resnet", default), ("wide_resnet101_2", "wide_resnet", ()),
        ("vgg11", "vgg", default), ("vgg11_bn", "vgg", ()), ("vgg13", "vgg", ()), ("vgg16", "vgg", ()),
        ("vgg16_bn", "vgg", ()), ("vgg19", "vgg", ()), ("vgg19_bn", "vgg", ()),
        ("alexnet", "alexnet", default),
        ("squeezenet1_0", "squeezenet", ()), ("squeezenet1_1", "squeezenet", small),
        ("densenet121", "densenet", default), ("densenet161", "densenet", ()), ("densenet169", "densenet", ()),
        ("densenet201", "densenet", ()),
        ("googlenet", "googlenet", default),
        ("mobilenet_v2", "mobilenet", default), ("mobilenet_v3_large", "mobilenet", default),
        ("mobilenet_v3_small", "mobilenet", small),
        ("mnasnet0_5", "mnasnet", small), ("mnasnet1_0", "mnasnet", default),
        ("shufflenet_v2_x0_5", "shufflenet", small), ("shufflenet_v2_x1_0", "shufflenet", default),
        ("efficientnet_b0", "efficientnet", default), ("efficientnet_b1", "efficientnet", ()),
        ("efficientnet_b2", "efficientnet", ()), ("efficientnet_b3", "efficientnet", ()),
        ("efficientnet_v2_s", "efficientnet_v2", default),
        ("regnet_x_400mf", "regnet", default), ("regnet_y_400mf", "regnet", default),
        ("regnet_y_1_6gf", "regnet", ()),
        ("convnext_tiny", "convnext", default), ("convnext_small", "convnext", ()),
        ("vit_b_16", "vit", default), ("vit_b_32", "vit", ()),
        ("swin_t", "swin", default), ("swin_s", "swin", ()),
        ("maxvit_t", "maxvit", default),
    ]
    for name, family, sets in classifiers:
        add(name, family, torchvision_classifier(name), sets=sets + ("all",) if "all" not in sets else sets)
    add("inception_v3", "inception", torchvision_classifier("inception_v3", init_weights=True), image(299),
        sets=default)
    for name, sets in (("fcn_resnet50", default), ("deeplabv3_resnet50", ()), ("deeplabv3_mobilenet_v3_large", default),
                       ("lraspp_mobilenet_v3_large", small)):
        add(name, "segmentation", torchvision_segmentation(name), image(224), sets=sets if sets else ("all",))
    add("unet_small", "unet", unet(32, 3), image(128), sets=small)
    add("scripted_control_flow", "control_flow", scripted_control_flow(16, 10), image(64), sets=small)
    for kind in ("LSTM", "GRU", "RNN"):
        build, inputs = recurrent(kind, 1, False, False)
        add(kind.lower(), "rnn", build, inputs, small)
        build, inputs = recurrent(kind, 2, True, True)
        add(kind.lower() + "_2layer_bidirectional_state", "rnn", build, inputs, small)
    for opset in (11, 14, 17):
        build, inputs = transformer_encoder(256, 4, 2, 64)
        add(f"transformer_encoder_opset{opset}", "transformer", build, inputs,
            small if opset == 14 else ("default", "all"), opset)
        build, inputs = gpt_decoder(1000, 256, 4, 2, 64)
        add(f"gpt_decoder_opset{opset}", "transformer", build, inputs, small if opset == 17 else ("default", "all"),
            opset)
    return entries


def model_available(entry):
    """torchvision's version decides which classifiers exist (maxvit_t arrived in 0.15)."""
    import torchvision
    build = entry.build
    if entry.family in ("rnn", "transformer", "unet", "control_flow"):
        return True
    if entry.family == "segmentation":
        return hasattr(torchvision.models.segmentation, entry.name)
    return hasattr(torchvision.models, entry.name)


def random_inputs(entry, batch):
    generator = np.random.default_rng(1)
    arrays = []
    for name, shape, dtype in entry.inputs(batch):
        if dtype == "int64":
            arrays.append((name, generator.integers(0, 1000, size=shape).astype(np.int64)))
        else:
            arrays.append((name, generator.standard_normal(shape).astype(np.float32)))
    return arrays


# How build_model draws weights; a cached export of another version is exported again.
WEIGHTS_VERSION = 2


def build_model(entry):
    """The entry's model in eval mode, from the fixed seed, with weights that make its output
    depend on its input, as a trained model's does:
    - torchvision zero-initializes some layers (ViT's classification head), whose output is then
      the bias whatever the input: such layers get PyTorch's default initialization;
    - batch normalization's running statistics start at mean 0 and variance 1, so in eval mode
      a deep network of small random weights shrinks its activations layer by layer until the
      classifier sees zeros (GoogLeNet's output was its bias to the last bit): the statistics
      are set from one batch of random inputs in training mode, as calibration would."""
    import torch
    torch.manual_seed(0)
    model = entry.build()
    with torch.no_grad():
        for module in model.modules():
            weight = getattr(module, "weight", None)
            if (isinstance(module, (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d))
                    and weight is not None and not torch.any(weight)):
                module.reset_parameters()
        norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
        if norms:
            for norm in norms:
                norm.reset_running_stats()
                norm.momentum = None  # a cumulative average: the calibration batch's statistics
            model.train()
            generator = np.random.default_rng(2)
            calibration = tuple(torch.from_numpy(generator.standard_normal(shape).astype(np.float32))
                                for _, shape, _ in entry.inputs(2))
            model(*calibration)
    return model.eval()


def export(entry, batch, directory):
    """Exports to directory/model.onnx with test_data_set_0 (inputs and PyTorch's outputs);
    returns the number of ONNX nodes. Cached: an existing export with its outputs is kept."""
    import onnx
    import onnx.numpy_helper
    import torch

    import warnings
    warnings.filterwarnings("ignore", category=UserWarning)  # the exporter's advice, not ours to act on
    path = os.path.join(directory, "model.onnx")
    data = os.path.join(directory, "test_data_set_0")
    stamp = os.path.join(directory, "weights_version")
    current = os.path.exists(stamp) and open(stamp).read().strip() == str(WEIGHTS_VERSION)
    if not (current and os.path.exists(path) and os.path.exists(os.path.join(data, "output_0.pb"))):
        os.makedirs(data, exist_ok=True)
        model = build_model(entry)
        inputs = random_inputs(entry, batch)
        tensors = tuple(torch.from_numpy(array) for _, array in inputs)
        with torch.no_grad():
            outputs = model(*tensors)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        output_names = [f"output_{i}" for i in range(len(outputs))]
        torch.onnx.export(model, tensors, path, opset_version=entry.opset, input_names=[n for n, _ in inputs],
                          output_names=output_names, do_constant_folding=True)
        torch.save(model.state_dict(), os.path.join(directory, "state.pt"))
        for i, (name, array) in enumerate(inputs):
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(onnx.numpy_helper.from_array(array, name).SerializeToString())
        for i, (name, value) in enumerate(zip(output_names, outputs)):
            with open(os.path.join(data, f"output_{i}.pb"), "wb") as f:
                f.write(onnx.numpy_helper.from_array(value.numpy(), name).SerializeToString())
        with open(stamp, "w") as f:
            f.write(f"{WEIGHTS_VERSION}\n")
    return len(onnx.load(path, load_external_data=False).graph.node)


def read_tensor(path):
    import onnx
    import onnx.numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(tensor)


def field(text, name):
    found = re.findall(rf"^{name}=(\S+)", text, re.MULTILINE)
    return found[-1] if found else None


def run_tessel(entry, directory, threads, timeout):
    """Compiles and runs the model on the exported inputs; returns (status, compile seconds,
    kernels, largest relative error, message)."""
    out = os.path.join(directory, "tessel_out")
    command = [TESSEL, "run", os.path.join(directory, "model.onnx"), "--inputs-dir",
               os.path.join(directory, "test_data_set_0"), "--output-dir", out, "--threads", str(threads)]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", None, None, None, f"no result within {timeout} s"
    log = result.stdout + result.stderr
    if result.returncode != 0:
        lines = [line for line in log.splitlines() if line.strip()]
        return "compile" if "compile_seconds" not in log else "run", None, None, None, " | ".join(lines[-3:])
    compile_s = field(log, "compile_seconds")
    kernels = field(log, "kernels")
    worst = 0.0
    varied = False  # some output takes more than one value: the comparison can fail
    data = os.path.join(directory, "test_data_set_0")
    i = 0
    while os.path.exists(os.path.join(data, f"output_{i}.pb")):
        expected = read_tensor(os.path.join(data, f"output_{i}.pb")).astype(np.float64)
        got_path = os.path.join(out, f"output_{i}.npy")
        if not os.path.exists(got_path):
            return "run", compile_s, kernels, None, f"no output_{i}.npy written"
        got = np.load(got_path).astype(np.float64)
        if got.shape != expected.shape:
            return "mismatch", compile_s, kernels, None, f"output {i}: shape {got.shape}, PyTorch {expected.shape}"
        scale = max(np.max(np.abs(expected)), 1e-30)
        worst = max(worst, float(np.max(np.abs(got - expected))) / scale)
        varied = varied or expected.size < 2 or float(np.ptp(expected)) > 0
        i += 1
    if not varied:
        return "trivial", compile_s, kernels, worst, "every PyTorch output is one value repeated: the check proves nothing"
    status = "ok" if worst <= RELATIVE_TOLERANCE else "mismatch"
    return status, compile_s, kernels, worst, ""


def time_torch(entry, directory, batch, threads, runs):
    import torch
    torch.set_num_threads(threads)
    model = build_model(entry)
    model.load_state_dict(torch.load(os.path.join(directory, "state.pt")))
    tensors = tuple(torch.from_numpy(array) for _, array in random_inputs(entry, batch))
    times = []
    with torch.no_grad():
        for _ in range(3):
            model(*tensors)
        for _ in range(runs):
            start = time.perf_counter()
            model(*tensors)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def time_tessel(directory, threads, runs, timeout):
    command = [TESSEL, "bench", os.path.join(directory, "model.onnx"), "--threads", str(threads), "--repeat",
               str(runs), "--inputs-dir", os.path.join(directory, "test_data_set_0")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    value = field(result.stdout + result.stderr, "latency_ms")
    return float(value) if result.returncode == 0 and value else None


def add_selection_arguments(parser, default_set):
    """--set, --models, --batch and --threads: which models, exported how, run how."""
    parser.add_argument("--set", default=default_set, choices=("small", "default", "all"))
    parser.add_argument("--models", help="comma-separated zoo names (instead of --set)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)


def select_entries(entries, models, set_name, program):
    """The entries named by --models (comma-separated), else those of --set; None after saying
    which names are unknown."""
    if models:
        names = models.split(",")
        unknown = [n for n in names if n not in {e.name for e in entries}]
        if unknown:
            print(f"{program}: unknown model(s) {', '.join(unknown)} (see model_zoo.py --list)", file=sys.stderr)
            return None
        return [e for e in entries if e.name in names]
    return [e for e in entries if set_name in e.sets]


def missing_tools(tessel, program):
    """None when the tessel binary and the exporter's packages are there; else, after saying
    what is missing, the exit status: 2 for Tessel, 77 for PyTorch, torchvision or onnx."""
    if not os.access(tessel, os.X_OK):
        print(f"{program}: {tessel} is missing: build Tessel first (./run or scripts/build.sh)", file=sys.stderr)
        return 2
    try:
        import onnx  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as error:
        print(f"{program}: needs python3-torch, python3-torchvision and python3-onnx ({error}); "
              "scripts/install-deps.sh installs them", file=sys.stderr)
        return 77
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection_arguments(parser, "default")
    parser.add_argument("--rounds", type=int, default=3, help="alternating timing rounds")
    parser.add_argument("--runs", type=int, default=10, help="runs per round")
    parser.add_argument("--out", default=os.path.join(TOP, "build", "zoo"))
    parser.add_argument("--timeout", type=int, default=300, help="seconds allowed to compile and run one model")
    parser.add_argument("--no-time", action="store_true", help="check correctness only")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tessel", default=TESSEL)
    args = parser.parse_args()
    globals()["TESSEL"] = args.tessel
    entries = zoo()
    if args.list:
        for entry in entries:
            print(f"{entry.name:34} {entry.family:16} opset {entry.opset:2}  sets: {' '.join(entry.sets)}")
        return 0
    entries = select_entries(entries, args.models, args.set, "model_zoo.py")
    if entries is None:
        return 2
    missing = missing_tools(args.tessel, "model_zoo.py")
    if missing is not None:
        return missing
    os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS=str(args.threads), TESSEL_NUM_THREADS=str(args.threads))

    header = f"{'model':34} {'nodes':>5} {'kernels':>7} {'compile_s':>9} {'tessel_ms':>10} {'torch_ms':>9} " \
             f"{'ratio':>6} {'per_image':>9} {'max_err':>8}  status"
    print(header, flush=True)
    failures = 0
    for entry in entries:
        if not model_available(entry):
            print(f"{entry.name:34} {'':>5} {'':>7} {'':>9} {'':>10} {'':>9} {'':>6} {'':>9} {'':>8}  "
                  f"absent (not in this torchvision)", flush=True)
            continue
        directory = os.path.join(args.out, f"{entry.name}_b{args.batch}")
        nodes = kernels = compile_s = error = None
        tessel_ms = torch_ms = None
        try:
            nodes = export(entry, args.batch, directory)
        except Exception as exception:  # an exporter failure is PyTorch's, reported and skipped
            status, message = "export", str(exception).splitlines()[0][:120]
        else:
            status, compile_s, kernels, error, message = run_tessel(entry, directory, args.threads, args.timeout)
        if status == "ok" and not args.no_time:
            tessel_times, torch_times = [], []
            for _ in range(args.rounds):
                torch_times.append(time_torch(entry, directory, args.batch, args.threads, args.runs))
                measured = time_tessel(directory, args.threads, args.runs, args.timeout)
                if measured is not None:
                    tessel_times.append(measured)
            tessel_ms = statistics.median(tessel_times) if tessel_times else None
            torch_ms = statistics.median(torch_times)
        if status != "ok":
            failures += 1
        number = lambda v, f: format(float(v), f) if v is not None else "-"
        ratio = torch_ms / tessel_ms if tessel_ms and torch_ms else None
        print(f"{entry.name:34} {number(nodes, '5.0f'):>5} {number(kernels, '7.0f'):>7} {number(compile_s, '9.2f'):>9} "
              f"{number(tessel_ms, '10.2f'):>10} {number(torch_ms, '9.2f'):>9} {number(ratio, '6.2f'):>6} "
              f"{number(tessel_ms / args.batch if tessel_ms else None, '9.2f'):>9} {number(error, '8.1e'):>8}  "
              f"{status}{(': ' + message) if message else ''}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
