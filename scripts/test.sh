#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
#
#   bash scripts/test.sh                 # everything
#   bash scripts/test.sh -E 'binary(proofs)'   # with cargo-nextest: its own arguments pass through
#
# 1. tests/setup-mcp-servers.sh installs the real dependencies, pinned: MCP servers, proxies and
#    a scanner (PyPI, npm), Chromium (Debian), the real mcpproxy (Go module proxy, else the
#    source tarball) and nektos/act (Go module proxy).
# 2. The tests run with cargo-nextest when it is installed, else with `cargo test` (nothing to
#    install: building cargo-nextest takes 25-35 minutes on 2 cores).
#
# A test whose real dependency is missing never counts as passed. Under CI=true a missing one
# fails the setup, so nothing is left out. Elsewhere (say, a laptop without Go or root for apt)
# the test binaries that need it are left out of the run, and the last line counts them
# ("skipped", never "passed") with the reason. Only three dependencies can be missing that way;
# every other test needs only what the setup installs from the registries, and fails loudly
# without it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

bash tests/setup-mcp-servers.sh

# test binary (tests/<name>.rs) -> why it cannot run here; empty when it can
declare -A missing=()
for v in v0.60.0 v0.51.0; do
  var="EVALGATE_MCPPROXY_$(echo "$v" | tr 'a-z.' 'A-Z_')"
  if [ -z "${!var:-}" ] && [ ! -x "target/mcpproxy/$v/mcpproxy" ]; then
    missing[mcpproxy_real]="mcpproxy $v is not installed: $(head -n 2 "target/mcpproxy/$v/UNAVAILABLE" 2>/dev/null | tr '\n' ' ')"
  fi
done
if [ -z "${EVALGATE_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1 &&
  ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  missing[browser]="Chromium is not installed (Debian package chromium, or EVALGATE_CHROMIUM)"
fi
if [ -z "${EVALGATE_ACT:-}" ] && [ ! -x target/tools/act-v0.2.89/act ]; then
  missing[act]="act v0.2.89 is not installed: $(head -n 2 target/tools/act-v0.2.89/UNAVAILABLE 2>/dev/null | tr '\n' ' ')"
fi
if [ "${CI:-}" = true ] && [ "${#missing[@]}" != 0 ]; then
  for b in "${!missing[@]}"; do echo "CI=true: tests/$b.rs cannot run: ${missing[$b]}" >&2; done
  exit 1
fi

skipped_tests=0
skipped_lines=()
for b in "${!missing[@]}"; do
  n="$(grep -cE '^\s*#\[(tokio::)?test' "tests/$b.rs" || true)"
  skipped_tests=$((skipped_tests + n))
  skipped_lines+=("  tests/$b.rs: $n test(s) not run: ${missing[$b]}")
done

status=0
if cargo nextest --version >/dev/null 2>&1; then
  filter=()
  if [ "${#missing[@]}" != 0 ]; then
    expr=""
    for b in "${!missing[@]}"; do expr="${expr:+$expr | }binary($b)"; done
    filter=(-E "not ($expr)")
  fi
  cargo nextest run --locked --no-fail-fast --features fault-injection "${filter[@]}" "$@" || status=$?
else
  echo "cargo-nextest is not installed: running the tests with cargo test"
  targets=(--lib --bins)
  for f in tests/*.rs; do
    b="$(basename "$f" .rs)"
    if [ -z "${missing[$b]:-}" ]; then targets+=(--test "$b"); fi
  done
  cargo test --locked --no-fail-fast --features fault-injection "${targets[@]}" "$@" || status=$?
fi

if [ "$skipped_tests" != 0 ]; then
  echo "SKIPPED, not passed: $skipped_tests test(s) whose real dependency is missing here:"
  printf '%s\n' "${skipped_lines[@]}"
fi
exit "$status"
