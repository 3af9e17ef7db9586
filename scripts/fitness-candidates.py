#!/usr/bin/env python3
"""Writes N `evalgate fitness --lines` candidates for a dataset, deterministically: each line
rewrites the descriptions of two tools that golden queries label relevant (one gets a third
tool's description, one loses half its words), as an optimiser's proposals would.

    python3 scripts/fitness-candidates.py DATASET_DIR N OUT.jsonl

scripts/bench-fitness.sh and scripts/bench-ab.py time `fitness --lines` on these.
"""
import json, random, sys

data, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
corpus = json.load(open(f"{data}/corpus.json"))
golden = json.load(open(f"{data}/golden.json"))
desc = {t["tool_id"]: t.get("description", "") for t in corpus["tools"]}
relevant = sorted({l["tool_id"] for q in golden["queries"] for l in q["labels"] if l["relevance"] > 0})
rng = random.Random(21)
with open(out, "w") as f:
    for _ in range(n):
        a, b, c = rng.sample(relevant, 3)
        words = desc[b].split()
        f.write(json.dumps({a: {"description": desc[c]},
                            b: {"description": " ".join(words[: len(words) // 2])}}) + "\n")
