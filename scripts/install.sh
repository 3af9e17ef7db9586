#!/usr/bin/env bash
# Installs the evalgate binary for the composite action (action.yml, step "install").
#
# Order of preference:
#   1. The action runs from evalgate's own checkout (`uses: ./` in this repository): build from
#      source with `cargo build --release --locked`, so CI tests the code under review.
#   2. The prebuilt release for the runner's OS/arch:
#        <base>/v<version>/evalgate-<version>-<target>.tar.gz
#      verified against the sha256 table committed with the action (dist/checksums.txt), never
#      against a checksum downloaded from the same place as the binary.
#   3. fallback=cargo-install: `cargo install --locked evalgate --version <version>` when 2 fails
#      (no prebuilt for this platform, download error, checksum mismatch, no table entry).
# Nothing is installed and nothing is added to GITHUB_PATH unless one of them succeeds.
#
# Inputs (environment; action.yml maps the action inputs onto them):
#   INPUT_VERSION    evalgate version (1.2.3 or v1.2.3)
#   INPUT_FALLBACK   none | cargo-install
# Runner environment: RUNNER_OS, RUNNER_ARCH, RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT,
#   GITHUB_ACTION_PATH, GITHUB_WORKSPACE (all optional outside a runner).
# Overrides (tests, mirrors, air-gapped runners):
#   EVALGATE_RELEASE_BASE_URL  default https://github.com/evalgate/evalgate/releases/download
#                              (https:// or file://; the file is <base>/v<version>/<asset>)
#   EVALGATE_CHECKSUMS_FILE    default <action dir>/dist/checksums.txt
#   EVALGATE_FROM_SOURCE       auto (default) | true | false
#   EVALGATE_CARGO             cargo command used for the source build and the fallback
# Step outputs: bin (path of the installed binary), version, source (release|cargo-install|source).
set -euo pipefail

default_base_url="https://github.com/evalgate/evalgate/releases/download"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
action_path="${GITHUB_ACTION_PATH:-$(dirname "$script_dir")}"
cargo_cmd="${EVALGATE_CARGO:-cargo}"

# Workflow-command escaping for annotation messages.
escape() {
  local s="$1"
  s="${s//'%'/'%25'}"
  s="${s//$'\r'/'%0D'}"
  s="${s//$'\n'/'%0A'}"
  printf '%s' "$s"
}
# Text for the log, its line breaks kept: a line that would start a workflow command (`::`
# after blanks; `##[` anywhere) gets a `|` in it, so an input quoted in a message (a version
# with a line break) cannot start one. CR counts as a line break, as for the runner.
log_lines() {
  printf '%s\n' "$*" | tr '\r' '\n' | sed -e 's/^\([[:space:]]*\)::/\1|::/' -e 's/##\[/#|#[/g'
}
fail() {
  echo "::error title=evalgate install::$(escape "$*")"
  log_lines "evalgate install: $*" >&2
  exit 1
}
warn() {
  echo "::warning title=evalgate install::$(escape "$*")"
  log_lines "evalgate install: warning: $*" >&2
}
# The reason the prebuilt path failed (set by install_release, reported once).
reason=""
# 1 when the table has no entry for the version (the message then already says what to do).
no_entry=0
problem() {
  reason="$*"
}

raw_version="${INPUT_VERSION:-}"
version="${raw_version#v}"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  fail "input 'version' must be a release version such as 1.2.3, got '${raw_version}'"
fi
fallback="${INPUT_FALLBACK:-none}"
case "$fallback" in
  none | cargo-install) ;;
  *) fail "input 'fallback' must be 'none' or 'cargo-install', got '${fallback}'" ;;
esac

tmp_root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
exe=""
if [ "${RUNNER_OS:-}" = "Windows" ]; then exe=".exe"; fi

work="$(mktemp -d "${tmp_root%/}/evalgate-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d' ' -f1
  else
    return 1
  fi
}

# Makes $1/evalgate the installed binary: smoke test, GITHUB_PATH, step outputs.
publish() {
  local dir="$1" how="$2" bin
  bin="$dir/evalgate$exe"
  if ! "$bin" --version >"$work/version.txt" 2>&1; then
    cat "$work/version.txt" >&2 || true
    fail "the installed binary $bin does not run on this runner (${RUNNER_OS:-?}/${RUNNER_ARCH:-?})"
  fi
  echo "evalgate install: $(head -n1 "$work/version.txt") from ${how} at ${bin}"
  # The version that runs (a source build has the checkout's version, not the input's).
  local reported
  reported="$(head -n1 "$work/version.txt" | awk '$1 == "evalgate" {print $2}')"
  if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$dir" >>"$GITHUB_PATH"
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
      echo "bin=$bin"
      echo "version=${reported:-$version}"
      echo "source=$how"
    } >>"$GITHUB_OUTPUT"
  fi
}

