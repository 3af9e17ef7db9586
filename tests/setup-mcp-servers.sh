#!/usr/bin/env bash
# Installs the real MCP servers the end-to-end tests snapshot and replay, from the registries,
# pinned (versions and licences as in datasets/tools/servers.json):
#   PyPI  mcp-server-time 2026.10.19 (MIT), transitive pins from datasets/tools/requirements.lock
#   npm   @modelcontextprotocol/server-memory 2026.1.26 (MIT)
#   PyPI  contextweaver 0.18.2 (Apache-2.0), dehydrator 0.3.1 (MIT), mcp-orchestrator 0.1.2 (MIT):
#         real tool-search proxies,
#         transitive pins from tests/proxies/*.lock
#   npm   @standardbeagle/slop-mcp 0.15.0 (MIT): a third one (no dependencies)
# and one real security scanner that runs offline, for the scanner detector's tests:
#   PyPI  mcp-guard-audit 0.13.1 (MIT), transitive pins from tests/scanners.lock
# the field's evaluation tools, for the cross-check of metrics and p-values (tests/crosscheck.rs):
#   PyPI  ranx 0.3.21 (MIT) and pytrec-eval-terrier 0.5.11 (MIT; trec_eval bundled in its
#         wheel: pytrec-eval 0.5's setup.py downloads trec_eval from GitHub at install time),
#         transitive pins from tests/crosscheck.lock
# into target/mcp-servers/ (git-ignored), and Debian's Chromium for the headless report test
# (tests/browser.rs) when it is missing, the real mcpproxy at two pinned versions
# (tests/setup-mcpproxy.sh: the Go module proxy, else the source tarball) and nektos/act
# (scripts/setup-act.sh). Idempotent; scripts/test.sh (the README's test command) calls it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${EVALGATE_TEST_SERVERS:-$root/target/mcp-servers}"
mkdir -p "$dest"

if [ ! -x "$dest/venv/bin/mcp-server-time" ]; then
  echo "installing mcp-server-time into $dest/venv"
  python3 -m venv "$dest/venv"
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check \
    -c "$root/datasets/tools/requirements.lock" "mcp-server-time==2026.10.19"
fi

if [ ! -x "$dest/npm/node_modules/.bin/mcp-server-memory" ]; then
  echo "installing @modelcontextprotocol/server-memory into $dest/npm"
  mkdir -p "$dest/npm"
  npm install --prefix "$dest/npm" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-memory@2026.1.26"
fi
if [ ! -x "$dest/scanners/bin/mcp-guard" ]; then
  echo "installing mcp-guard-audit into $dest/scanners"
  python3 -m venv "$dest/scanners"
  "$dest/scanners/bin/pip" install --quiet --disable-pip-version-check \
    -c "$root/tests/scanners.lock" "mcp-guard-audit==0.13.1"
fi
if ! compgen -G "$dest/crosscheck/lib/python3*/site-packages/ranx-0.3.21.dist-info" >/dev/null ||
  ! compgen -G "$dest/crosscheck/lib/python3*/site-packages/pytrec_eval_terrier-0.5.11.dist-info" >/dev/null; then
  echo "installing ranx and pytrec-eval-terrier into $dest/crosscheck"
  python3 -m venv "$dest/crosscheck"
  "$dest/crosscheck/bin/pip" install --quiet --disable-pip-version-check \
    -c "$root/tests/crosscheck.lock" "ranx==0.3.21" "pytrec-eval-terrier==0.5.11"
fi
if ! command -v chromium >/dev/null 2>&1 && [ -z "${EVALGATE_CHROMIUM:-}" ]; then
  echo "installing Debian's chromium for the headless report test"
  sudo_=""
  if [ "$(id -u)" != 0 ]; then sudo_="sudo"; fi
  # without root or sudo (a laptop) the browser test is skipped by scripts/test.sh, counted;
  # under CI=true it is required
  if ! { $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq chromium >/dev/null; }; then
    echo "chromium could not be installed" >&2
    if [ "${CI:-}" = true ]; then exit 1; fi
  fi
fi
# two real third-party tool-search proxies, measured by configuration alone
# (tests/third_party_proxies.rs): contextweaver 0.18.2 (Apache-2.0) and dehydrator 0.3.1 (MIT)
# and mcp-orchestrator 0.1.2 (MIT): a 200-character query cap, at most 10 results, per-server
# `url`/`transport` fields in its JSON config
for p in contextweaver:0.18.2:contextweaver dehydrator:0.3.1:dehydrator-mcp mcp-orchestrator:0.1.2:mcp-orchestrator; do
  IFS=: read -r pkg ver bin <<< "$p"
  if [ ! -x "$dest/$pkg/bin/$bin" ]; then
    echo "installing $pkg $ver into $dest/$pkg"
    python3 -m venv "$dest/$pkg"
    "$dest/$pkg/bin/pip" install --quiet --disable-pip-version-check \
      -c "$root/tests/proxies/$pkg.lock" "$pkg==$ver"
  fi
done
# a third, from npm: slop-mcp 0.15.0 (MIT), KDL config, upstreams connected in the background
# (its Go binaries ship inside the package; its postinstall only sets their execute bit)
if [ ! -x "$dest/slop-mcp/node_modules/.bin/slop-mcp" ]; then
  echo "installing @standardbeagle/slop-mcp 0.15.0 into $dest/slop-mcp"
  mkdir -p "$dest/slop-mcp"
  npm install --prefix "$dest/slop-mcp" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "@standardbeagle/slop-mcp@0.15.0"
  chmod +x "$dest"/slop-mcp/node_modules/@standardbeagle/slop-mcp/binaries/slop-mcp-linux-*
fi
bash "$root/tests/setup-mcpproxy.sh"
# nektos/act, the real Actions runner of tests/act.rs (Go module proxy, pinned)
bash "$root/scripts/setup-act.sh" || [ "${CI:-}" != true ]
echo "MCP test servers ready in $dest"
