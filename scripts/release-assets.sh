#!/usr/bin/env bash
# Builds and checks the assets of an evalgate release. The release workflow's `assets` job runs it
# on the binaries of its build matrix; .ci/run and tests/release.rs run it on the freshly built
# binary (a local release directory that scripts/install.sh then installs from).
#
#   scripts/release-assets.sh [--targets "TARGET ..."] VERSION BINDIR OUTDIR
#
# BINDIR has one directory per target, named TARGET or bin-TARGET (the release workflow's
# artifact names), each holding that target's `evalgate` binary. --targets defaults to every
# release target (RELEASE_TARGETS below: all of them must be there); a directory for a target not
# in the list is an error, so nothing is packaged by accident and nothing is missed.
# OUTDIR (created; must be empty) receives, in the layout of the release's download directory:
#   evalgate-VERSION-TARGET.tar.gz         one per target (scripts/package.sh: reproducible)
#   evalgate-VERSION-TARGET.tar.gz.sha256  its sha256, in sha256sum's format
#   SHA256SUMS                              every asset's line, sorted by asset
# and is then checked: SHA256SUMS verifies with `sha256sum -c`, there is one tarball per target
# and nothing else, each tarball holds exactly evalgate (executable), LICENSE and README.md, and
# the binary it was given byte for byte, and the binary of the machine this runs on, when it is
# in the set, prints `evalgate VERSION`.
# The sha256 lines go into the action's table with scripts/update-checksums.sh.
# EVALGATE_GZIP_LEVEL is passed on to scripts/package.sh (tests use 1).
set -euo pipefail

# The release targets: the build matrix of .github/workflows/release.yml and the platforms
# scripts/install.sh maps RUNNER_OS/RUNNER_ARCH to (tests/release.rs keeps the three equal).
RELEASE_TARGETS="x86_64-unknown-linux-musl aarch64-unknown-linux-musl aarch64-apple-darwin x86_64-apple-darwin"

usage() {
  echo "usage: $0 [--targets \"TARGET ...\"] VERSION BINDIR OUTDIR" >&2
  exit 2
}
die() {
  echo "release-assets: $*" >&2
  exit 1
}

targets="$RELEASE_TARGETS"
if [ "${1:-}" = --targets ]; then
  [ "$#" -ge 2 ] || usage
  targets="$2"
  shift 2
fi
[ "$#" -eq 3 ] || usage
version="${1#v}"
bindir="$2"
outdir="$3"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || {
  echo "release-assets: bad version '$1'" >&2
  exit 2
}
read -r -a want <<<"$targets"
[ "${#want[@]}" -gt 0 ] || die "no targets"
for t in "${want[@]}"; do
  case " $RELEASE_TARGETS " in
    *" $t "*) ;;
    *) die "'$t' is not a release target (release targets: $RELEASE_TARGETS)" ;;
  esac
done
[ -d "$bindir" ] || die "binary directory '$bindir' not found"
if [ -e "$outdir" ] && [ -n "$(ls -A "$outdir")" ]; then
  die "output directory '$outdir' is not empty (stale assets would be published with the new ones)"
fi
mkdir -p "$outdir"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

# Every directory in BINDIR is a wanted target's, and every wanted target has its binary.
shopt -s nullglob
for d in "$bindir"/*/; do
  t="$(basename "$d")"
  t="${t#bin-}"
  case " ${want[*]} " in
    *" $t "*) ;;
    *) die "$d is not one of the targets being released (${want[*]})" ;;
  esac
done
bins=()
for t in "${want[@]}"; do
  found=()
  for d in "$bindir/$t" "$bindir/bin-$t"; do
    if [ -f "$d/evalgate" ]; then found+=("$d/evalgate"); fi
  done
  [ "${#found[@]}" -eq 1 ] ||
    die "expected one binary for $t at $bindir/$t/evalgate or $bindir/bin-$t/evalgate, found ${#found[@]}"
  bins+=("${found[0]}")
done

# The target of the machine running this (its binary can be run as a smoke test).
host=""
case "$(uname -s)/$(uname -m)" in
  Linux/x86_64 | Linux/amd64) host=x86_64-unknown-linux-musl ;;
  Linux/aarch64 | Linux/arm64) host=aarch64-unknown-linux-musl ;;
  Darwin/arm64 | Darwin/aarch64) host=aarch64-apple-darwin ;;
  Darwin/x86_64) host=x86_64-apple-darwin ;;
esac

for i in "${!want[@]}"; do
  bash "$root/scripts/package.sh" "$version" "${want[$i]}" "${bins[$i]}" "$outdir" >/dev/null
done
(
  cd "$outdir"
  for f in evalgate-*.tar.gz.sha256; do cat "$f"; done | LC_ALL=C sort -k2,2 >SHA256SUMS
)

# --- checks: what gets published is what the action will verify and install ---
check="$(mktemp -d)"
trap 'rm -rf "$check"' EXIT
(cd "$outdir" && sha256sum -c --strict --quiet SHA256SUMS) || die "SHA256SUMS does not verify"
expected_files=()
for t in "${want[@]}"; do
  expected_files+=("evalgate-${version}-${t}.tar.gz" "evalgate-${version}-${t}.tar.gz.sha256")
done
expected_files+=(SHA256SUMS)
have="$(cd "$outdir" && for f in * .[!.]*; do echo "$f"; done | LC_ALL=C sort)"
want_list="$(printf '%s\n' "${expected_files[@]}" | LC_ALL=C sort)"
[ "$have" = "$want_list" ] || die "$outdir holds
$have
instead of
$want_list"
[ "$(grep -c . "$outdir/SHA256SUMS")" -eq "${#want[@]}" ] ||
  die "SHA256SUMS does not have one line per target"

contents=(evalgate)
for f in LICENSE README.md; do
  [ -f "$root/$f" ] || die "$f is missing from the repository (every asset ships it)"
  contents+=("$f")
done
contents_list="$(printf '%s\n' "${contents[@]}" | LC_ALL=C sort)"
for i in "${!want[@]}"; do
  t="${want[$i]}"
  asset="evalgate-${version}-${t}.tar.gz"
  listed="$(tar -tzf "$outdir/$asset" | LC_ALL=C sort)" || die "$asset is not a gzip tarball"
  [ "$listed" = "$contents_list" ] || die "$asset holds
$listed
instead of
$contents_list"
  mkdir -p "$check/$t"
  tar -xzf "$outdir/$asset" -C "$check/$t"
  [ -f "$check/$t/evalgate" ] && [ ! -L "$check/$t/evalgate" ] && [ -x "$check/$t/evalgate" ] ||
    die "$asset: evalgate is not an executable regular file"
  cmp -s "$check/$t/evalgate" "${bins[$i]}" || die "$asset: evalgate differs from ${bins[$i]}"
  if [ "$t" = "$host" ]; then
    got="$("$check/$t/evalgate" --version 2>&1 | head -n 1)" || die "$asset: evalgate --version failed on this machine: $got"
    [ "$got" = "evalgate $version" ] ||
      die "$asset: the binary says '$got', not 'evalgate $version' (built from another version?)"
    echo "release-assets: $asset runs here: $got"
  fi
done
echo "release-assets: ${#want[@]} asset(s) of evalgate $version in $outdir, SHA256SUMS verified:"
cat "$outdir/SHA256SUMS"
