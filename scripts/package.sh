#!/usr/bin/env bash
# Packages one release asset (scripts/release-assets.sh runs it for every target; tests/action.rs too):
#   scripts/package.sh VERSION TARGET BINARY OUTDIR
# writes OUTDIR/evalgate-VERSION-TARGET.tar.gz (the binary as `evalgate` at the root, plus
# LICENSE/README.md when present) and OUTDIR/evalgate-VERSION-TARGET.tar.gz.sha256 in sha256sum's
# format. The tarball is reproducible: fixed order, owner, mode and mtime (GNU tar).
# EVALGATE_GZIP_LEVEL (1-9, default 9) trades size for time (the tests package debug builds).
set -euo pipefail

if [ "$#" -ne 4 ]; then
  echo "usage: $0 VERSION TARGET BINARY OUTDIR" >&2
  exit 2
fi
version="${1#v}"
target="$2"
binary="$3"
outdir="$4"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || {
  echo "package: bad version '$1'" >&2
  exit 2
}
[[ "$target" =~ ^[a-z0-9_]+(-[a-z0-9_]+)+$ ]] || {
  echo "package: bad target '$target'" >&2
  exit 2
}
[ -f "$binary" ] || {
  echo "package: binary '$binary' not found" >&2
  exit 2
}
level="${EVALGATE_GZIP_LEVEL:-9}"
[[ "$level" =~ ^[1-9]$ ]] || {
  echo "package: EVALGATE_GZIP_LEVEL must be 1-9" >&2
  exit 2
}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
asset="evalgate-${version}-${target}.tar.gz"
exe=""
case "$target" in *windows*) exe=".exe" ;; esac

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
install -m 755 "$binary" "$stage/evalgate$exe"
files=("evalgate$exe")
for f in LICENSE README.md; do
  if [ -f "$root/$f" ]; then
    install -m 644 "$root/$f" "$stage/$f"
    files+=("$f")
  fi
done

mkdir -p "$outdir"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00:00Z' \
  -C "$stage" -cf - "${files[@]}" | gzip "-$level" -n >"$outdir/$asset"
(cd "$outdir" && sha256sum "$asset" >"$asset.sha256")
cat "$outdir/$asset.sha256"
