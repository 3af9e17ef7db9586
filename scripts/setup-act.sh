#!/usr/bin/env bash
# Installs nektos/act (the local GitHub Actions runner, MIT) at a pinned version for tests/act.rs:
#   go install github.com/nektos/act@v0.2.89   (Go module proxy; GOBIN=target/tools/act-v0.2.89)
# A binary already there whose `act --version` names the version is kept: a second run installs
# nothing. The time the install took is printed.
#
# When the install fails, its error goes to target/tools/act-v0.2.89/UNAVAILABLE (and to stderr).
# Under CI=true that fails this script; elsewhere it exits 0, and the test runner skips the `act`
# test binary visibly (tests/act.rs itself never passes without act: it panics naming this
# script). EVALGATE_ACT_DIR puts the install elsewhere (tests/act.rs reads it too;
# EVALGATE_ACT names an act binary installed some other way).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="v0.2.89"
module="github.com/nektos/act"
dir="${EVALGATE_ACT_DIR:-$root/target/tools/act-$version}"
bin="$dir/act"

mkdir -p "$dir"
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qF "${version#v}"; then
  echo "act $version: cached at $bin ($("$bin" --version 2>&1 | head -n 1))"
  rm -f "$dir/UNAVAILABLE"
  exit 0
fi
rm -f "$bin"

unavailable() {
  printf '%s\n' "$@" >"$dir/UNAVAILABLE"
  echo "act $version: NOT INSTALLED:" >&2
  sed 's/^/  /' "$dir/UNAVAILABLE" >&2
  if [ "${CI:-}" = true ]; then
    echo "act is required here (CI=true): tests/act.rs runs the action under it" >&2
    exit 1
  fi
  exit 0
}

if ! command -v go >/dev/null 2>&1; then
  unavailable "go is not installed: cannot go install $module@$version"
fi

start=$SECONDS
echo "act $version: go install $module@$version (Go module proxy) into $dir"
# CGO off: a static binary that does not depend on the host's C toolchain
if ! out="$(CGO_ENABLED=0 GOBIN="$dir" GOFLAGS=-buildvcs=false go install "$module@$version" 2>&1)"; then
  unavailable "go install $module@$version failed ($(go version); GOPROXY=$(go env GOPROXY)):" \
    "$(printf '%s\n' "$out" | tail -n 5)"
fi
if ! "$bin" --version >/dev/null 2>&1; then
  unavailable "go install $module@$version succeeded but $bin does not run:" \
    "$("$bin" --version 2>&1 | tail -n 3)"
fi
rm -f "$dir/UNAVAILABLE"
echo "act $version: installed in $((SECONDS - start)) s: $("$bin" --version 2>&1 | head -n 1)"
