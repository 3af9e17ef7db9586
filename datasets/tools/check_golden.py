#!/usr/bin/env python3
"""Validate a golden query set against a tool corpus (standard library only).

  python3 datasets/tools/check_golden.py [--corpus datasets/v0/corpus.json] [--golden datasets/v0/golden.json]

Exits 1 and lists every problem when a rule is broken; prints counts either way.
Rules:
  corpus: version, servers, tools with unique tool_id == "server:tool", servers named
          lowercase without ':', every tool's server listed in servers.
  golden: version golden_v0, corpus_version matches the corpus, ids q001.. unique,
          every label's tool_id in the corpus, relevance in {0,1,2}, no tool labelled twice
          in one query, >= 1 label with relevance >= 1 per query, the query text never
          contains a labelled tool's bare name as a whole word (word chars [A-Za-z0-9_],
          case-insensitive), a query has relevance-0 labels iff its notes start with
          "hard-negative: near-dup of <tool_id>" naming one of them,
          >= 40% hard-negative queries, >= 1 multi-relevant query, every corpus server
          covered by some relevance >= 1 label, >= 60 queries.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.join(HERE, "..", "v0", "corpus.json")
DEFAULT_GOLDEN = os.path.join(HERE, "..", "v0", "golden.json")

MIN_QUERIES = 60
MIN_HARD_NEG_SHARE = 0.40
HN_PREFIX = "hard-negative: near-dup of "
ID_RE = re.compile(r"^q\d{3,}$")


def contains_word(text, word):
    pat = r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])"
    return re.search(pat, text, re.IGNORECASE) is not None


def check_corpus(corpus, errors):
    if corpus.get("version") != "corpus_v0":
        errors.append(f"corpus: version is {corpus.get('version')!r}, expected 'corpus_v0'")
    server_names = []
    for s in corpus.get("servers", []):
        n = s.get("name", "")
        server_names.append(n)
        if not n or ":" in n or n != n.lower():
            errors.append(f"corpus: bad server name {n!r}")
        for key in ("registry", "package", "version", "license", "taken", "server_info", "dummy_env"):
            if key not in s:
                errors.append(f"corpus: server {n!r} lacks {key!r}")
    if len(set(server_names)) != len(server_names):
        errors.append("corpus: duplicate server names")
    tools = {}
    for t in corpus.get("tools", []):
        tid = t.get("tool_id", "")
        if tid in tools:
            errors.append(f"corpus: duplicate tool_id {tid}")
        tools[tid] = t
        if tid != f"{t.get('server')}:{t.get('tool')}":
            errors.append(f"corpus: tool_id {tid!r} != server:tool")
        if t.get("server") not in server_names:
            errors.append(f"corpus: tool {tid} has unknown server {t.get('server')!r}")
        for key in ("description", "schema"):
            if key not in t:
                errors.append(f"corpus: tool {tid} lacks {key!r}")
    ids = [t.get("tool_id") for t in corpus.get("tools", [])]
    if ids != sorted(ids):
        errors.append("corpus: tools are not sorted by tool_id")
    return tools, server_names


def check_golden(golden, corpus, tools, server_names, errors):
    if golden.get("version") != "golden_v0":
        errors.append(f"golden: version is {golden.get('version')!r}, expected 'golden_v0'")
    if golden.get("corpus_version") != corpus.get("version"):
        errors.append(f"golden: corpus_version {golden.get('corpus_version')!r} != corpus {corpus.get('version')!r}")
    queries = golden.get("queries", [])
    seen_ids, seen_text = set(), set()
    hard_neg = multi = 0
    covered = set()
    for i, q in enumerate(queries):
        qid = q.get("id", f"#{i}")
        where = f"golden {qid}"
        if not ID_RE.match(str(qid)):
            errors.append(f"{where}: id does not look like q001")
        if qid in seen_ids:
            errors.append(f"{where}: duplicate id")
        seen_ids.add(qid)
        text = q.get("query", "")
        if not text.strip():
            errors.append(f"{where}: empty query")
        if text.strip().lower() in seen_text:
            errors.append(f"{where}: duplicate query text")
        seen_text.add(text.strip().lower())
        labels = q.get("labels", [])
        positives, negatives, labelled = [], [], set()
        for lab in labels:
            tid = lab.get("tool_id")
            rel = lab.get("relevance")
            if tid not in tools:
                errors.append(f"{where}: unknown tool_id {tid!r}")
                continue
            if tid in labelled:
                errors.append(f"{where}: {tid} labelled twice")
            labelled.add(tid)
            if rel not in (0, 1, 2) or isinstance(rel, bool):
                errors.append(f"{where}: {tid} has relevance {rel!r}, expected 0, 1 or 2")
                continue
            bare = tools[tid]["tool"]
            if contains_word(text, bare):
                errors.append(f"{where}: query contains the bare tool name {bare!r} of {tid}")
            if rel >= 1:
                positives.append(tid)
                covered.add(tools[tid]["server"])
            else:
                negatives.append(tid)
        if not positives:
            errors.append(f"{where}: no label with relevance >= 1")
        if len(positives) >= 2:
            multi += 1
        notes = q.get("notes", "")
        if negatives:
            hard_neg += 1
            if not notes.startswith(HN_PREFIX):
                errors.append(f"{where}: has relevance-0 labels but notes do not start with {HN_PREFIX!r}")
            else:
                named = notes[len(HN_PREFIX):].split(";")[0].split()[0] if notes[len(HN_PREFIX):].strip() else ""
                if named not in negatives:
                    errors.append(f"{where}: notes name {named!r}, which is not one of its relevance-0 labels")
        elif notes.startswith("hard-negative"):
            errors.append(f"{where}: notes say hard-negative but no relevance-0 label")

    n = len(queries)
    share = hard_neg / n if n else 0.0
    if n < MIN_QUERIES:
        errors.append(f"golden: {n} queries, need >= {MIN_QUERIES}")
    if share < MIN_HARD_NEG_SHARE:
        errors.append(f"golden: hard-negative share {share:.1%} < {MIN_HARD_NEG_SHARE:.0%}")
    if multi < 1:
        errors.append("golden: no multi-relevant query")
    missing = sorted(set(server_names) - covered)
    if missing:
        errors.append(f"golden: servers with no relevant label: {', '.join(missing)}")
    return {
        "queries": n,
        "hard_negative": hard_neg,
        "hard_negative_share": share,
        "multi_relevant": multi,
        "servers_covered": len(covered & set(server_names)),
        "servers_total": len(server_names),
        "tools_labelled_relevant": len({lab["tool_id"] for q in queries for lab in q.get("labels", [])
                                        if lab.get("relevance", 0) >= 1 and lab.get("tool_id") in tools}),
    }


def main():
    ap = argparse.ArgumentParser(description="validate golden.json against corpus.json")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--golden", default=DEFAULT_GOLDEN)
    args = ap.parse_args()
    with open(args.corpus, encoding="utf-8") as fh:
        corpus = json.load(fh)
    with open(args.golden, encoding="utf-8") as fh:
        golden = json.load(fh)
    errors = []
    tools, server_names = check_corpus(corpus, errors)
    stats = check_golden(golden, corpus, tools, server_names, errors)
    print(f"corpus: {len(server_names)} servers, {len(tools)} tools")
    print(f"queries: {stats['queries']}")
    print(f"hard-negative: {stats['hard_negative']} ({stats['hard_negative_share']:.1%})")
    print(f"multi-relevant: {stats['multi_relevant']}")
    print(f"servers covered: {stats['servers_covered']}/{stats['servers_total']}")
    print(f"distinct tools labelled relevant: {stats['tools_labelled_relevant']}/{len(tools)}")
    if errors:
        print(f"FAIL: {len(errors)} problem(s)")
        for e in errors:
            print("  - " + e)
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
