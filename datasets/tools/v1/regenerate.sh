#!/usr/bin/env bash
# Regenerate datasets/v1/corpus.json (corpus_v1) from the tools/list of the pinned MCP servers.
#
#   bash datasets/tools/v1/regenerate.sh            # install (if needed) + snapshot
#   EVALGATE_MCP_SCRATCH=/some/dir bash datasets/tools/v1/regenerate.sh
#   EVALGATE=/path/to/evalgate bash datasets/tools/v1/regenerate.sh   # skip the cargo build
#
# The snapshot is `evalgate corpus snapshot` (rmcp), driven by datasets/tools/snapshot_all.py.
# Servers are installed OUTSIDE the repo (default /tmp/evalgate-mcp-scratch-v1):
#   npm  : npm ci from datasets/tools/v1/npm/{package.json,package-lock.json} with install scripts
#          off (no browser or native-addon downloads; listing tools needs neither)
#   PyPI : one venv installed from datasets/tools/v1/requirements.lock (every package pinned)
# Pins, licences, launch commands, dummy env vars/args/files: datasets/tools/v1/servers.json.
# Every run starts the servers from an empty work dir (cwd, HOME, dummy files) so nothing a
# server caches leaks into the next run; the output is byte-identical from run to run.
set -euo pipefail

v1="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tools="$(cd "$v1/.." && pwd)"
repo="$(cd "$tools/../.." && pwd)"
out="$repo/datasets/v1/corpus.json"
scratch="${EVALGATE_MCP_SCRATCH:-/tmp/evalgate-mcp-scratch-v1}"
npm_prefix="$scratch/npm"
venv="$scratch/venv"
work="$scratch/work"

command -v node >/dev/null || { echo "regenerate_v1: node (>= 20) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "regenerate_v1: npm is required" >&2; exit 1; }
command -v python3 >/dev/null || { echo "regenerate_v1: python3 (3.11) is required" >&2; exit 1; }

# The pins file, package.json and requirements.lock must agree.
python3 - "$v1" <<'PY'
import json, os, re, sys
v1 = sys.argv[1]
norm = lambda n: re.sub(r"[-_.]+", "-", n).lower()  # PEP 503
pins = json.load(open(os.path.join(v1, "servers.json")))["servers"]
npm_deps = json.load(open(os.path.join(v1, "npm", "package.json")))["dependencies"]
lock = {}
for line in open(os.path.join(v1, "requirements.lock")):
    line = line.strip()
    if line and not line.startswith("#"):
        name, _, ver = line.partition("==")
        lock[norm(name)] = ver
bad = []
for p in pins:
    if p["registry"] == "npm":
        got = npm_deps.get(p["package"])
    else:
        got = lock.get(norm(p["package"]))
    if got != p["version"]:
        bad.append(f"{p['name']}: servers.json pins {p['version']}, install files pin {got}")
names = [p["name"] for p in pins]
if len(names) != len(set(names)):
    bad.append("duplicate server names in servers.json")
if bad:
    sys.exit("regenerate_v1: pin mismatch:\n  " + "\n  ".join(bad))
PY

mkdir -p "$scratch"
stamp_src="$(cat "$v1/npm/package.json" "$v1/npm/package-lock.json" "$v1/requirements.lock" | sha256sum | cut -d' ' -f1)"

if [[ "$(cat "$scratch/.installed" 2>/dev/null || true)" != "$stamp_src" ]]; then
  echo "regenerate_v1: installing pinned servers into $scratch" >&2
  rm -rf "$npm_prefix" "$venv"
  mkdir -p "$npm_prefix"
  cp "$v1/npm/package.json" "$v1/npm/package-lock.json" "$npm_prefix/"
  (cd "$npm_prefix" && PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 \
     PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
     npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$v1/requirements.lock"
  echo "$stamp_src" > "$scratch/.installed"
fi

# Fresh state for every run: cwd, HOME, filesystem roots and the dummy credential files.
rm -rf "$work"
mkdir -p "$work/fs-root" "$work/home"
python3 - "$v1/servers.json" "$work" <<'PY'
import json, os, sys
files = json.load(open(sys.argv[1])).get("dummy_files", {})
for rel, text in sorted(files.items()):
    path = os.path.join(sys.argv[2], rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
PY

mkdir -p "$(dirname "$out")"
# the snapshot itself is taken by evalgate (rmcp); build it unless EVALGATE points at a binary
if [[ -z "${EVALGATE:-}" ]]; then
  (cd "$repo" && cargo build --release --quiet)
  EVALGATE="$repo/target/release/evalgate"
fi
EVALGATE="$(cd "$(dirname "$EVALGATE")" && pwd)/$(basename "$EVALGATE")"

(
  cd "$work"
  export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_CACHE_HOME="$work/home/.cache" \
         XDG_DATA_HOME="$work/home/.local/share" DO_NOT_TRACK=1
  python3 "$tools/snapshot_all.py" \
    --evalgate "$EVALGATE" \
    --pins "$v1/servers.json" \
    --out "$out" \
    --npm-prefix "$npm_prefix" \
    --venv "$venv" \
    --scratch "$work" \
    --version corpus_v1
)

# snapshot_all.py names the v0 script in generated_from.note; point it at this one. A few servers
# put their working directory into a tool description (figma: the image directory): put the
# scratch paths back to the pins file's placeholders there too, and refuse any that remain.
python3 - "$out" "$npm_prefix/node_modules/.bin" "$venv/bin" "$work" "$scratch" <<'PY'
import json, sys
path, npm_bin, venv_bin, work, scratch = sys.argv[1:]
corpus = json.load(open(path))
corpus["generated_from"]["note"] = "regenerate with datasets/tools/v1/regenerate.sh (pins: datasets/tools/v1/servers.json)"
subst = [(npm_bin, "{npm_bin}"), (venv_bin, "{venv_bin}"), (work, "{scratch}")]
def unfill(x):
    if isinstance(x, str):
        for k, v in subst:
            x = x.replace(k, v)
        return x
    if isinstance(x, list):
        return [unfill(v) for v in x]
    if isinstance(x, dict):
        return {k: unfill(v) for k, v in x.items()}
    return x
corpus["tools"] = unfill(corpus["tools"])
left = [t["tool_id"] for t in corpus["tools"] if scratch in json.dumps(t, ensure_ascii=False)]
if left:
    sys.exit("regenerate_v1: machine-specific paths left in " + ", ".join(left))
with open(path, "w") as f:
    f.write(json.dumps(corpus, indent=2, ensure_ascii=False) + "\n")
PY
echo "regenerate_v1: wrote $out" >&2
