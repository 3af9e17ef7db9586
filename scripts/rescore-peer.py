#!/usr/bin/env python3
"""rescore-peer.py: the plain-Python peer of evalgate's offline re-score (issue 20).

What `evalgate retrieval --sut recorded --recorded report.json --datasets DIR` does for the
retrieval metrics, written as the plain loop one would write without evalgate: read the recorded
observations of an evalgate report.json, the golden set's labels and the corpus's tool ids,
score every query of every run per docs/metrics.md, and write a JSON result (per-run means of
every metric and their mean over the runs, one row per query with its metrics averaged over the
runs and its first run's filtered top 10). Standard library only, no numpy.

    python3 scripts/rescore-peer.py --datasets DIR --recorded report.json --out result.json
    python3 scripts/rescore-peer.py --datasets DIR --recorded report.json \\
        --check evalgate-rescore/report.json     # exit 1 unless every number agrees to 1e-9

Metrics (docs/metrics.md): ids outside the corpus and repeated ids are dropped, the list is
scored to depth 10; relevant = grade >= 1; Recall@k = relevant in top k / relevant;
MRR = 1 / rank of the first relevant; nDCG@10 with gain = grade, discount log2(rank + 1),
normalised by the ideal ordering of the query's own grades; AP = sum over ranks r holding a
relevant tool of (hits up to r / r) / relevant; MAP = mean AP. A run's value of a metric is the
mean over the queries it answered.

It is the benchmark peer of scripts/bench-rescore.sh, which times it against evalgate on the
same input; --check is what makes that comparison fair (the same numbers).
"""
import argparse
import json
import math
import os
import sys

DEPTH = 10
KS = (1, 3, 5, 10)
KEYS = ("recall_at_1", "recall_at_3", "recall_at_5", "recall_at_10", "mrr", "ndcg_at_10", "map")


def score_query(grades, ranked):
    """grades: tool id -> grade (the first label of an id); ranked: filtered ids, best first."""
    relevant = [g for g in grades.values() if g >= 1]
    if not relevant:
        return [0.0] * len(KEYS)
    n_rel = len(relevant)
    top = ranked[:DEPTH]
    mrr = 0.0
    dcg = 0.0
    hits = 0
    ap_sum = 0.0
    for i, tool in enumerate(top):
        rank = i + 1
        g = grades.get(tool, 0)
        if g >= 1:
            if mrr == 0.0:
                mrr = 1.0 / rank
            dcg += g / math.log2(rank + 1)
            hits += 1
            ap_sum += hits / rank
    recall = [sum(1 for tool in top[:k] if grades.get(tool, 0) >= 1) / n_rel for k in KS]
    ideal = sorted(relevant, reverse=True)[:DEPTH]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    ndcg = dcg / idcg if idcg > 0 else 0.0
    return recall + [mrr, ndcg, ap_sum / n_rel]


def filter_ranked(raw, corpus):
    """Drops ids outside the corpus and repeats, keeping the first occurrence."""
    seen = set()
    out = []
    for tool in raw:
        if tool in corpus and tool not in seen:
            seen.add(tool)
            out.append(tool)
    return out


