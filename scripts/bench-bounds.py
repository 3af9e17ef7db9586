#!/usr/bin/env python3
"""Issue 38's user-felt bounds, two builds side by side in one session (runs interleaved: A, B, A,
B, ...), so that the machine's load moves both the same way.

    python3 scripts/bench-bounds.py BIN_A BIN_B [--mcpproxy PATH] [--rounds N]

Build A from another revision with its own target directory (see scripts/bench-ab.py). Each
case runs N rounds (default 5; the real mcpproxy 3), with /usr/bin/time -v; medians of wall
time, the largest peak RSS. The cases and the bounds they are held to (B against A):

  default    `evalgate run`, zero-config (embedded v1)          at most 1 s wall
  reference  `run --sut reference` (v1, 101 replay servers)     within 5 % of A
  mcpproxy   `run --mcpproxy-bin PATH` (v1; with --mcpproxy)    within 5 % of A
  fitness    `fitness --lines`, 60 v1 candidates, one process   at least 5 candidates/s
  scale      `run --robustness off` on 50,000 tools x 10,000 queries (scripts/scale-set.py)
                                                                at most 60 s and 1 GB
and each binary's size (the shipped one is `cargo build --profile dist`: at most 25 MB).
Exit codes are printed beside each figure: a case that did not exit 0 measured nothing.
"""
import argparse, json, os, random, shutil, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("a"); ap.add_argument("b")
ap.add_argument("--mcpproxy"); ap.add_argument("--rounds", type=int, default=5)
args = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bins = {"A": os.path.abspath(args.a), "B": os.path.abspath(args.b)}
work = tempfile.mkdtemp()
env = {k: v for k, v in os.environ.items()
       if not k.startswith("EVALGATE_") and k not in ("GITHUB_ACTIONS", "ACT")}
env["EVALGATE_PUBLISH"] = "never"


def timed(cmd, stdin=None):
    with tempfile.NamedTemporaryFile("r", suffix=".t") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd, cwd=work, env=env,
                           stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        out = dict(l.strip().rsplit(": ", 1) for l in tf.read().splitlines() if ": " in l)
    return wall, int(out.get("Maximum resident set size (kbytes)", "0")) / 1024, p.returncode


# 60 fitness candidates, as scripts/bench-fitness.sh makes them (two v1 tools rewritten each)
corpus = json.load(open(f"{root}/datasets/v1/corpus.json"))
golden = json.load(open(f"{root}/datasets/v1/golden.json"))
desc = {t["tool_id"]: t.get("description", "") for t in corpus["tools"]}
relevant = sorted({l["tool_id"] for q in golden["queries"] for l in q["labels"] if l["relevance"] > 0})
rng = random.Random(21)
candidates = os.path.join(work, "candidates.jsonl")
with open(candidates, "w") as f:
    for _ in range(60):
        a, b, c = rng.sample(relevant, 3)
        words = desc[b].split()
        f.write(json.dumps({a: {"description": desc[c]},
                            b: {"description": " ".join(words[: len(words) // 2])}}) + "\n")
scale = f"{root}/target/scale-set/t50000-q10000"
if not os.path.exists(f"{scale}/security.json"):
    subprocess.run([sys.executable, f"{root}/scripts/scale-set.py", "--tools", "50000",
                    "--queries", "10000", "--out", scale], check=True, stdout=subprocess.DEVNULL)

cases = {
    "default": (args.rounds, lambda b: [b, "run", "-q", "--out", "o"]),
    "reference": (args.rounds, lambda b: [b, "run", "--sut", "reference", "-q", "--out", "o"]),
    "fitness": (args.rounds, lambda b: [b, "fitness", "--lines"]),
    "scale": (3, lambda b: [b, "run", "--datasets", scale, "--robustness", "off", "-q",
                            "--no-baseline", "--out", "o"]),
}
if args.mcpproxy:
    mp = os.path.abspath(args.mcpproxy)
    cases["mcpproxy"] = (3, lambda b: [b, "run", "--mcpproxy-bin", mp, "-q", "--out", "o"])

res = {}
for case, (rounds, cmd) in cases.items():
    for _ in range(rounds):
        for name, b in bins.items():
            stdin = open(candidates) if case == "fitness" else None
            res.setdefault((case, name), []).append(timed(cmd(b), stdin))
            print(f"{case} {name}: {res[(case, name)][-1][0]:.2f} s", file=sys.stderr)

print("| case | A wall median (min–max) | B wall median (min–max) | B / A | peak RSS A, B | exit A, B |")
print("|---|---:|---:|---:|---:|---|")
for case in cases:
    a, b = res[(case, "A")], res[(case, "B")]
    ma, mb = (statistics.median(x[0] for x in v) for v in (a, b))
    span = lambda v: f"{statistics.median(x[0] for x in v):.2f} s ({min(x[0] for x in v):.2f}–{max(x[0] for x in v):.2f})"
    codes = lambda v: sorted({x[2] for x in v})
    print(f"| {case} | {span(a)} | {span(b)} | {mb / ma:.3f} | {max(x[1] for x in a):.0f} MB, "
          f"{max(x[1] for x in b):.0f} MB | {codes(a)}, {codes(b)} |")
fa, fb = (60 / statistics.median(x[0] for x in res[("fitness", n)]) for n in "AB")
print(f"\nfitness: {fa:.1f} candidates/s (A), {fb:.1f} (B)")
for name, b in bins.items():
    print(f"size {name}: {os.path.getsize(b) / 1e6:.2f} MB ({b})")
shutil.rmtree(work)
