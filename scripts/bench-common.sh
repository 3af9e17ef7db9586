#!/usr/bin/env bash
# Sourced by the benchmark scripts (bench-e2e, bench-cores, bench-rescore, bench-mcp-rest), from
# the repository root: a clean environment for evalgate (no EVALGATE_* setting, GitHub variable
# or act flag leaking in from the caller; nothing published), and the binary measured:
# $EVALGATE_BIN when set, else target/release/evalgate, built first. Sets ROOT and BIN.
#   scale_set TOOLS QUERIES   prints the scale set's directory, generated when missing
# shellcheck disable=SC2034  # ROOT and BIN are for the sourcing script
ROOT=$(pwd)

while IFS= read -r v; do unset "$v"; done < <(compgen -e | grep '^EVALGATE_' | grep -v '^EVALGATE_BIN$' || true)
unset GITHUB_ACTIONS ACT || true
export EVALGATE_PUBLISH=never

BIN=${EVALGATE_BIN:-$ROOT/target/release/evalgate}
if [ -z "${EVALGATE_BIN:-}" ]; then
  echo "building the release binary (cargo build --release)..." >&2
  cargo build --release --quiet
fi
[ -x "$BIN" ] || { echo "error: no binary at $BIN" >&2; exit 2; }

scale_set() {
  local dir="$ROOT/target/scale-set/t$1-q$2"
  [ -f "$dir/security.json" ] || python3 scripts/scale-set.py --tools "$1" --queries "$2" --out "$dir" >&2
  printf '%s' "$dir"
}
