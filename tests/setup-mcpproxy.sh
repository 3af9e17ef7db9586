#!/usr/bin/env bash
# Installs the real mcpproxy (smart-mcp-proxy/mcpproxy-go, MIT) at two pinned versions, headless
# (CGO_ENABLED=0; Linux builds compile the tray out):
#   v0.60.0  the current release
#   v0.51.0  the last release before v0.52.0, whose retrieve_tools still returned bare tool names
# into target/mcpproxy/<version>/mcpproxy (git-ignored). Called by tests/setup-mcp-servers.sh.
#
# How: `go install …@<version>` from the Go module proxy first. Where the module proxy refuses
# the module (ours does, with 403 at every version), the same tag's source tarball is built
# instead, after its sha256 is checked against the table below: ../shared/mcpproxy-src/ beside
# the repository, or EVALGATE_MCPPROXY_SRC. Either way the version is injected as mcpproxy's own
# Makefile does (-X main.version, -X …/httpapi.buildVersion); without it the binary calls itself
# v0.1.0. A binary already there whose `--version` names its version is kept: a second run does
# not rebuild.
#
# When neither way works, the exact error goes to target/mcpproxy/<version>/UNAVAILABLE. Under
# CI=true (or EVALGATE_REQUIRE_MCPPROXY=1) that fails this script; elsewhere the script goes on
# and scripts/test.sh skips the tests that need the binary, visibly and counted (never passed).
# EVALGATE_MCPPROXY_V0_60_0 / EVALGATE_MCPPROXY_V0_51_0 point the tests at binaries built
# elsewhere.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${EVALGATE_MCPPROXY_DIR:-$root/target/mcpproxy}"
src="${EVALGATE_MCPPROXY_SRC:-$root/../shared/mcpproxy-src}"
module="github.com/smart-mcp-proxy/mcpproxy-go"
status=0

# the tags' source, as recorded in ../shared/mcpproxy-src/README.md (git archive of the tag)
sha256_of() {
  case "$1" in
    v0.60.0) echo bd18e73bf291dae08d655495ecd9ddcd28b96ede6d1b7987b9ee2aa80007a94e ;;
    v0.51.0) echo 5c426c129566a7144c0c87812b9c9efe034b1123f22379903f0035ff77f3972f ;;
  esac
}

ldflags_of() {
  echo "-X main.version=$1 -X $module/internal/httpapi.buildVersion=$1"
}

# go install from the module proxy; prints the error and fails when it is refused
install_from_proxy() {
  local version="$1" dir="$2"
  CGO_ENABLED=0 GOBIN="$dir" GOFLAGS=-buildvcs=false \
    go install -ldflags "$(ldflags_of "$version")" "$module/cmd/mcpproxy@$version" 2>&1
}

# the tag's source tarball, checked, extracted under target/mcpproxy/src and built
build_from_source() {
  local version="$1" dir="$2" tarball want have work
  tarball="$src/mcpproxy-go-$version.tar.gz"
  want="$(sha256_of "$version")"
  if [ ! -f "$tarball" ]; then
    echo "no source tarball at $tarball (set EVALGATE_MCPPROXY_SRC)"
    return 1
  fi
  have="$(sha256sum "$tarball" | cut -d' ' -f1)"
  if [ "$have" != "$want" ]; then
    echo "$tarball: sha256 $have, expected $want: not built"
    return 1
  fi
  work="$dest/src"
  rm -rf "$work/mcpproxy-go-$version"
  mkdir -p "$work"
  tar -xzf "$tarball" -C "$work" || return 1
  (cd "$work/mcpproxy-go-$version" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false \
    go build -ldflags "$(ldflags_of "$version")" -o "$dir/mcpproxy" ./cmd/mcpproxy) 2>&1
}

for version in v0.60.0 v0.51.0; do
  dir="$dest/$version"
  mkdir -p "$dir"
  if [ -x "$dir/mcpproxy" ] && "$dir/mcpproxy" --version 2>/dev/null | grep -qF "$version"; then
    echo "mcpproxy $version: cached in $dir"
    rm -f "$dir/UNAVAILABLE"
    continue
  fi
  rm -f "$dir/mcpproxy"
  if ! command -v go >/dev/null 2>&1; then
    echo "go is not installed: cannot build mcpproxy $version" | tee "$dir/UNAVAILABLE"
    status=1
    continue
  fi
  start=$(date +%s)
  echo "mcpproxy $version: go install $module/cmd/mcpproxy@$version (Go module proxy)"
  if proxy_out="$(install_from_proxy "$version" "$dir")"; then
    how="go install"
  else
    echo "mcpproxy $version: the module proxy refused it ($(echo "$proxy_out" | grep -m1 -o '[0-9][0-9][0-9] [A-Za-z ]*' || echo "see UNAVAILABLE")): building the source tarball from $src"
    if src_out="$(build_from_source "$version" "$dir")"; then
      how="the source tarball (sha256 checked)"
    else
      {
        echo "go install $module/cmd/mcpproxy@$version failed ($(go version); GOPROXY=$(go env GOPROXY)):"
        echo "$proxy_out" | tail -n 3
        echo "and the source build failed:"
        echo "$src_out" | tail -n 5
      } >"$dir/UNAVAILABLE"
      echo "mcpproxy $version: NOT INSTALLED:" >&2
      sed 's/^/  /' "$dir/UNAVAILABLE" >&2
      status=1
      continue
    fi
  fi
  rm -f "$dir/UNAVAILABLE"
  echo "mcpproxy $version: built from $how in $(($(date +%s) - start)) s: $("$dir/mcpproxy" --version 2>&1 | head -n 1)"
done

if [ "$status" != 0 ] && { [ "${CI:-}" = true ] || [ "${EVALGATE_REQUIRE_MCPPROXY:-}" = 1 ]; }; then
  echo "the real mcpproxy is required here (CI=true or EVALGATE_REQUIRE_MCPPROXY=1)" >&2
  exit 1
fi
exit 0
