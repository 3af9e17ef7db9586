#!/usr/bin/env bash
# MCP search through evalgate's client against REST search of the same proxy, in one session.
#
#   scripts/bench-mcp-rest.sh [REPS]     (default 5 repetitions of each, interleaved)
#
# EVALGATE_BIN names another build (default target/release/evalgate, built first);
# EVALGATE_BENCH_DATASETS another dataset directory (default datasets/v1);
# EVALGATE_BENCH_BEFORE a second build to compare with ("before"): it gets its own proxy, and
# its runs alternate with those of EVALGATE_BIN ("after") in every repetition;
# EVALGATE_BENCH_MCP_SESSIONS=1 has the proxies serve MCP with sessions and SSE answers
# (`"mcp_sessions": true`, the way before 2026-11-25) instead of stateless JSON.
#
# Starts evalgate's reference proxy (`evalgate proxy`, release build) once over the v1 corpus,
# every server replayed by `evalgate replay`, then measures the v1 golden set (586 queries) with
# `--sut mcp` (streamable HTTP, the `retrieve_tools` tool) and with `--sut rest`
# (`/api/v1/index/search`) against that one proxy, at concurrency 1 and 4, alternating the two so
# both see the same machine load. Prints per mode the medians of: the wall time of a whole
# evaluation; the catalog check in it (the search probe: every corpus tool searched by its name
# and description before the first golden query, `retrieval.catalog.seconds` of the report) and
# the rest of the run (wall minus catalog: start-up, golden searches, scoring, reports); the
# report's per-search latency of the golden searches (p50, mean); then MCP / REST ratios. Both go
# through the same BM25 index in the same process: the difference is the protocol and evalgate's
# client and the proxy's server handling of it.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
# read before bench-common.sh clears every EVALGATE_* variable but EVALGATE_BIN
datasets="${EVALGATE_BENCH_DATASETS:-$PWD/datasets/v1}"
before="${EVALGATE_BENCH_BEFORE:-}"
sessions="${EVALGATE_BENCH_MCP_SESSIONS:-0}"
# shellcheck source=scripts/bench-common.sh
source scripts/bench-common.sh
work="$(mktemp -d)"
labels=(after)
declare -A bins=([after]="$BIN") ports=() pids=()
if [ -n "$before" ]; then
  [ -x "$before" ] || { echo "error: no binary at $before" >&2; exit 2; }
  labels=(before after)
  bins[before]="$before"
fi
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

corpus="$datasets/corpus.json"
want="$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tools']))" "$corpus")"

start_proxy() { # label: a reference proxy of that build, every server replayed by that build
  local label="$1" bin="${bins[$1]}" port have=0
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  python3 - "$corpus" "$bin" "$work/mcp_config-$label.json" "$sessions" <<'EOF'
import json, sys
corpus, binary, out, sessions = sys.argv[1:]
servers = sorted({t["server"] for t in json.load(open(corpus))["tools"]})
json.dump({"api_key": "k", "mcp_sessions": sessions == "1", "mcpServers": [
    {"name": s, "protocol": "stdio", "command": binary,
     "args": ["replay", "--corpus", corpus, "--server", s], "enabled": True}
    for s in servers]}, open(out, "w"))
EOF
  "$bin" proxy --mcpproxy-config "$work/mcp_config-$label.json" --listen "127.0.0.1:$port" >"$work/proxy-$label.log" 2>&1 &
  pids[$label]=$!
  ports[$label]=$port
  for _ in $(seq 1 600); do
    have="$(curl -s -H 'X-API-Key: k' "http://127.0.0.1:$port/api/v1/tools" 2>/dev/null \
      | python3 -c 'import json,sys
try: print(len(json.load(sys.stdin)["data"]["tools"]))
except Exception: print(0)' 2>/dev/null || echo 0)"
    if [ "$have" = "$want" ]; then break; fi
    sleep 0.2
  done
  [ "$have" = "$want" ] || { echo "the $label proxy did not list the $want tools (has $have)"; cat "$work/proxy-$label.log"; exit 1; }
  # the listing is complete before the proxy is done indexing (before 2026-11-25 it went on
  # rebuilding its index for tens of seconds, once per upstream): wait until it is idle, so that
  # the first measurement does not share the machine with it
  local ticks last=-1 idle=0
  for _ in $(seq 1 600); do
    ticks="$(awk '{print $14 + $15}' "/proc/${pids[$label]}/stat")"
    if [ "$ticks" = "$last" ]; then idle=$((idle + 1)); else idle=0; fi
    [ "$idle" -ge 4 ] && break
    last="$ticks"
    sleep 0.25
  done
  echo "$label: reference proxy of $bin on 127.0.0.1:$port with $want tools, idle"
}
for label in "${labels[@]}"; do start_proxy "$label"; done
echo "$reps repetitions"

