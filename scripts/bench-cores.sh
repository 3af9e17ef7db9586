#!/usr/bin/env bash
# Embedded retrieval on all cores (issue 20): `evalgate retrieval` with the built-in BM25 on a
# large scale set, one query at a time (--concurrency 1) against all cores (--concurrency N,
# default: the cores). Prints a Markdown table; exit 1 if the reports differ.
#
#   scripts/bench-cores.sh                 # build --release if needed, 50,000 queries, 3 runs each
#   REPEAT=5 TOOLS=10000 QUERIES=50000 scripts/bench-cores.sh
#   EVALGATE_BIN=/path/to/evalgate scripts/bench-cores.sh
#
# The two settings run interleaved, REPEAT times each: wall (perf_counter around the process),
# CPU (user + sys) and peak RSS (/usr/bin/time -v), medians; speedup = wall at 1 / wall at N.
# The whole command is timed: loading, the BM25 index, every query, scoring, the reports. Then
# report.json of the two settings is compared with every `*_ms` field and the summary sentence
# (which names the command's own flags) removed: the rankings must be identical, in order.
# The machine's load average is printed beside the figures: other processes on the same cores
# take from the speedup.
set -euo pipefail

cd "$(dirname "$0")/.."
REPEAT=${REPEAT:-3}
TOOLS=${TOOLS:-10000}
QUERIES=${QUERIES:-50000}
CORES=${CORES:-$(nproc)}

# shellcheck source=scripts/bench-common.sh
source scripts/bench-common.sh
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time (GNU time) is needed for CPU and RSS" >&2; exit 2; }

DIR=$(scale_set "$TOOLS" "$QUERIES")

WORK=$(mktemp -d "${TMPDIR:-/tmp}/evalgate-cores.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

python3 - "$REPEAT" "$DIR" "$WORK" "$CORES" "$BIN" <<'PY'
import json, os, statistics, subprocess, sys, tempfile, time

repeat, data, work, cores, binary = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
settings = sorted({1, cores})
runs = {c: [] for c in settings}
loads = []

def once(c):
    cmd = [binary, "retrieval", "-q", "--no-baseline", "--datasets", data,
           "--concurrency", str(c), "--out", os.path.join(work, f"c{c}")]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        out = dict(l.strip().rsplit(": ", 1) for l in tf.read().splitlines() if ": " in l)
    if p.returncode != 0:
        raise SystemExit(f"exit {p.returncode}: {' '.join(cmd)}")
    return (wall, float(out["User time (seconds)"]) + float(out["System time (seconds)"]),
            int(out["Maximum resident set size (kbytes)"]) / 1024)

for _ in range(repeat):
    for c in settings:
        loads.append(os.getloadavg()[0])
        runs[c].append(once(c))

def med(c, i):
    return statistics.median(r[i] for r in runs[c])

def stripped(c):
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if not k.endswith("_ms") and k != "summary"}
        return [strip(v) for v in x] if isinstance(x, list) else x
    with open(os.path.join(work, f"c{c}", "report.json")) as f:
        return strip(json.load(f))

n = len(json.load(open(os.path.join(data, "golden.json")))["queries"])
print(f"## Embedded retrieval on all cores: {n:,} queries, `evalgate retrieval --no-baseline`")
print()
print(f"{repeat} interleaved runs each, medians (min-max of the wall time); load average (1 min) "
      f"before the runs: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores.")
print()
print("| `--concurrency` | wall | CPU (user+sys) | peak RSS | speedup |")
print("|---:|---:|---:|---:|---:|")
for c in settings:
    walls = [r[0] for r in runs[c]]
    print(f"| {c} | {med(c, 0):.2f} s ({min(walls):.2f}-{max(walls):.2f}) | {med(c, 1):.2f} s | "
          f"{max(r[2] for r in runs[c]):.0f} MB | {med(1, 0) / med(c, 0):.2f}x |")
print()
same = all(stripped(c) == stripped(1) for c in settings)
print("report.json without `*_ms` fields: " + ("identical" if same else "**DIFFERENT**"))
sys.exit(0 if same else 1)
PY
