#!/usr/bin/env python3
"""Assemble golden set v1 and security corpus v1 from their authoring shards (standard library).

    python3 datasets/tools/v1/build.py           # rewrite datasets/v1/golden.json and security.json
    python3 datasets/tools/v1/build.py --check   # exit 1 if the committed files differ from a rebuild

Golden: every `datasets/tools/v1/golden/<shard>.json` (checked with check_shard.py) is merged in
shard-name order, query ids kept (`<shard>-NNN`). The held-out split depends on nothing but the
id: a query is `held_out` when the first 32 bits of sha256(id), as a fraction of 2^32, are below
0.20, else `dev`. Adding queries later never moves an existing query to the other split. `distractors` lists, sorted, every corpus tool that no query labels
with relevance >= 1: the tools that are there to be found by mistake.

Security: every `datasets/tools/v1/security/gen_<shard>.py` is run (each rewrites its
`<shard>.json`), then the entries are merged, ordered by category then id.

Output: JSON, indent 1, UTF-8 (not ASCII-escaped), trailing newline; byte-for-byte reproducible.
"""
import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
V1 = os.path.join(ROOT, "datasets", "v1")
HELD_OUT_SHARE = 0.20
CATEGORY_ORDER = ["tool_poisoning", "prompt_injection", "shadowing", "rug_pull", "benign", "hard_negative"]

sys.path.insert(0, os.path.join(HERE, "golden"))
import check_shard  # noqa: E402


def dumps(v):
    return json.dumps(v, ensure_ascii=False, indent=1) + "\n"


def held_out(query_id):
    h = int(hashlib.sha256(query_id.encode("utf-8")).hexdigest()[:8], 16)
    return h < HELD_OUT_SHARE * 2**32


def build_golden(corpus):
    tools = [t["tool_id"] for t in corpus["tools"]]
    tool_set = set(tools)
    queries = []
    errors = []
    for path in sorted(glob.glob(os.path.join(HERE, "golden", "*.json"))):
        with open(path, encoding="utf-8") as f:
            shard = json.load(f)
        errs, _ = check_shard.check(shard, tool_set)
        errors += [f"{os.path.relpath(path, ROOT)}: {e}" for e in errs]
        qs = shard["queries"]
        held = {q["id"] for q in qs if held_out(q["id"])}
        for q in qs:
            out = {"id": q["id"], "query": q["query"], "labels": q["labels"]}
            if q.get("notes"):
                out["notes"] = q["notes"]
            out["split"] = "held_out" if q["id"] in held else "dev"
            queries.append(out)
    ids = [q["id"] for q in queries]
    if len(ids) != len(set(ids)):
        errors.append("duplicate query ids across shards")
    relevant = {l["tool_id"] for q in queries for l in q["labels"] if l["relevance"] >= 1}
    golden = {
        "version": "golden_v1",
        "corpus_version": corpus["version"],
        "queries": queries,
        "distractors": [t for t in sorted(tools) if t not in relevant],
    }
    return golden, errors


def build_security(run_generators):
    errors = []
    if run_generators:
        for gen in sorted(glob.glob(os.path.join(HERE, "security", "gen_*.py"))):
            r = subprocess.run([sys.executable, gen], cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                errors.append(f"{os.path.relpath(gen, ROOT)} failed:\n{r.stdout}{r.stderr}")
    entries = []
    for path in sorted(glob.glob(os.path.join(HERE, "security", "*.json"))):
        with open(path, encoding="utf-8") as f:
            entries += json.load(f)["entries"]
    entries, dropped = dedupe_real(entries)
    ids = [e["id"] for e in entries]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        errors.append(f"duplicate security ids across shards: {dup}")
    entries.sort(key=lambda e: (CATEGORY_ORDER.index(e["category"]), e["id"]))
    if dropped:
        print(f"security: dropped {len(dropped)} duplicate real-corpus copies: {', '.join(dropped)}")
    return {"version": "security_v1", "entries": entries}, errors


def dedupe_real(entries):
    """Shards were written independently, so the same real tool can be copied verbatim twice.
    Keep one copy per (server, tool): a hard negative over a plain benign entry, else the first
    in shard order. Returns the kept entries and the dropped ids."""
    def is_copy(e):
        return "real-corpus" in e["provenance"].get("notes", "") and "before" not in e

    best = {}
    for i, e in enumerate(entries):
        if not is_copy(e):
            continue
        key = (e.get("server"), e.get("tool"))
        rank = (0 if e["category"] == "hard_negative" else 1, i)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, e["id"])
    keep = {eid for _, eid in best.values()}
    kept = [e for e in entries if not is_copy(e) or e["id"] in keep]
    dropped = sorted(e["id"] for e in entries if is_copy(e) and e["id"] not in keep)
    return kept, dropped


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare a rebuild with the committed v1 files instead of writing them "
                         "(the generators still rewrite their own shard files, identically)")
    args = ap.parse_args()
    with open(os.path.join(V1, "corpus.json"), encoding="utf-8") as f:
        corpus = json.load(f)
    golden, gerr = build_golden(corpus)
    security, serr = build_security(run_generators=True)
    errors = gerr + serr
    for e in errors:
        print("ERROR:", e)
    if errors:
        return 1
    outputs = {os.path.join(V1, "golden.json"): dumps(golden), os.path.join(V1, "security.json"): dumps(security)}
    rc = 0
    for path, text in outputs.items():
        rel = os.path.relpath(path, ROOT)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            print(f"{'ok  ' if same else 'DIFF'} {rel}")
            rc = rc or (0 if same else 1)
        else:
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
            print(f"wrote {rel}")
    g = golden["queries"]
    held = sum(1 for q in g if q["split"] == "held_out")
    print(f"golden: {len(g)} queries ({held} held_out), {len(golden['distractors'])} distractors; "
          f"security: {len(security['entries'])} entries")
    return rc


if __name__ == "__main__":
    sys.exit(main())
