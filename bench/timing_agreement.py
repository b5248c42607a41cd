#!/usr/bin/python3
"""How well this machine can order a tuning round's candidates, measured:

  timing_agreement.py MODEL.onnx RECORDS.jsonl [--rounds 6] [--size 16] [--threads 2] [--turns 20]
                      [--tessel build/bin/tessel]

Takes --rounds search rounds of the session in RECORDS (rounds with at least 12 measured
candidates, chosen with a fixed seed), and measures each round's first --size candidates twice
in a row with a measuring worker (`tessel measure-worker`, the tuner's): once with the
candidates one after the other, once in --turns turns (MeasureRequest::turns), alternating the
two ways twice. For each way it prints:

  agreement   the fraction of candidate pairs both measurements order alike; no cost model can
              rank a round better against a measurement than a second measurement does, so this
              is the ceiling of the tuner's pairwise ranking accuracy on this machine now
  noise       the median |log(t1 / t2)| of one candidate's two times (0.05: 5%)

Timing follows the tuner's settings (50 ms, 5 to 100 samples per candidate; no check). The
machine must be otherwise idle. Exit code 2 on bad arguments, 1 when the worker fails.
"""
import itertools
import json
import math
import os
import random
import statistics
import subprocess
import sys
from collections import defaultdict


def option(args, name, default):
    if name in args:
        return args[args.index(name) + 1]
    return default


def main():
    args = sys.argv[1:]
    if len(args) < 2 or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args and args[0] in ("-h", "--help") else 2
    model, records_path = args[0], args[1]
    rounds_wanted = int(option(args, "--rounds", 6))
    size = int(option(args, "--size", 16))
    threads = option(args, "--threads", "2")
    turns = int(option(args, "--turns", 20))
    here = os.path.dirname(os.path.abspath(__file__))
    tessel = option(args, "--tessel", os.path.join(here, "..", "build", "bin", "tessel"))

    by_round = defaultdict(list)
    with open(records_path) as records:
        for number, line in enumerate(records, 1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                print(f"{records_path}:{number}: not a JSON line (skipped)", file=sys.stderr)
                continue
            if record.get("origin") == "search" and "error" not in record:
                by_round[(record.get("round"), record.get("task"))].append(record)
    rounds = sorted(key for key, members in by_round.items() if len(members) >= 12)
    if not rounds:
        print(f"{records_path} has no search round of 12 or more measured candidates", file=sys.stderr)
        return 2
    random.seed(1)
    chosen = random.sample(rounds, min(rounds_wanted, len(rounds)))

    worker = subprocess.Popen([tessel, "measure-worker", model, "--threads", threads], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    ready = json.loads(worker.stdout.readline() or "{}")
    if not ready.get("ready"):
        print(f"the measuring worker did not start: {ready.get('error')}", file=sys.stderr)
        return 1
    next_id = [0]

    def measure(candidates, turns_now):
        lines, ids = [], []
        for index, record in enumerate(candidates):
            next_id[0] += 1
            ids.append(next_id[0])
            request = {"id": next_id[0], "task": record["task"], "trace": record["trace"], "check": False,
                       "min_seconds": 0.05, "min_repeats": 5, "max_repeats": 100, "warmup_calls": 1, "seed": 42}
            if index == 0:
                request["batch"] = len(candidates)
                if turns_now > 1:
                    request["turns"] = turns_now
            lines.append(json.dumps(request))
        worker.stdin.write("\n".join(lines) + "\n")
        worker.stdin.flush()
        replies = {}
        while len(replies) < len(ids):
            line = worker.stdout.readline()
            if not line:
                raise RuntimeError("the measuring worker ended")
            reply = json.loads(line)
            if reply.get("id") in ids:
                replies[reply["id"]] = reply
        return [replies[i].get("median_ms", 0) if replies[i].get("ok") else 0 for i in ids]

    def agreement(first, second):
        same = pairs = 0
        for i, j in itertools.combinations(range(len(first)), 2):
            if first[i] == first[j] or second[i] == second[j] or 0 in (first[i], first[j], second[i], second[j]):
                continue
            pairs += 1
            same += (first[i] < first[j]) == (second[i] < second[j])
        return same / pairs if pairs else float("nan")

    results = defaultdict(lambda: ([], []))
    try:
        for way in (1, turns, 1, turns):
            for key in chosen:
                candidates = by_round[key][:size]
                first, second = measure(candidates, way), measure(candidates, way)
                agreements, noise = results[way]
                agreements.append(agreement(first, second))
                noise.extend(abs(math.log(a / b)) for a, b in zip(first, second) if a > 0 and b > 0)
    except RuntimeError as error:
        print(str(error), file=sys.stderr)
        return 1
    finally:
        worker.stdin.close()
        worker.wait()
    for way, (agreements, noise) in sorted(results.items()):
        label = "one_after_the_other" if way == 1 else f"in_{way}_turns"
        valid = [a for a in agreements if not math.isnan(a)]
        print(f"{label}: agreement={statistics.mean(valid):.3f} noise={statistics.median(noise):.4f} "
              f"rounds={len(chosen)} candidates={size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