measure() { # label mode concurrency rep -> "wall p50 mean catalog"
  local label="$1" mode="$2" c="$3" rep="$4" url out start end
  case "$mode" in
    mcp) url="http://127.0.0.1:${ports[$label]}/mcp" ;;
    rest) url="http://127.0.0.1:${ports[$label]}/api/v1/index/search" ;;
  esac
  out="$work/$label-$mode-$c-$rep"
  start="$(date +%s.%N)"
  "${bins[$label]}" retrieval --datasets "$datasets" --sut "$mode" --url "$url" --header "X-API-Key: k" \
    --concurrency "$c" --no-baseline --robustness off -q --out "$out"
  end="$(date +%s.%N)"
  python3 - "$out/report.json" "$start" "$end" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["retrieval"]
lat = r["latency_ms"]
print(float(sys.argv[3]) - float(sys.argv[2]), lat["p50"], lat["mean"], r["catalog"]["seconds"])
EOF
}

for c in 1 4; do
  for label in "${labels[@]}"; do
    : >"$work/$label-mcp-$c.txt"
    : >"$work/$label-rest-$c.txt"
  done
  for rep in $(seq 1 "$reps"); do
    for label in "${labels[@]}"; do
      measure "$label" mcp "$c" "$rep" >>"$work/$label-mcp-$c.txt"
      measure "$label" rest "$c" "$rep" >>"$work/$label-rest-$c.txt"
    done
  done
done
python3 - "$work" "${labels[@]}" <<'EOF'
import statistics, sys, os
work, labels = sys.argv[1], sys.argv[2:]
def med(label, mode, c):
    rows = [list(map(float, l.split())) for l in open(os.path.join(work, f"{label}-{mode}-{c}.txt"))]
    # wall, catalog check, the rest of the run, p50, mean
    rows = [[w, cat, w - cat, p50, mean] for w, p50, mean, cat in rows]
    return [statistics.median(col) for col in zip(*rows)]
head = f"{'concurrency':>11} {'mode':>6} " + " ".join(
    f"{h:>9}" for h in ["wall s", "catalog s", "other s", "p50 ms", "mean ms"])
row = lambda c, name, xs, fmt: print(f"{c:>11} {name:>6} " + " ".join(f"{x:>9{fmt}}" for x in xs))
for label in labels:
    if len(labels) > 1:
        print(f"{label}:")
    print(head)
    for c in (1, 4):
        m, r = med(label, "mcp", c), med(label, "rest", c)
        row(c, "mcp", m, ".3f")
        row(c, "rest", r, ".3f")
        row(c, "ratio", [x / y for x, y in zip(m, r)], ".2f")
if len(labels) > 1:
    print("after / before:")
    print(head)
    for c in (1, 4):
        for mode in ("mcp", "rest"):
            a, b = med("after", mode, c), med("before", mode, c)
            row(c, mode, [x / y for x, y in zip(a, b)], ".2f")
EOF
