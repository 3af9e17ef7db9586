#!/usr/bin/env bash
# `evalgate fitness --lines` (the embedded fast path) against full runs on edited corpora, in
# one session (issue 38's bound: at least 5 candidates per second on v1, each exact).
#
#   scripts/bench-fitness.sh [CANDIDATES] [FULL_RUNS]   (default 120 candidates, 5 full runs)
#
# EVALGATE_BIN names another build (default target/release/evalgate, built first).
#
# 1. Makes CANDIDATES candidates from the v1 corpus (scripts/fitness-candidates.py).
# 2. Times `evalgate fitness --lines` over all of them (one process, the datasets loaded once):
#    wall time, candidates per second.
# 3. Times the peer an optimiser would otherwise use: for each of the first FULL_RUNS
#    candidates, write the edited corpus.json and run `evalgate retrieval --datasets DIR
#    --no-baseline --robustness off` on it; per-candidate wall time; the ratio.
# 4. Checks exactness: each full run's means, split means and per-tool figures equal the
#    fitness line of the same candidate (compared as numbers, to the last digit).
set -euo pipefail
cd "$(dirname "$0")/.."
candidates="${1:-120}"
full="${2:-5}"
# shellcheck source=scripts/bench-common.sh
source scripts/bench-common.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 scripts/fitness-candidates.py "$ROOT/datasets/v1" "$candidates" "$work/candidates.jsonl"
echo "v1: $(wc -l <"$work/candidates.jsonl") candidates, 2 tools rewritten in each; load average $(cut -d' ' -f1-3 /proc/loadavg)"

start=$(date +%s.%N)
"$BIN" fitness --lines <"$work/candidates.jsonl" >"$work/fitness.jsonl"
end=$(date +%s.%N)
fit_wall=$(python3 -c "print(float('$end') - float('$start'))")

# the peer: a full run per candidate on the edited corpus
mkdir -p "$work/data"
cp "$ROOT/datasets/v1/golden.json" "$work/data/golden.json"
: >"$work/full.txt"
head -n "$full" "$work/candidates.jsonl" | while IFS= read -r cand; do
  python3 - "$ROOT/datasets/v1/corpus.json" "$cand" "$work/data/corpus.json" <<'EOF'
import json, sys
corpus = json.load(open(sys.argv[1]))
cand = json.loads(sys.argv[2])
for t in corpus["tools"]:
    if t["tool_id"] in cand:
        t["description"] = cand[t["tool_id"]]["description"]
json.dump(corpus, open(sys.argv[3], "w"))
EOF
  rm -rf "$work/full"
  start=$(date +%s.%N)
  "$BIN" retrieval -q --datasets "$work/data" --no-baseline --robustness off --out "$work/full"
  end=$(date +%s.%N)
  python3 -c "print(float('$end') - float('$start'))" >>"$work/full.txt"
  cp "$work/full/report.json" "$work/full-$(wc -l <"$work/full.txt").json"
done

python3 - "$work" "$candidates" "$full" "$fit_wall" <<'EOF'
import json, statistics, sys
work, n, full, fit_wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
lines = [json.loads(l) for l in open(f"{work}/fitness.jsonl")]
assert len(lines) == n and all("overall" in l for l in lines), "every candidate scored"
cands = [json.loads(l) for l in open(f"{work}/candidates.jsonl")]
for i in range(full):
    r = json.load(open(f"{work}/full-{i + 1}.json"))["retrieval"]
    got = lines[i]
    want = {k: s["mean"] for k, s in r["metrics"].items()}
    assert {k: v for k, v in got["overall"].items() if k != "queries"} == want, f"candidate {i + 1}: overall"
    for name, s in r["splits"].items():
        assert {k: v for k, v in got["splits"][name].items() if k not in ("queries", "held_out")} == s["metrics"], name
    for tool in cands[i]:
        rel = [q for q in r["per_query"] if any(l["tool_id"] == tool and l["relevance"] > 0 for l in q["labels"])]
        found = sum(1 for q in rel if tool in q["retrieved"][:5])
        assert got["per_tool"][tool]["relevant_in"] == len(rel) and got["per_tool"][tool]["found_in_top_5"] == found, tool
full_runs = [float(x) for x in open(f"{work}/full.txt")]
per_full = statistics.median(full_runs)
per_fit = fit_wall / n
print()
print("| | wall | per candidate | candidates/s |")
print("|---|---:|---:|---:|")
print(f"| `evalgate fitness --lines`, {n} candidates | {fit_wall:.2f} s | {per_fit * 1000:.0f} ms | **{n / fit_wall:.1f}** |")
print(f"| full `evalgate retrieval` per edited corpus (median of {full}) | | {per_full * 1000:.0f} ms | {1 / per_full:.1f} |")
print()
print(f"fitness per candidate / full run: {per_fit / per_full:.2f}x; the first {full} candidates' results equal their full runs exactly")
EOF
