#!/usr/bin/env bash
# The graph view at scale (issue 13): opens real and generated graphs in Tessel Studio
# (offscreen, screenshot mode with --timings) and prints for each: boxes and edges drawn,
# compile (or import) time, time from then to the first picture and to the final layout, the
# longest stall of the GUI's event loop, edge crossings and boxes crossed by edges in the final
# layout, and how many boxes the first view shows.
#
# usage: bench/graph_view.sh [--graphs "densenet121 inception_v3 resnet50 encoder12 dense5000 dense20000 flat10000"]
#                            [--out DIR] [--size 1440x900] [--view graph|timeline]
# Graphs: a bench/model_zoo.py model name, encoderN (a BERT-style encoder of N layers) or
# denseN (a generated DenseNet-shaped graph of about N operations, opened for viewing only) or
# flatN (a generated residual network of about N operations without module names: N boxes).
# --view timeline measures the Timeline's step view instead of the Graph view (a compiled
# model's timeline shows its last step, the graph after every pass).
# Models and screenshots go to DIR (build/graph_view by default); the screenshots are worth a
# look, since a count cannot say whether a picture reads well.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
graphs="densenet121 inception_v3 resnet50 encoder12 dense5000 dense20000 flat10000" out="$top/build/graph_view" size=1440x900 view=graph
while [[ $# -gt 0 ]]; do
  case "$1" in
    --graphs) graphs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --view) view=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "graph_view.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
studio="$top/build/bin/tessel-studio"
python=/usr/bin/python3
[[ -x "$studio" ]] || { echo "graph_view.sh: build Tessel first (./run or scripts/build.sh)" >&2; exit 2; }
"$python" -c "import onnx" 2>/dev/null || { echo "graph_view.sh: needs python3-onnx for /usr/bin/python3" >&2; exit 2; }
export QT_QPA_PLATFORM=offscreen
mkdir -p "$out"
field() { sed -n "s/^$1=//p" <<< "$2" | tail -1; }

printf "%-13s %6s %6s %10s %11s %11s %9s %10s %9s %8s\n" graph boxes edges compile_ms first_ms final_ms stall_ms crossings crossed visible
for graph in $graphs; do
  case "$graph" in
    encoder[0-9]*) model="$out/$graph.onnx"; [[ -f "$model" ]] || "$python" "$top/bench/graph_models.py" encoder "${graph#encoder}" "$model" >&2 ;;
    dense[0-9]*) model="$out/$graph.onnx"; [[ -f "$model" ]] || "$python" "$top/bench/graph_models.py" dense "${graph#dense}" "$model" >&2 ;;
    flat[0-9]*) model="$out/$graph.onnx"; [[ -f "$model" ]] || "$python" "$top/bench/graph_models.py" flat "${graph#flat}" "$model" >&2 ;;
    *) model="$out/$graph/model.onnx"; [[ -f "$model" ]] || "$python" "$top/bench/graph_models.py" zoo "$graph" "$out/$graph" >&2 ;;
  esac
  shot="$out/$graph.png"; [[ "$view" == graph ]] || shot="$out/$graph.$view.png"
  if ! result=$("$studio" --screenshot "$shot" --view "$view" --timings --size "$size" --theme light "$model" 2> "$out/$graph.log"); then
    echo "graph_view.sh: $graph failed (see $out/$graph.log)" >&2
    continue
  fi
  printf "%-13s %6s %6s %10s %11s %11s %9s %10s %9s %8s\n" "$graph" "$(field boxes "$result")" "$(field edges "$result")" \
    "$(field compile_ms "$result")" "$(field first_picture_ms "$result")" "$(field final_layout_ms "$result")" \
    "$(field longest_stall_ms "$result")" "$(field edge_crossings "$result")" "$(field boxes_crossed "$result")" \
    "$(field visible_boxes "$result")"
done
