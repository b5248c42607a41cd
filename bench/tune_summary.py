#!/usr/bin/python3
"""Figures of one tuning session from its event stream (tessel tune --events FILE; tuner/Events.md):

  tune_summary.py EVENTS [--at-minutes 7]

Prints key=value lines:
  default_ms, tuned_ms, speedup      the final measurement of the model (model_latency event), or
                                     for an operator the confirmation of its one task
  estimated_default_ms, estimated_final_ms
  estimated_at_ms, within_percent    the estimated model latency at --at-minutes, and how far it
                                     is from the final estimate (convergence)
  pairwise_accuracy, rounds          the cost model's mean pairwise ranking accuracy over the
                                     rounds after the third (rounds with a figure)
  top_k_recall                       the same for top-k recall
  trials, errors, elapsed_s
  curve                              "t_s:estimated_ms" pairs, one per round (for plotting)
"""
import json
import sys


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if args else 2
    at_minutes = 7.0
    if "--at-minutes" in args:
        at_minutes = float(args[args.index("--at-minutes") + 1])
    events = []
    with open(args[0]) as file:
        for number, line in enumerate(file, 1):
            line = line.strip()
            if not line:
                continue
            try:
                events.append(json.loads(line))
            except ValueError:
                print(f"tune_summary.py: {args[0]}:{number}: not JSON (skipped)", file=sys.stderr)
    # The last session in the file (resumed sessions append).
    starts = [i for i, e in enumerate(events) if e.get("event") == "session_start"]
    if not starts:
        print("tune_summary.py: no session_start in " + args[0], file=sys.stderr)
        return 2
    events = events[starts[-1]:]
    rounds = [e for e in events if e["event"] == "round"]
    end = next((e for e in events if e["event"] == "session_end"), None)
    latency = next((e for e in events if e["event"] == "model_latency"), None)
    confirms = [e for e in events if e["event"] == "confirm"]

    if latency:
        print(f"default_ms={latency['default_ms']:.4f}")
        print(f"tuned_ms={latency['tuned_ms']:.4f}")
        print(f"speedup={latency['speedup']:.3f}")
        print(f"max_abs_difference={latency['max_abs_difference']:.3g}")
    elif len(confirms) == 1 and confirms[0]["chosen_ms"] and confirms[0]["default_ms"]:
        c = confirms[0]
        print(f"default_ms={c['default_ms']:.5f}")
        print(f"tuned_ms={c['chosen_ms']:.5f}")
        print(f"speedup={c['default_ms'] / c['chosen_ms']:.3f}")
    if rounds:
        final = rounds[-1]["estimated_latency_ms"]
        print(f"estimated_default_ms={rounds[-1]['default_latency_ms']:.4f}")
        print(f"estimated_final_ms={final:.4f}")
        before = [r for r in rounds if r["t"] <= at_minutes * 60]
        if before and final > 0:
            at = before[-1]["estimated_latency_ms"]
            print(f"estimated_at_ms={at:.4f}")
            print(f"within_percent={100 * (at - final) / final:.2f}")
        later = [r for r in rounds if r["round"] > 3 and r["pairwise_accuracy"] is not None]
        if later:
            print(f"pairwise_accuracy={sum(r['pairwise_accuracy'] for r in later) / len(later):.3f}")
            print(f"rounds={len(later)}")
        recalls = [r["top_k_recall"] for r in rounds if r["round"] > 3 and r["top_k_recall"] is not None]
        if recalls:
            print(f"top_k_recall={sum(recalls) / len(recalls):.3f}")
        print("curve=" + " ".join(f"{r['t']:.0f}:{r['estimated_latency_ms']:.3f}" for r in rounds))
    if end:
        print(f"trials={end['trials']}")
        print(f"errors={end['errors']}")
        print(f"elapsed_s={end['elapsed_s']:.0f}")
        print(f"reason={end['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
