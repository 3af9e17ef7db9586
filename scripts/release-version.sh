#!/usr/bin/env bash
# Checks that the checkout is ready to be released as evalgate VERSION (the release workflow's
# first job; .ci/run runs it with the crate's version on every commit):
#
#   scripts/release-version.sh VERSION        (1.2.3, v1.2.3 or 1.2.3-rc.1)
#
# VERSION must be the `version` of Cargo.toml's [package], evalgate's entry in Cargo.lock (the
# release builds with --locked) and the default of action.yml's `version` input (what
# `uses: evalgate/evalgate@vVERSION` installs). Prints VERSION without the `v`; exits 1 naming
# every file that disagrees.
set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: $0 VERSION" >&2
  exit 2
fi
version="${1#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "release-version: '$1' is not a release version (1.2.3 or 1.2.3-pre)" >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

crate="$(awk '/^\[/{s=$0} s=="[package]" && /^version[ \t]*=/{v=$0; sub(/^[^=]*=[ \t]*"/,"",v); sub(/".*/,"",v); print v; exit}' "$root/Cargo.toml")"
lock="$(awk '/^\[\[package\]\]/{n=""} /^name = "evalgate"$/{n="evalgate"} n=="evalgate" && /^version = /{v=$0; sub(/^version = "/,"",v); sub(/".*/,"",v); print v; exit}' "$root/Cargo.lock")"
action="$(awk '/^  [a-z-]+:/{inp=($1=="version:")} inp && /^    default:/{v=$0; sub(/^    default:[ \t]*/,"",v); gsub(/["\047]/,"",v); sub(/[ \t]*(#.*)?$/,"",v); print v; exit}' "$root/action.yml")"

bad=0
for pair in "Cargo.toml:$crate" "Cargo.lock:$lock" "action.yml (input version's default):$action"; do
  file="${pair%%:*}"
  found="${pair#*:}"
  if [ "$found" != "$version" ]; then
    echo "release-version: $file says '${found:-nothing}', not $version" >&2
    bad=1
  fi
done
if [ "$bad" != 0 ]; then
  echo "release-version: set the version to $version in all of them (one commit), then release" >&2
  exit 1
fi
echo "$version"