def rescore(datasets, recorded):
    with open(os.path.join(datasets, "corpus.json"), encoding="utf-8") as f:
        corpus = {t["tool_id"] for t in json.load(f)["tools"]}
    with open(os.path.join(datasets, "golden.json"), encoding="utf-8") as f:
        queries = json.load(f)["queries"]
    with open(recorded, encoding="utf-8") as f:
        obs = json.load(f)["retrieval"]["observations"]
    labels = {}
    order = {}
    for i, q in enumerate(queries):
        grades = {}
        for label in q["labels"]:
            grades.setdefault(label["tool_id"], label["relevance"])
        labels[q["id"]] = grades
        order[q["id"]] = i
    per_run = {k: [] for k in KEYS}
    sums = {}  # query id -> [runs, first values, sums of values, unstable, first top 10]
    for run in obs["runs"]:
        totals = [0.0] * len(KEYS)
        n = 0
        for qo in run["queries"]:
            grades = labels.get(qo["id"])
            if grades is None:
                continue
            ranked = filter_ranked(qo["ranked"], corpus)
            values = score_query(grades, ranked)
            for j, v in enumerate(values):
                totals[j] += v
            n += 1
            row = sums.get(qo["id"])
            if row is None:
                sums[qo["id"]] = [1, values, list(values), False, ranked[:DEPTH]]
            else:
                row[0] += 1
                row[3] = row[3] or any(abs(v - f) > 1e-12 for v, f in zip(values, row[1]))
                for j, v in enumerate(values):
                    row[2][j] += v
        for j, k in enumerate(KEYS):
            per_run[k].append(totals[j] / n if n else None)
    metrics = {}
    for k in KEYS:
        vals = [v for v in per_run[k] if v is not None]
        metrics[k] = {"per_run": per_run[k], "mean": sum(vals) / len(vals) if vals else None}
    rows = []
    for qid in sorted(sums, key=order.get):
        runs, _, total, unstable, top = sums[qid]
        rows.append({"id": qid, "retrieved": top,
                     "metrics": {k: total[j] / runs for j, k in enumerate(KEYS)},
                     "unstable": unstable})
    return {"retriever": obs["system"], "queries": len(queries), "runs": len(obs["runs"]),
            "metrics": metrics, "per_query": rows}


def check(result, report_path, tol=1e-9):
    """Every per-run mean and every query's metrics against an evalgate report.json."""
    with open(report_path, encoding="utf-8") as f:
        ret = json.load(f)["retrieval"]
    bad = []
    for k in KEYS:
        theirs = ret["metrics"][k]["per_run"]
        ours = result["metrics"][k]["per_run"]
        if len(theirs) != len(ours) or any(
                (a is None) != (b is None) or (a is not None and abs(a - b) > tol)
                for a, b in zip(ours, theirs)):
            bad.append(f"{k}: per-run means {ours} vs evalgate's {theirs}")
    theirs = {q["id"]: q for q in ret["per_query"]}
    if len(theirs) != len(result["per_query"]):
        bad.append(f"{len(result['per_query'])} query rows vs evalgate's {len(theirs)}")
    worst = 0.0
    for row in result["per_query"]:
        q = theirs.get(row["id"])
        if q is None:
            bad.append(f"query {row['id']}: not in evalgate's report")
            continue
        for k in KEYS:
            worst = max(worst, abs(row["metrics"][k] - q["metrics"][k]))
        if row["retrieved"] != q["retrieved"] or row["unstable"] != q["unstable"]:
            bad.append(f"query {row['id']}: retrieved/unstable differ")
    if worst > tol:
        bad.append(f"per-query metrics differ by up to {worst:.3g} (tolerance {tol})")
    return bad, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", required=True, help="directory with corpus.json and golden.json")
    ap.add_argument("--recorded", required=True, help="an evalgate report.json with observations")
    ap.add_argument("--out", help="where to write the result JSON [stdout]")
    ap.add_argument("--check", metavar="REPORT",
                    help="compare with an evalgate report.json of the same input; exit 1 if "
                         "any metric differs by more than 1e-9")
    a = ap.parse_args()
    result = rescore(a.datasets, a.recorded)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    elif not a.check:
        json.dump(result, sys.stdout, indent=2)
        print()
    if a.check:
        bad, worst = check(result, a.check)
        if bad:
            print("rescore-peer: DIFFERS from " + a.check, file=sys.stderr)
            for b in bad[:20]:
                print("  " + b, file=sys.stderr)
            return 1
        print(f"rescore-peer: {len(result['per_query'])} queries x {result['runs']} runs agree "
              f"with {a.check} (largest difference {worst:.3g})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
