#!/usr/bin/env python3
"""Check one authoring shard of golden set v1 (standard library only).

    python3 datasets/tools/v1/golden/check_shard.py datasets/tools/v1/golden/<shard>.json [--servers a,b,c]

A shard is {"shard": NAME, "servers": [...], "queries": [{id, query, labels, notes?}]}; `servers`
lists the corpus servers the shard is responsible for covering. Rules (any failure -> exit 1):
  * ids are NAME-NNN and unique; query text is non-blank and not repeated
  * every label's tool_id is in datasets/v1/corpus.json; relevance in {0,1,2}; no tool twice
  * at least one label with relevance >= 1
  * the query never contains a labeled tool's bare name as a whole word (word chars
    [A-Za-z0-9_], case-insensitive), the same rule as `evalgate validate`'s golden.names-tool
  * a query is a hard negative iff its notes start with "hard-negative: near-dup of <tool_id>",
    and that tool is labeled 0 or 1 in the query and lives on a different server than some
    relevance-2 label
  * every server listed in `servers` has a relevance >= 1 label in some query
Prints counts: queries, hard-negative share, multi-relevant queries, length spread, coverage.
"""
import collections
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "..", "v1", "corpus.json")
HN_PREFIX = "hard-negative: near-dup of "


def contains_word(text, word):
    pat = r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])"
    return re.search(pat, text, re.IGNORECASE) is not None


def check(shard, tools):
    errs = []
    name = shard.get("shard")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        return [f"shard name {name!r} must be lowercase [a-z0-9_]"], {}
    servers = shard.get("servers", [])
    all_servers = {t.split(":", 1)[0] for t in tools}
    for s in servers:
        if s not in all_servers:
            errs.append(f"servers: {s!r} is not a corpus server")
    qs = shard.get("queries")
    if not isinstance(qs, list) or not qs:
        return errs + ["queries must be a non-empty list"], {}
    seen_ids, seen_text = set(), {}
    covered = collections.Counter()
    stats = collections.Counter()
    lengths = []
    for i, q in enumerate(qs):
        qid = q.get("id", f"#{i}")
        if not re.fullmatch(re.escape(name) + r"-\d{3}", str(qid)):
            errs.append(f"{qid}: id must be {name}-NNN")
        if qid in seen_ids:
            errs.append(f"{qid}: duplicate id")
        seen_ids.add(qid)
        text = q.get("query", "")
        if not isinstance(text, str) or not text.strip():
            errs.append(f"{qid}: blank query")
            continue
        key = " ".join(text.lower().split())
        if key in seen_text:
            errs.append(f"{qid}: same text as {seen_text[key]}")
        seen_text[key] = qid
        lengths.append(len(text.split()))
        labels = q.get("labels", [])
        rel = {}
        for l in labels:
            tid, r = l.get("tool_id"), l.get("relevance")
            if tid not in tools:
                errs.append(f"{qid}: label {tid!r} is not in the v1 corpus")
            if r not in (0, 1, 2):
                errs.append(f"{qid}: relevance {r!r} for {tid} must be 0, 1 or 2")
            if tid in rel:
                errs.append(f"{qid}: {tid} labeled twice")
            rel[tid] = r
            if isinstance(tid, str) and contains_word(text, tid.split(":", 1)[-1]):
                errs.append(f"{qid}: query contains the labeled tool's name {tid.split(':', 1)[-1]!r}")
        relevant = [t for t, r in rel.items() if r in (1, 2)]
        primary = [t for t, r in rel.items() if r == 2]
        if not relevant:
            errs.append(f"{qid}: no label with relevance >= 1")
        for t in relevant:
            covered[t.split(":", 1)[0]] += 1
        if len(relevant) > 1:
            stats["multi_relevant"] += 1
        notes = q.get("notes", "") or ""
        if notes.startswith(HN_PREFIX):
            target = notes[len(HN_PREFIX):].split()[0].rstrip(";,.") if notes[len(HN_PREFIX):].strip() else ""
            if rel.get(target) not in (0, 1):
                errs.append(f"{qid}: notes name {target!r} as the near-dup, but it is not labeled 0 or 1")
            elif not any(p.split(":", 1)[0] != target.split(":", 1)[0] for p in primary):
                errs.append(f"{qid}: near-dup {target} must be on another server than a relevance-2 tool")
            stats["hard_negative"] += 1
        elif "hard-negative" in notes:
            errs.append(f"{qid}: notes mention hard-negative but do not start with {HN_PREFIX!r}<tool_id>")
    for s in servers:
        if covered[s] == 0:
            errs.append(f"coverage: server {s!r} has no relevance >= 1 label")
    n = len(qs)
    lengths.sort()
    info = {
        "queries": n,
        "hard_negative": stats["hard_negative"],
        "hard_negative_share": round(stats["hard_negative"] / n, 3),
        "multi_relevant": stats["multi_relevant"],
        "words_min_median_max": (lengths[0], lengths[len(lengths) // 2], lengths[-1]) if lengths else None,
        "terse (<=4 words)": sum(1 for w in lengths if w <= 4),
        "long (>=20 words)": sum(1 for w in lengths if w >= 20),
        "servers_covered": {s: covered[s] for s in servers},
    }
    return errs, info


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    with open(CORPUS, encoding="utf-8") as f:
        tools = {t["tool_id"] for t in json.load(f)["tools"]}
    rc = 0
    for path in argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                shard = json.load(f)
        except (OSError, json.JSONDecodeError) as exc:
            print(f"FAIL: {path}: {exc}")
            rc = 1
            continue
        errs, info = check(shard, tools)
        for e in errs:
            print(f"ERROR: {path}: {e}")
        print(json.dumps(info, indent=1))
        print(f"{'FAIL' if errs else 'OK'}: {path}: {len(errs)} error(s)")
        rc = rc or (1 if errs else 0)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
