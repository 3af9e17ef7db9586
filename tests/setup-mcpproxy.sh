#!/usr/bin/env bash
# Installs the real mcpproxy (smart-mcp-proxy/mcpproxy-go, MIT) at two pinned versions from the Go
# module proxy, headless (CGO_ENABLED=0; Linux builds compile the tray out):
#   v0.60.0  the current release
#   v0.51.0  the last release before v0.52.0, whose retrieve_tools still returned bare tool names
# into target/mcpproxy/<version>/mcpproxy (git-ignored). A binary already there is kept, so a second
# CI run does not rebuild. Called by tests/setup-mcp-servers.sh.
#
# When an install fails (the registry refuses the module, the build breaks), the exact error is
# written to target/mcpproxy/<version>/UNAVAILABLE and the script goes on: tests/mcpproxy_real.rs
# then reports those tests as blocked with that error, instead of standing something in for the
# real binary. EVALGATE_REQUIRE_MCPPROXY=1 makes a failed install fail this script (and the tests).
# EVALGATE_MCPPROXY_V0_60_0 / EVALGATE_MCPPROXY_V0_51_0 point the tests at binaries built elsewhere.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${EVALGATE_MCPPROXY_DIR:-$root/target/mcpproxy}"
module="github.com/smart-mcp-proxy/mcpproxy-go/cmd/mcpproxy"
status=0

for version in v0.60.0 v0.51.0; do
  dir="$dest/$version"
  mkdir -p "$dir"
  if [ -x "$dir/mcpproxy" ]; then
    echo "mcpproxy $version: cached in $dir"
    continue
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "go is not installed: cannot build mcpproxy $version" | tee "$dir/UNAVAILABLE"
    status=1
    continue
  fi
  echo "installing mcpproxy $version with go install (Go module proxy) into $dir"
  start=$(date +%s)
  if out=$(CGO_ENABLED=0 GOBIN="$dir" GOFLAGS=-buildvcs=false \
      go install -ldflags "-X main.version=$version" "$module@$version" 2>&1); then
    rm -f "$dir/UNAVAILABLE"
    echo "mcpproxy $version: built in $(( $(date +%s) - start )) s"
  else
    {
      echo "go install $module@$version failed ($(go version 2>/dev/null); GOPROXY=$(go env GOPROXY 2>/dev/null)):"
      echo "$out" | tail -n 5
    } > "$dir/UNAVAILABLE"
    echo "mcpproxy $version: NOT INSTALLED, the tests that need it will say blocked:" >&2
    sed 's/^/  /' "$dir/UNAVAILABLE" >&2
    status=1
  fi
done

if [ "$status" != 0 ] && [ "${EVALGATE_REQUIRE_MCPPROXY:-}" = 1 ]; then
  exit 1
fi
exit 0
