#!/usr/bin/env bash
# Runs the ONNX backend tests (tests/conformance/test_onnx_node.cpp: the node, pytorch-converted,
# pytorch-operator and simple groups) and prints one line per test, each group's summary and the
# total, and the failures grouped by operator, for whoever fixes them.
#
#   scripts/conformance.sh [--build-dir DIR] [--build] [--groups G,G] [--filter TEXT] [--shard I/N]
#                          [--jobs J] [--draft-skip-list]
#
#   --build-dir DIR     where Tessel is built (default: build)
#   --build             build the conformance_test_onnx_node target first (2 jobs)
#   --groups G,G        only these groups (node, pytorch-converted, pytorch-operator, simple)
#   --filter TEXT       only tests whose group/name contains TEXT (pytorch-converted/, test_add)
#   --shard I/N         only every N-th test, starting at the I-th (0-based)
#   --jobs J            tests run at once (default 2)
#   --draft-skip-list   also print a draft skip list of the failing tests: listed tests keep
#                       their reasons, new ones get a reason from their message (marked
#                       "CHECK:" where no rule knew it; edit those before committing)
#
# Exit status: the test's (0 when every test passes or is listed in tests/conformance/skip_list.txt).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$top/build"
build=0
draft=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --build) build=1; shift ;;
    --groups) export TESSEL_CONFORMANCE_GROUPS="$2"; shift 2 ;;
    --filter) export TESSEL_CONFORMANCE_FILTER="$2"; shift 2 ;;
    --shard) export TESSEL_CONFORMANCE_SHARD="$2"; shift 2 ;;
    --jobs) export TESSEL_CONFORMANCE_JOBS="$2"; shift 2 ;;
    --draft-skip-list) draft=1; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "conformance.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [[ $build -eq 1 ]]; then
  cmake --build "$build_dir" --target conformance_test_onnx_node --parallel 2 || exit 2
fi
binary="$build_dir/tests/conformance_test_onnx_node"
if [[ ! -x "$binary" ]]; then
  echo "conformance.sh: $binary is not built (run with --build, or give --build-dir)" >&2
  exit 2
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$binary" 2>&1 | tee "$log" | grep -E '^(PASS|FAIL|SKIP|FIXED) |^conformance'
status=${PIPESTATUS[0]}

# Which operator each failure belongs to: the node a message names ("Reshape 'Reshape_6': ..."),
# else the model's only operator, else the operator whose name the test's name starts with.
# Debian's python3-onnx reads the models; without it the test name stands in.
/usr/bin/python3 - "$log" "${TESSEL_ONNX_TEST_DATA:-/usr/share/libonnx-testdata/data}" "$draft" <<'PYTHON'
import collections, os, re, sys

log, data, draft = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
try:
    import onnx
except ImportError:
    onnx = None

# Tests are named group/test_name, as the test data directory holds them.
def model_ops(test):
    if onnx is None:
        return []
    try:
        model = onnx.load(os.path.join(data, test, "model.onnx"), load_external_data=False)
    except Exception:
        return []
    return [node.op_type for node in model.graph.node]

def operator_of(test, message):
    named = re.search(r"\b([A-Z][A-Za-z0-9]*) '[^']*': ", message)
    if named:
        return named.group(1)
    ops = model_ops(test)
    if len(set(ops)) == 1:
        return ops[0]
    name = test.split("/")[-1]
    stem = name[len("test_"):].replace("_", "").lower()
    matches = [op for op in set(ops) if stem.startswith(op.lower())]
    if matches:
        return max(matches, key=len)
    return "(" + name[len("test_"):].split("_")[0] + ")"

def short(message):
    message = re.sub(r"/\S*/data/", "", message)
    return message if len(message) <= 160 else message[:157] + "..."

failures = []
for line in open(log, errors="replace"):
    found = re.match(r"^(FAIL|SKIP) (\S+) \([0-9.]+ s\): (.*)$", line.rstrip("\n"))
    if not found:
        continue
    kind, test, message = found.groups()
    listed_reason = ""
    if kind == "SKIP":
        listed_reason, message = re.match(r"^(.*?) \[(.*)\]$", message).groups()
    failures.append((kind, test, message, operator_of(test, message), listed_reason))

if not failures:
    sys.exit(0)
by_operator = collections.defaultdict(list)
for kind, test, message, op, _ in failures:
    by_operator[op].append((kind, test, message))
print("\nfailures by operator (FAIL: not on the skip list, SKIP: listed):")
for op, items in sorted(by_operator.items(), key=lambda item: (-len(item[1]), item[0])):
    unlisted = sum(1 for kind, _, _ in items if kind == "FAIL")
    print(f"  {op:28s} {len(items):4d} failing ({unlisted} not listed)  e.g. {items[0][1]}: {short(items[0][2])}")

# A reason a reader can act on, for the failures whose kind the message makes plain.
def reason_for(message, op):
    unimplemented = re.search(r"Tessel does not implement '(\w+)'", message)
    if unimplemented:
        return f"operator {unimplemented.group(1)} not implemented"
    if "string tensors" in message:
        return "string tensors unsupported"
    if "is segmented" in message or "sequence, map or optional" in message:
        return "sequence and optional values unsupported (tensors only)"
    control = re.search(r"\((If|Loop|Scan)\) attribute '\w+' holds a subgraph", message)
    if control:
        return f"control flow ({control.group(1)} with a subgraph) unsupported"
    if "preview.training" in message:
        return "training operator (ai.onnx.preview.training domain) unsupported"
    if "dimension below 1" in message:
        return "zero-size tensors unsupported (static shapes with positive dimensions only)"
    return None

if draft:
    print("\n# draft skip list: listed tests keep their reasons; edit every CHECK: before committing")
    for kind, test, message, op, listed_reason in sorted(failures, key=lambda f: f[1]):
        reason = listed_reason or reason_for(message, op)
        if not reason:
            detail = re.sub(r"^(error|wrong result|crash|timeout|internal error): ", "", message)
            detail = re.sub(r"^\S+: error: \S*model\.onnx: ", "", detail)
            detail = re.sub(r"^\S*\.(onnx|pb): error: ", "", detail)
            reason = f"CHECK: {op}: {short(detail)}"
        # Node tests are listed by bare name, the others as group/test_name.
        listed = test[len("node/"):] if test.startswith("node/") else test
        print(f"{listed}  # {reason}")
PYTHON
exit "$status"
