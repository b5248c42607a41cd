#!/usr/bin/env python3
"""Whole models compiled by `tessel compile MODEL --target "cuda -arch=sm_90" -o M.tgpu`, run on
the GPU by tessel-deploy-run, checked against the output PyTorch gave on the compiling
machine (M.expected.npy for the input M.input.npy), and timed (median of --repeat runs, CUDA
events) beside PyTorch's eager model of the same architecture on the same GPU (torchvision
name in M.torchvision; its weights are random, which does not change its speed), alternating
for --rounds rounds.
"""
import argparse, os, re, statistics, subprocess, sys, tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("modules", nargs="+")
    parser.add_argument("--runner", default="tessel-deploy-run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import numpy as np
    import torch
    import torchvision
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    failures = 0
    for module in args.modules:
        stem = module[: -len(".tgpu")]
        inputs = np.load(stem + ".input.npy")
        expected = np.load(stem + ".expected.npy")
        out = tempfile.mkdtemp()
        command = [args.runner, "--gpu-module", module, "--input", "input=" + stem + ".input.npy", "--output-dir", out]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode:
            print(f"{module}: {result.stderr.strip()}")
            failures += 1
            continue
        got = np.load(os.path.join(out, "output.npy"))
        scale = float(np.abs(expected).max()) or 1.0
        error = float(np.abs(got - expected).max()) / scale
        same_class = bool((got.argmax(-1) == expected.argmax(-1)).all())
        name = open(stem + ".torchvision").read().strip()
        model = getattr(torchvision.models, name)().eval().cuda()
        x = torch.from_numpy(inputs).cuda()
        tessel_ms, torch_ms = [], []
        with torch.no_grad():
            for _ in range(3):
                model(x)
            for _ in range(args.rounds):
                timed = subprocess.run(command + ["--repeat", str(args.repeat)], capture_output=True, text=True)
                tessel_ms.append(float(re.search(r"time_ms_median: (\S+)", timed.stdout).group(1)))
                times = []
                for _ in range(args.repeat):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    model(x)
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end))
                torch_ms.append(statistics.median(times))
        t, p = statistics.median(tessel_ms), statistics.median(torch_ms)
        ok = error < 1e-3 and same_class
        failures += not ok
        print(f"{os.path.basename(module):<24} {name:<14} batch {inputs.shape[0]}: tessel {t:8.3f} ms  torch eager {p:8.3f} ms"
              f"  tessel/torch speed {p / t:.3f}  relative error {error:.2e} {'OK' if ok else 'WRONG'}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
