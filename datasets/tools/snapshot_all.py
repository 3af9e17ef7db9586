#!/usr/bin/env python3
"""Drive `evalgate corpus snapshot` over every pinned server in servers.json (stdlib only).

  snapshot_all.py --evalgate BIN --pins servers.json --out corpus.json \
                  --npm-prefix DIR --venv DIR --scratch DIR [--version corpus_v0]

Each server is launched from its pinned install and snapshotted with rmcp by evalgate, merged
into one corpus (tools sorted by id). Machine-specific paths in the recorded commands are put
back to the pins file's placeholders ({npm_bin}, {venv_bin}, {scratch}) so the file is the same
on every machine. The `taken` date comes from the pins file, so reruns are byte-identical.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evalgate", required=True)
    ap.add_argument("--pins", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--npm-prefix", required=True)
    ap.add_argument("--venv", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--version", default="corpus_v0")
    a = ap.parse_args()
    pins = json.load(open(a.pins))["servers"]
    subst = {
        "{npm_bin}": os.path.join(a.npm_prefix, "node_modules", ".bin"),
        "{venv_bin}": os.path.join(a.venv, "bin"),
        "{scratch}": a.scratch,
    }

    def fill(s):
        for k, v in subst.items():
            s = s.replace(k, v)
        return s

    def unfill(s):
        for k, v in subst.items():
            s = s.replace(v, k)
        return s

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "corpus.json")
        for p in pins:
            cmd = [a.evalgate, "corpus", "snapshot", "--server", p["name"], "--out", out, "--merge",
                   "--corpus-version", a.version, "--taken", p["taken"], "--registry", p["registry"],
                   "--package", p["package"], "--package-version", p["version"], "--license", p["license"]]
            for k, v in sorted(p.get("env", {}).items()):
                cmd += ["--env", f"{k}={fill(v)}"]
            cmd += ["--", fill(p["command"])] + [fill(x) for x in p.get("args", [])]
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if r.returncode != 0:
                sys.exit(f"snapshot of {p['name']} failed ({r.returncode}):\n{r.stderr}")
            print(r.stderr.strip(), file=sys.stderr)
        corpus = json.load(open(out))
    for s in corpus["servers"]:
        s["command"] = [unfill(x) for x in s.get("command", [])]
        pin = next(p for p in pins if p["name"] == s["name"])
        s["dummy_env"] = pin.get("dummy_env", [])
    corpus["generated_from"] = {
        "source": "tools/list of real MCP servers installed from npm and PyPI, taken with `evalgate corpus snapshot`",
        "note": "regenerate with datasets/regenerate.sh (pins: datasets/tools/servers.json)",
    }
    with open(a.out, "w") as f:
        f.write(json.dumps(corpus, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
