#!/usr/bin/python3
"""No pathological kernels: every kernel of the zoo's models against its roofline bound.

usage: bench/roofline_zoo.py [--set small|default|all] [--models NAME,NAME...] [--batch B]
                             [--threads T] [--repeat N] [--bar F] [--exceptions FILE]
                             [--out DIR] [--timeout S] [--tessel PATH]

Exports each model as bench/model_zoo.py does (into the same cache), runs
`tessel bench MODEL --profile --save-profile FILE` on its exported inputs and reads each
kernel's roofline fraction from the profile: its bound (the larger of its flops at the
machine's measured FMA peak and its least bytes, inputs read and outputs written once, at the
measured memory bandwidth) over its fastest run (the probes keep their fastest samples too: a
busy machine only slows things down). Per model one line with the machine's
peak_gflops and bandwidth_gbps as measured then, and a line per kernel below the bar (25% by
default):
  model     the zoo name
  kernel    the kernel's name (a fused kernel is named after its operators)
  op        what it computes: "Conv", "fused(ConvPrepacked+Relu)", "copy", ...
  ms        its median time per run
  share     its share of the model's kernel time
  roofline  its fraction of the roofline bound
  bound     which ceiling binds it: compute or memory
  exception the reason of the entry that excuses it, or "NONE"
Exceptions live in bench/roofline_exceptions.json (--exceptions): {"exceptions": [entry, ...]},
each entry {"reason": why (required), "investigated": what was looked at, and any of
"models", "kernel", "op" (shell patterns, "*" when absent), "max_ms", "max_share" (the entry
covers only kernels at or under them)}. The first entry that matches counts.

The exit status is 0 when every kernel below the bar has an exception, 1 when one has none or
a model could not be profiled, 2 on a usage error, 77 when PyTorch, torchvision or onnx is
missing (model_zoo.py exports with them). Fractions are measurements: on a loaded or shared
machine both the probes and the kernels slow down, so a kernel near the bar may cross it
between runs.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_zoo  # noqa: E402  (the zoo's models and their export, shared with model_zoo.py)

DEFAULT_EXCEPTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roofline_exceptions.json")


def read_exceptions(path):
    with open(path) as f:
        document = json.load(f)
    entries = document.get("exceptions") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected an object with an \"exceptions\" list")
    for index, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str) or not entry["reason"].strip():
            raise ValueError(f"{path}: exception {index} has no \"reason\"")
        unknown = set(entry) - {"reason", "investigated", "models", "kernel", "op", "max_ms", "max_share"}
        if unknown:
            raise ValueError(f"{path}: exception {index} has unknown field(s) {', '.join(sorted(unknown))}")
    return entries


def matching_exception(entries, model, row):
    for entry in entries:
        if not fnmatch.fnmatchcase(model, entry.get("models", "*")):
            continue
        if not fnmatch.fnmatchcase(row["kernel"], entry.get("kernel", "*")):
            continue
        if not fnmatch.fnmatchcase(row["op"], entry.get("op", "*")):
            continue
        if "max_ms" in entry and row["ms"] > entry["max_ms"]:
            continue
        if "max_share" in entry and row["share"] > entry["max_share"]:
            continue
        return entry
    return None


def profile_model(tessel, directory, threads, repeat, timeout):
    """Runs tessel bench --profile on the exported model; returns (profile dict, None) or
    (None, what went wrong)."""
    with tempfile.TemporaryDirectory() as scratch:
        saved = os.path.join(scratch, "profile.json")
        command = [tessel, "bench", os.path.join(directory, "model.onnx"), "--threads", str(threads), "--repeat",
                   str(repeat), "--inputs-dir", os.path.join(directory, "test_data_set_0"), "--profile",
                   "--save-profile", saved]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"no profile within {timeout} s"
        if result.returncode != 0 or not os.path.exists(saved):
            lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
            return None, " | ".join(lines[-3:])
        with open(saved) as f:
            return json.load(f), None


def kernel_rows(profile):
    """One row per profiled kernel, with its share of the model's kernel time."""
    nodes = profile["nodes"]
    total = sum(node["ms"] for node in nodes)
    return [{"kernel": node["kernel"], "op": node.get("op", "?"), "ms": node["ms"],
             "share": node["ms"] / total if total > 0 else 0.0, "fraction": node.get("roofline_fraction"),
             "bound": node.get("bound", "-")} for node in nodes]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    model_zoo.add_selection_arguments(parser, "small")
    parser.add_argument("--repeat", type=int, default=20,
                        help="timed runs per model (each kernel's fastest is stated against its roofline)")
    parser.add_argument("--bar", type=float, default=0.25, help="the least fraction of its roofline a kernel must reach")
    parser.add_argument("--exceptions", default=DEFAULT_EXCEPTIONS)
    parser.add_argument("--out", default=os.path.join(model_zoo.TOP, "build", "zoo"), help="the export cache")
    parser.add_argument("--timeout", type=int, default=600, help="seconds allowed to compile and profile one model")
    parser.add_argument("--tessel", default=model_zoo.TESSEL)
    args = parser.parse_args()

    entries = model_zoo.select_entries(model_zoo.zoo(), args.models, args.set, "roofline_zoo.py")
    if entries is None:
        return 2
    try:
        exceptions = read_exceptions(args.exceptions)
    except (OSError, ValueError) as error:
        print(f"roofline_zoo.py: {error}", file=sys.stderr)
        return 2
    missing = model_zoo.missing_tools(args.tessel, "roofline_zoo.py")
    if missing is not None:
        return missing
    os.environ.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS=str(args.threads),
                      TESSEL_NUM_THREADS=str(args.threads))

    print(f"{'model':34} {'kernel':48} {'op':36} {'ms':>9} {'share':>6} {'roofline':>8} {'bound':7} exception",
          flush=True)
    kernels = below = excused = failures = 0
    unexcused = {}  # (model, op) -> [count, share, lowest fraction, highest fraction]
    for entry in entries:
        if not model_zoo.model_available(entry):
            print(f"{entry.name:34} absent (not in this torchvision)", flush=True)
            continue
        if entry.family == "control_flow":
            # Interpreted: `tessel bench` has no per-kernel profile for it (its segments, compiled
            # as they are met, are ordinary kernels the other models cover).
            print(f"{entry.name:34} interpreted (control flow decided while it runs): no per-kernel profile",
                  flush=True)
            continue
        directory = os.path.join(args.out, f"{entry.name}_b{args.batch}")
        try:
            model_zoo.export(entry, args.batch, directory)
        except Exception as exception:  # an exporter failure is PyTorch's, reported and skipped
            print(f"{entry.name:34} export failed: {str(exception).splitlines()[0][:120]}", flush=True)
            failures += 1
            continue
        profile, problem = profile_model(args.tessel, directory, args.threads, args.repeat, args.timeout)
        if profile is None:
            print(f"{entry.name:34} not profiled: {problem}", flush=True)
            failures += 1
            continue
        rows = kernel_rows(profile)
        slow = sorted((row for row in rows if row["fraction"] is not None and row["fraction"] < args.bar),
                      key=lambda row: -row["ms"])
        unbounded = sum(1 for row in rows if row["fraction"] is None)
        kernels += len(rows)
        below += len(slow)
        print(f"{entry.name:34} latency_ms={profile['latency_ms']:.3f} kernels={len(rows)} below_bar={len(slow)} "
              f"peak_gflops={profile.get('peak_gflops', 0):.1f} bandwidth_gbps={profile.get('bandwidth_gbps', 0):.1f}"
              + (f" without_bound={unbounded}" if unbounded else ""), flush=True)
        for row in slow:
            excuse = matching_exception(exceptions, entry.name, row)
            excused += excuse is not None
            if excuse is None:
                group = unexcused.setdefault((entry.name, row["op"]), [0, 0.0, 1.0, 0.0])
                group[0] += 1
                group[1] += row["share"]
                group[2] = min(group[2], row["fraction"])
                group[3] = max(group[3], row["fraction"])
            print(f"{entry.name:34} {row['kernel']:48} {row['op']:36} {row['ms']:9.4f} {100 * row['share']:5.1f}% "
                  f"{100 * row['fraction']:7.1f}% {row['bound']:7} {excuse['reason'] if excuse else 'NONE'}",
                  flush=True)
    if unexcused:
        print("\nwithout an exception, by model and op (share: of the model's kernel time):")
        for (model, op), (count, share, lowest, highest) in sorted(unexcused.items(), key=lambda item: -item[1][1]):
            print(f"  {model:34} {op:48} kernels={count:<3} share={100 * share:5.1f}% "
                  f"roofline={100 * lowest:.1f}-{100 * highest:.1f}%")
    print(f"\nkernels below {100 * args.bar:.0f}% of their roofline bound: {below} of {kernels} "
          f"({excused} with an exception, {below - excused} without); models not profiled: {failures}")
    return 1 if failures or below > excused else 0


if __name__ == "__main__":
    sys.exit(main())
