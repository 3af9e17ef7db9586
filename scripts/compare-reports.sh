#!/usr/bin/env bash
# compare-reports.sh BEFORE_BIN AFTER_BIN: do two evalgate binaries write the same reports?
#
# For refactors that must not change a byte of output. Runs six fixed evaluations with each
# binary (v0 and v1, a passing and a failing gate, retrieval and security alone, an external
# scanner that claims one category so others show as out of scope) on the
# repository's datasets, blanks what differs between any two runs (latencies and durations,
# also in report.json's text: the scorecard's notes quote the p95), and diffs report.json
# (keys sorted), report.md, report.html, stdout and the exit code.
# Exit 0 when identical, 1 with the diff otherwise. Needs python3.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN" >&2; exit 2; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# a baseline 0.2 above default.json's values: the failing-gate case
python3 - "$root/baselines/default.json" "$work/strict.json" <<'PY'
import json, sys
def bump(x):
    if isinstance(x, dict):
        return {k: (min(1.0, v + 0.2) if k == "value" and isinstance(v, float) else bump(v)) for k, v in x.items()}
    return [bump(v) for v in x] if isinstance(x, list) else x
json.dump(bump(json.load(open(sys.argv[1]))), open(sys.argv[2], "w"), indent=1)
PY
# a scanner in lines mode (python3), flagging what says "ignore", claiming tool_poisoning only
cat >"$work/scanner.toml" <<'TOML'
detectors = ["rules", "scanner"]

[[scanner]]
name = "lines-scanner"
mode = "lines"
command = ["python3", "-c", "import sys, json\nfor l in sys.stdin:\n  e = json.loads(l); print(json.dumps({'flagged': 'ignore' in e['description'].lower()}), flush=True)"]
filter = '{flagged: .flagged}'
scope = ["tool_poisoning"]
TOML
capture() {
  local bin=$1 out=$2
  run() {
    local name=$1; shift
    mkdir -p "$out/$name"
    (cd "$root" && "$bin" "$@" --out "$work/out" >"$out/$name/stdout.txt" 2>/dev/null) && code=0 || code=$?
    echo "$code" >"$out/$name/exit"
    for f in report.json report.md report.html; do
      [ -f "$work/out/$f" ] && mv "$work/out/$f" "$out/$name/$f"
    done
    rm -rf "$work/out"
  }
  run v0 run --datasets datasets/v0 --baseline baselines/v0.json
  run v1 run --runs 3
  run v1-failing-gate run --baseline "$work/strict.json"
  run v0-security security --datasets datasets/v0 --baseline baselines/v0.json
  run v1-retrieval retrieval --no-baseline
  run v0-scoped-scanner security --datasets datasets/v0 --no-baseline --config "$work/scanner.toml"
  for f in "$out"/*/report.json; do
    python3 - "$f" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not k.endswith("_ms")}
    return [strip(v) for v in x] if isinstance(x, list) else x
p = sys.argv[1]
json.dump(strip(json.load(open(p))), open(p, "w"), indent=1, sort_keys=True)
PY
  done
  sed -i -E 's/[0-9]+(\.[0-9]+)? ?(ms|s)\b/T\2/g' "$out"/*/report.json "$out"/*/report.md "$out"/*/report.html "$out"/*/stdout.txt
}
capture "$(realpath "$1")" "$work/before"
capture "$(realpath "$2")" "$work/after"
if diff -r "$work/before" "$work/after"; then
  echo "identical: $(find "$work/before" -mindepth 1 -maxdepth 1 -type d | wc -l) evaluations, reports, stdout and exit codes"
else
  exit 1
fi