canonical_dir() { (cd "$1" 2>/dev/null && pwd -P); }

# True when the action runs from a checkout of evalgate's own repository inside the workspace
# (`uses: ./`), not from the copy the runner downloads for `uses: evalgate/evalgate@ref`.
own_checkout() {
  local manifest="$action_path/Cargo.toml" ap ws
  [ -f "$manifest" ] || return 1
  awk '/^\[/{sec=$0} sec=="[package]" && /^name[ \t]*=[ \t]*"evalgate"[ \t]*$/{found=1} END{exit !found}' \
    "$manifest" || return 1
  [ -n "${GITHUB_WORKSPACE:-}" ] || return 1
  ap="$(canonical_dir "$action_path")" || return 1
  ws="$(canonical_dir "$GITHUB_WORKSPACE")" || return 1
  [ "$ap" = "$ws" ] || [ "${ap#"$ws"/}" != "$ap" ]
}

build_from_source() {
  local target_dir="${CARGO_TARGET_DIR:-$action_path/target}" dest="$tmp_root/evalgate/source/bin"
  command -v "$cargo_cmd" >/dev/null 2>&1 ||
    fail "building evalgate from source (the action runs from its own checkout) needs cargo on PATH"
  echo "evalgate install: the action runs from evalgate's own checkout: building it from source"
  "$cargo_cmd" build --release --locked --manifest-path "$action_path/Cargo.toml" \
    --target-dir "$target_dir" ||
    fail "cargo build --release --locked failed"
  [ -f "$target_dir/release/evalgate$exe" ] ||
    fail "cargo build succeeded but $target_dir/release/evalgate$exe is missing"
  mkdir -p "$dest"
  cp -f "$target_dir/release/evalgate$exe" "$dest/evalgate$exe"
  chmod 755 "$dest/evalgate$exe"
  publish "$dest" source
}

# Runner OS/arch -> release target triple in $target (musl on Linux: static, runs on any
# distribution).
target=""
target_triple() {
  local os="${RUNNER_OS:-}" arch="${RUNNER_ARCH:-}"
  if [ -z "$os" ]; then
    case "$(uname -s)" in
      Linux) os=Linux ;;
      Darwin) os=macOS ;;
      *) os="$(uname -s)" ;;
    esac
  fi
  if [ -z "$arch" ]; then
    case "$(uname -m)" in
      x86_64 | amd64) arch=X64 ;;
      aarch64 | arm64) arch=ARM64 ;;
      *) arch="$(uname -m)" ;;
    esac
  fi
  case "$os/$arch" in
    Linux/X64) target=x86_64-unknown-linux-musl ;;
    Linux/ARM64) target=aarch64-unknown-linux-musl ;;
    macOS/ARM64) target=aarch64-apple-darwin ;;
    macOS/X64) target=x86_64-apple-darwin ;;
    *)
      problem "no prebuilt evalgate for RUNNER_OS=${os} RUNNER_ARCH=${arch} (prebuilt: Linux X64, Linux ARM64, macOS ARM64, macOS X64)"
      return 1
      ;;
  esac
}

# The table has no line for this version's asset: say plainly that no verified release of it is
# known to this copy of the action, which releases are, and the ways to get evalgate anyway.
not_listed() {
  local table="$1" asset="$2" known latest pin listed
  known="$(awk '$1 !~ /^#/ && NF == 2 {
      n = $2; sub(/^\*/, "", n)
      if (sub(/^evalgate-/, "", n) && sub(/-[a-z0-9_]+-[a-z0-9_]+-[a-z0-9_]+(-[a-z0-9_]+)?\.tar\.gz$/, "", n)) print n
    }' "$table" | sort -u -t. -k1,1n -k2,2n -k3,3n | tr '\n' ' ')"
  known="${known% }"
  if [[ " $known " == *" $version "* ]]; then
    problem "the action's checksum table ($table) lists evalgate ${version} but has no sha256 for ${asset}, the asset for this runner (${target}): refusing to download a binary it cannot verify"
    return
  fi
  if [ -n "$known" ]; then
    latest="${known##* }"
    listed="it lists evalgate ${known// /, }"
    pin="uses: evalgate/evalgate@v${latest} (or that release's commit SHA)"
  else
    listed="it lists no release at all: this copy of the action comes from a commit made before any release"
    pin="uses: evalgate/evalgate@vX.Y.Z with a released X.Y.Z (or that release's commit SHA)"
  fi
  problem "no verified release of evalgate ${version} is listed in the action's checksum table, so nothing was downloaded (${table} has no sha256 for ${asset}; ${listed}).
