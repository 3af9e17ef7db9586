#!/usr/bin/env bash
# Records a release's asset checksums in the table the action verifies downloads against:
#   scripts/update-checksums.sh VERSION DIR [TABLE]
# DIR holds the release's evalgate-VERSION-*.tar.gz.sha256 files (scripts/package.sh output);
# TABLE defaults to dist/checksums.txt. Lines of VERSION already in the table are replaced,
# other versions are kept; the table stays sorted (`<sha256>  <asset>`, sha256sum's format).
set -euo pipefail

if [ "$#" -lt 2 ] || [ "$#" -gt 3 ]; then
  echo "usage: $0 VERSION DIR [TABLE]" >&2
  exit 2
fi
version="${1#v}"
dir="$2"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
table="${3:-$root/dist/checksums.txt}"
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || {
  echo "update-checksums: bad version '$1'" >&2
  exit 2
}

shopt -s nullglob
sums=("$dir"/evalgate-"$version"-*.tar.gz.sha256)
if [ "${#sums[@]}" -eq 0 ]; then
  echo "update-checksums: no evalgate-$version-*.tar.gz.sha256 in $dir" >&2
  exit 1
fi

new="$(mktemp)"
trap 'rm -f "$new"' EXIT
lines=()
names=" "
for f in "${sums[@]}"; do
  read -r hash name rest <"$f" || true
  name="${name#\*}"
  if ! [[ "$hash" =~ ^[0-9a-f]{64}$ ]] || [ -n "${rest:-}" ] || [ "$name" != "$(basename "${f%.sha256}")" ]; then
    echo "update-checksums: malformed $f" >&2
    exit 1
  fi
  if [ -f "${f%.sha256}" ] && [ "$(sha256sum "${f%.sha256}" | cut -d' ' -f1)" != "$hash" ]; then
    echo "update-checksums: ${f%.sha256} does not match its .sha256 file" >&2
    exit 1
  fi
  lines+=("$hash  $name")
  names="$names$name "
done

{
  echo '# sha256 of the evalgate release assets, checked by scripts/install.sh before it installs anything.'
  echo '# Written by scripts/update-checksums.sh (release workflow). Format: <sha256>  <asset>, sorted by asset.'
  {
    if [ -f "$table" ]; then
      # Keep every other asset; the ones being recorded now are replaced.
      awk -v names="$names" '$1 !~ /^#/ && NF == 2 && index(names, " " $2 " ") == 0' "$table"
    fi
    printf '%s\n' "${lines[@]}"
  } | sort -k2,2 -u
} >"$new"
mkdir -p "$(dirname "$table")"
cp "$new" "$table"
echo "update-checksums: $table now lists $(grep -vc '^#' "$table") assets"
