#!/usr/bin/env bash
# MCP search through evalgate's client against REST search of the same proxy, in one session.
#
#   scripts/bench-mcp-rest.sh [REPS]     (default 5 repetitions of each, interleaved)
#
# EVALGATE_BIN names another build (default target/release/evalgate, built first);
# EVALGATE_BENCH_DATASETS another dataset directory (default datasets/v1).
#
# Starts evalgate's reference proxy (`evalgate proxy`, release build) once over the v1 corpus,
# every server replayed by `evalgate replay`, then measures the v1 golden set (586 queries) with
# `--sut mcp` (streamable HTTP, the `retrieve_tools` tool) and with `--sut rest`
# (`/api/v1/index/search`) against that one proxy, at concurrency 1 and 4, alternating the two so
# both see the same machine load. Prints per mode the median wall time of a whole evaluation and
# the medians of the report's per-search latency (p50, mean), then MCP / REST ratios. Both go
# through the same BM25 index in the same process: the difference is the protocol and evalgate's
# client and the proxy's server handling of it.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
# read before bench-common.sh clears every EVALGATE_* variable but EVALGATE_BIN
datasets="${EVALGATE_BENCH_DATASETS:-$PWD/datasets/v1}"
# shellcheck source=scripts/bench-common.sh
source scripts/bench-common.sh
bin="$BIN"
work="$(mktemp -d)"
proxy_pid=""
cleanup() {
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

corpus="$datasets/corpus.json"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
python3 - "$corpus" "$bin" "$work/mcp_config.json" <<'EOF'
import json, sys
corpus, binary, out = sys.argv[1:]
servers = sorted({t["server"] for t in json.load(open(corpus))["tools"]})
json.dump({"api_key": "k", "mcpServers": [
    {"name": s, "protocol": "stdio", "command": binary,
     "args": ["replay", "--corpus", corpus, "--server", s], "enabled": True}
    for s in servers]}, open(out, "w"))
EOF
"${bin}" proxy --mcpproxy-config "$work/mcp_config.json" --listen "127.0.0.1:$port" >"$work/proxy.log" 2>&1 &
proxy_pid=$!
want="$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['tools']))" "$corpus")"
for _ in $(seq 1 600); do
  have="$(curl -s -H 'X-API-Key: k' "http://127.0.0.1:$port/api/v1/tools" 2>/dev/null \
    | python3 -c 'import json,sys
try: print(len(json.load(sys.stdin)["data"]["tools"]))
except Exception: print(0)' 2>/dev/null || echo 0)"
  if [ "$have" = "$want" ]; then break; fi
  sleep 0.2
done
[ "$have" = "$want" ] || { echo "the proxy did not list the $want tools (has $have)"; cat "$work/proxy.log"; exit 1; }
echo "reference proxy on 127.0.0.1:$port with $want tools; $reps repetitions"

measure() { # mode concurrency rep -> "wall p50 mean"
  local mode="$1" c="$2" rep="$3" url out
  case "$mode" in
    mcp) url="http://127.0.0.1:$port/mcp" ;;
    rest) url="http://127.0.0.1:$port/api/v1/index/search" ;;
  esac
  out="$work/$mode-$c-$rep"
  local start end
  start="$(date +%s.%N)"
  "$bin" retrieval --datasets "$datasets" --sut "$mode" --url "$url" --header "X-API-Key: k" --concurrency "$c" \
    --no-baseline --robustness off -q --out "$out"
  end="$(date +%s.%N)"
  python3 - "$out/report.json" "$start" "$end" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["retrieval"]
lat = r["latency_ms"]
print(float(sys.argv[3]) - float(sys.argv[2]), lat["p50"], lat["mean"])
EOF
}

for c in 1 4; do
  : >"$work/mcp-$c.txt"
  : >"$work/rest-$c.txt"
  for rep in $(seq 1 "$reps"); do
    measure mcp "$c" "$rep" >>"$work/mcp-$c.txt"
    measure rest "$c" "$rep" >>"$work/rest-$c.txt"
  done
done
python3 - "$work" <<'EOF'
import statistics, sys, os
work = sys.argv[1]
def med(mode, c):
    rows = [list(map(float, l.split())) for l in open(os.path.join(work, f"{mode}-{c}.txt"))]
    return [statistics.median(col) for col in zip(*rows)]
print(f"{'concurrency':>11} {'mode':>5} {'wall s':>8} {'p50 ms':>8} {'mean ms':>8}")
for c in (1, 4):
    m, r = med("mcp", c), med("rest", c)
    print(f"{c:>11} {'mcp':>5} {m[0]:>8.3f} {m[1]:>8.3f} {m[2]:>8.3f}")
    print(f"{c:>11} {'rest':>5} {r[0]:>8.3f} {r[1]:>8.3f} {r[2]:>8.3f}")
    print(f"{c:>11} {'ratio':>5} {m[0]/r[0]:>8.2f} {m[1]/r[1]:>8.2f} {m[2]/r[2]:>8.2f}")
EOF