evalgate ${version} has not been released yet, or this copy of the action predates its release. To install evalgate:
  - pin a released version of the action: ${pin}, leaving the version input at its default (the release that action was cut with)${known:+, or set version: to a release listed above};
  - in evalgate's own repository: uses: ./ builds the checkout from source;
  - fallback: cargo-install builds evalgate ${version} with cargo from crates.io, once that version is published there;
  - a mirror: set EVALGATE_RELEASE_BASE_URL to it and EVALGATE_CHECKSUMS_FILE to a checksum table you trust.
See docs/releasing.md in evalgate's repository."
  no_entry=1
}

# Downloads, verifies and installs the release asset. Runs inside `if`, so errexit is off here:
# every command is checked by hand.
install_release() {
  local asset base url proto table expected actual stage dest n
  target_triple || return 1
  asset="evalgate-${version}-${target}.tar.gz"
  base="${EVALGATE_RELEASE_BASE_URL:-$default_base_url}"
  base="${base%/}"
  case "$base" in
    https://*) proto="=https" ;;
    file://*) proto="=file" ;;
    *)
      problem "EVALGATE_RELEASE_BASE_URL must start with https:// or file://, got '${base}'"
      return 1
      ;;
  esac
  url="$base/v$version/$asset"

  table="${EVALGATE_CHECKSUMS_FILE:-$action_path/dist/checksums.txt}"
  if [ ! -f "$table" ]; then
    problem "checksum table $table is missing: cannot verify $asset"
    return 1
  fi
  # Format: `<sha256>  <asset file name>` (sha256sum's), one line per asset, '#' comments.
  n="$(awk -v f="$asset" '$1 !~ /^#/ && ($2 == f || $2 == "*" f) {n++} END {print n+0}' "$table")"
  expected="$(awk -v f="$asset" '$1 !~ /^#/ && ($2 == f || $2 == "*" f) {print tolower($1); exit}' "$table")"
  if [ "$n" = 0 ]; then
    not_listed "$table" "$asset"
    return 1
  fi
  if [ "$n" != 1 ] || ! [[ "$expected" =~ ^[0-9a-f]{64}$ ]]; then
    problem "the checksum table ($table) has a malformed or duplicate entry for $asset"
    return 1
  fi

  echo "evalgate install: downloading $url"
  if ! curl --proto "$proto" --proto-redir '=https' --tlsv1.2 -fsSL --retry 3 --retry-connrefused \
    --connect-timeout 30 -o "$work/$asset" "$url"; then
    problem "download of $url failed"
    return 1
  fi
  if ! actual="$(sha256_of "$work/$asset")"; then
    problem "neither sha256sum nor shasum is available to verify $asset"
    return 1
  fi
  if [ "$actual" != "$expected" ]; then
    problem "checksum mismatch for $asset: expected sha256 $expected (from $table), got $actual; refusing to install it"
    return 1
  fi
  echo "evalgate install: sha256 verified: $actual  $asset"

  stage="$work/stage"
  mkdir -p "$stage" || return 1
  if ! tar -xzf "$work/$asset" -C "$stage" "evalgate$exe"; then
    problem "$asset does not contain evalgate$exe at its root"
    return 1
  fi
  if [ ! -f "$stage/evalgate$exe" ] || [ -L "$stage/evalgate$exe" ]; then
    problem "$asset: evalgate$exe is not a regular file"
    return 1
  fi
  dest="$tmp_root/evalgate/$version/bin"
  if ! { mkdir -p "$dest" && chmod 755 "$stage/evalgate$exe" && mv -f "$stage/evalgate$exe" "$dest/evalgate$exe"; }; then
    problem "could not install evalgate into $dest"
    return 1
  fi
  publish "$dest" release
}

cargo_install() {
  local root="$tmp_root/evalgate/cargo-$version"
  command -v "$cargo_cmd" >/dev/null 2>&1 ||
    fail "fallback cargo-install needs cargo on PATH (add a Rust toolchain step before this action)"
  echo "evalgate install: cargo install --locked evalgate --version $version"
  "$cargo_cmd" install --locked evalgate --version "$version" --root "$root" ||
    fail "cargo install --locked evalgate --version $version failed (is evalgate $version published on crates.io? see docs/releasing.md)"
  publish "$root/bin" cargo-install
}

from_source="${EVALGATE_FROM_SOURCE:-auto}"
case "$from_source" in
  true) build_from_source; exit 0 ;;
  auto) if own_checkout; then build_from_source; exit 0; fi ;;
  false) ;;
  *) fail "EVALGATE_FROM_SOURCE must be auto, true or false, got '${from_source}'" ;;
esac

if install_release; then
  exit 0
fi
if [ "$fallback" = cargo-install ]; then
  warn "prebuilt evalgate ${version} not installed (${reason}); falling back to cargo install"
  cargo_install
  exit 0
fi
if [ "$no_entry" = 1 ]; then
  fail "$reason"
fi
fail "${reason} (set the input fallback: cargo-install to build it with cargo instead)"
