#!/usr/bin/env bash
# Regenerate datasets/v0/corpus.json from the tools/list of the pinned MCP servers.
#
#   bash datasets/regenerate.sh            # install (if needed) + snapshot
#   EVALGATE_MCP_SCRATCH=/some/dir bash datasets/regenerate.sh
#
# The snapshot is `evalgate corpus snapshot` (rmcp), driven by tools/snapshot_all.py.
# Servers are installed OUTSIDE the repo (default /tmp/evalgate-mcp-scratch):
#   npm  : npm ci from datasets/tools/npm/{package.json,package-lock.json} (install scripts off,
#          so puppeteer does not try to download a browser; listing tools does not need one)
#   PyPI : a venv installed from datasets/tools/requirements.lock (every package pinned)
# Pins, licences, launch commands and dummy env vars live in datasets/tools/servers.json.
# The output is deterministic: running this twice gives byte-identical files.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$here/tools"
out="$here/v0/corpus.json"
scratch="${EVALGATE_MCP_SCRATCH:-/tmp/evalgate-mcp-scratch}"
npm_prefix="$scratch/npm"
venv="$scratch/venv"
work="$scratch/work"

command -v node >/dev/null || { echo "regenerate: node (>= 18) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "regenerate: npm is required" >&2; exit 1; }
command -v python3 >/dev/null || { echo "regenerate: python3 (>= 3.10) is required" >&2; exit 1; }

# The pins file, package.json and requirements.lock must agree.
python3 - "$tools" <<'PY'
import json, sys, os
tools = sys.argv[1]
pins = json.load(open(os.path.join(tools, "servers.json")))["servers"]
npm_deps = json.load(open(os.path.join(tools, "npm", "package.json")))["dependencies"]
lock = {}
for line in open(os.path.join(tools, "requirements.lock")):
    line = line.strip()
    if line and not line.startswith("#"):
        name, _, ver = line.partition("==")
        lock[name.lower().replace("_", "-")] = ver
bad = []
for p in pins:
    if p["registry"] == "npm":
        got = npm_deps.get(p["package"])
    else:
        got = lock.get(p["package"].lower().replace("_", "-"))
    if got != p["version"]:
        bad.append(f"{p['name']}: servers.json pins {p['version']}, install files pin {got}")
if bad:
    sys.exit("regenerate: pin mismatch:\n  " + "\n  ".join(bad))
PY

mkdir -p "$scratch" "$work/fs-root"
stamp_src="$(cat "$tools/npm/package.json" "$tools/npm/package-lock.json" "$tools/requirements.lock" | sha256sum | cut -d' ' -f1)"

if [[ "$(cat "$scratch/.installed" 2>/dev/null || true)" != "$stamp_src" ]]; then
  echo "regenerate: installing pinned servers into $scratch" >&2
  rm -rf "$npm_prefix" "$venv"
  mkdir -p "$npm_prefix"
  cp "$tools/npm/package.json" "$tools/npm/package-lock.json" "$npm_prefix/"
  (cd "$npm_prefix" && PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 \
     npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$tools/requirements.lock"
  echo "$stamp_src" > "$scratch/.installed"
fi

# Fresh state for servers that keep some (memory file, filesystem root).
rm -f "$work/memory.jsonl"

mkdir -p "$(dirname "$out")"
# the snapshot itself is taken by evalgate (rmcp); build it unless EVALGATE points at a binary
if [[ -z "${EVALGATE:-}" ]]; then
  (cd "$here/.." && cargo build --release --quiet)
  EVALGATE="$here/../target/release/evalgate"
fi
python3 "$tools/snapshot_all.py" \
  --evalgate "$EVALGATE" \
  --pins "$tools/servers.json" \
  --out "$out" \
  --npm-prefix "$npm_prefix" \
  --venv "$venv" \
  --scratch "$work"
