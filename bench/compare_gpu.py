#!/usr/bin/env python3
"""Tessel's GPU modules against PyTorch (cuBLAS) on the same GPU, in the same run.

Each module (.tgpu, from `tessel lower OP --target "cuda -arch=sm_90" --emit module`) is
checked against a float64 reference and timed by tessel-deploy-run (CUDA events, median of
--repeat runs) alternating with PyTorch's own kernel for the same operator (CUDA events,
median), for --rounds rounds; the table shows the medians over rounds. TF32 is off, so
PyTorch runs true float32 (cuBLAS sgemm), as Tessel does.

Operators understood from the module's function name: matmul_MxNxK, dense_MxNxK and
conv2d_nNcChHwWkKrRsSstSTRIDEpPAD (PyTorch's conv2d, cuDNN with its algorithm search on).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="+", help=".tgpu files")
    parser.add_argument("--runner", default="tessel-deploy-run", help="tessel-deploy-run to use")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--repeat", type=int, default=50, help="timed runs per round (default 50)")
    parser.add_argument("--json", help="also write the results here")
    return parser.parse_args()


def torch_peer(function, tensors, torch):
    """The PyTorch call computing the module's function on `tensors` (CUDA), or None."""
    conv = re.fullmatch(r"conv2d_n\d+c\d+h\d+w\d+k\d+r\d+s\d+st(\d+)p(\d+)", function)
    if conv:
        stride, pad = int(conv.group(1)), int(conv.group(2))
        data, weight = tensors[0], tensors[1]
        bias = tensors[2] if len(tensors) > 2 else None
        return lambda: torch.nn.functional.conv2d(data, weight, bias, stride=stride, padding=pad)
    match = re.fullmatch(r"(matmul|dense)_(\d+)x(\d+)x(\d+)", function)
    if not match:
        return None
    a, b = tensors
    if match.group(1) == "matmul":
        return lambda: torch.matmul(a, b)
    bt = b.t()
    return lambda: torch.matmul(a, bt)


def time_torch(call, repeat, torch):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def run_tessel(runner, module, inputs, out_dir, repeat):
    command = [runner, "--gpu-module", module, "--output-dir", out_dir]
    for name, path in inputs:
        command += ["--input", f"{name}={path}"]
    if repeat:
        command += ["--repeat", str(repeat)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    values = dict(re.findall(r"^(\w+): (.*)$", result.stdout, re.MULTILINE))
    return values


def main():
    args = parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as error:
        print(f"compare_gpu: needs numpy and torch on this machine ({error})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("compare_gpu: PyTorch sees no CUDA GPU", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    print(f"GPU: {torch.cuda.get_device_name(0)}; PyTorch {torch.__version__}, TF32 off")
    rows, failures = [], 0
    work = tempfile.mkdtemp(prefix="compare_gpu.")
    for module_path in args.modules:
        module = json.load(open(module_path))
        function = module.get("function", os.path.basename(module_path))
        params, outputs = module["params"], set(module["outputs"])
        rng = np.random.default_rng(0)
        inputs, host = [], []
        for param in params:
            if param["name"] in outputs:
                continue
            array = rng.uniform(-1, 1, param["shape"]).astype(param["dtype"])
            path = os.path.join(work, f"{param['name']}.npy")
            np.save(path, array)
            inputs.append((param["name"], path))
            host.append(array)
        out_dir = os.path.join(work, "out")
        os.makedirs(out_dir, exist_ok=True)
        info = run_tessel(args.runner, module_path, inputs, out_dir, 0)
        output_name = next(p["name"] for p in params if p["name"] in outputs)
        result = np.load(os.path.join(out_dir, f"{output_name}.npy"))
        tensors = [torch.from_numpy(a).cuda() for a in host]
        peer = torch_peer(function, tensors, torch)
        if peer is None:
            print(f"{module_path}: no PyTorch peer for {function}; skipped", file=sys.stderr)
            continue
        reference64 = torch_peer(function, [t.double() for t in tensors], torch)().cpu().numpy()
        peer32 = peer().cpu().numpy()
        scale = float(np.abs(reference64).max()) or 1.0
        tessel_error = float(np.abs(result - reference64).max()) / scale
        torch_error = float(np.abs(peer32 - reference64).max()) / scale
        correct = tessel_error <= 4 * torch_error + 1e-6
        failures += not correct
        tessel_ms, torch_ms = [], []
        for _ in range(args.rounds):
            tessel_ms.append(float(run_tessel(args.runner, module_path, inputs, out_dir, args.repeat)["time_ms_median"]))
            torch_ms.append(time_torch(peer, args.repeat, torch))
        flops = module.get("flops", 0)
        row = {
            "module": os.path.basename(module_path), "function": function, "code_format": module["code_format"],
            "tessel_ms": statistics.median(tessel_ms), "torch_ms": statistics.median(torch_ms),
            "tessel_error": tessel_error, "torch_error": torch_error, "correct": correct,
            "device": info.get("device", "?"),
        }
        row["tessel_tflops"] = flops / row["tessel_ms"] / 1e9 if flops else None
        row["torch_tflops"] = flops / row["torch_ms"] / 1e9 if flops else None
        row["fraction_of_torch"] = row["torch_ms"] / row["tessel_ms"]
        rows.append(row)
        print(f"{row['module']:<28} {function:<24} tessel {row['tessel_ms']:8.3f} ms"
              + (f" ({row['tessel_tflops']:6.2f} TFLOP/s)" if flops else "")
              + f"  torch {row['torch_ms']:8.3f} ms" + (f" ({row['torch_tflops']:6.2f} TFLOP/s)" if flops else "")
              + f"  tessel/torch speed {row['fraction_of_torch']:.3f}"
              + f"  error {tessel_error:.2e} (torch {torch_error:.2e}) {'OK' if correct else 'WRONG'}", flush=True)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
