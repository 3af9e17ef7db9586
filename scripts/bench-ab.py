#!/usr/bin/env python3
"""A/B timing of two evalgate binaries in one session, runs interleaved (A, B, A, B, ...), so that
the machine's load moves both the same way.

    python3 scripts/bench-ab.py BIN_A BIN_B [--rounds N] [--mcpproxy PATH]

Build A from another revision with its own target directory, for example:

    git worktree add /tmp/evalgate-base main
    (cd /tmp/evalgate-base && CARGO_TARGET_DIR=/tmp/evalgate-base-target cargo build --release)
    cargo build --release
    python3 scripts/bench-ab.py /tmp/evalgate-base-target/release/evalgate target/release/evalgate

Measures, with /usr/bin/time -v (median wall and CPU, largest peak RSS), N rounds each (default
7; scale and mcpproxy 3), with issue 38's bound where it has one:
  run        `evalgate run` on the embedded v1 datasets                      at most 1 s
  validate   `evalgate validate`
  recorded   the observations of one `run --sut reference` (made with B) re-scored offline:
             everything evalgate does besides waiting for the system under test
  reference  `run --sut reference`: the reference proxy over 101 replay servers  within 5 % of A
  fitness    `fitness --lines`, 60 v1 candidates (scripts/fitness-candidates.py)
                                                                             at least 5/s
  scale      `run --robustness off` on 50,000 tools x 10,000 queries (scripts/scale-set.py)
                                                                             60 s and 1 GB
  mcpproxy   `run --mcpproxy-bin PATH` on v1 (only with --mcpproxy)          within 5 % of A
and prints the harness overhead of each binary (recorded / reference), the fitness rate and each
binary's size (the shipped one is `cargo build --profile dist`: at most 25 MB).
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("a"); ap.add_argument("b")
ap.add_argument("--rounds", type=int, default=7); ap.add_argument("--mcpproxy")
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
        w = time.perf_counter() - t0
        out = dict(l.strip().rsplit(": ", 1) for l in tf.read().splitlines() if ": " in l)
        rss = int(out.get("Maximum resident set size (kbytes)", "0")) / 1024
        cpu = float(out["User time (seconds)"]) + float(out["System time (seconds)"])
    return w, cpu, rss, p.returncode
# one recorded report from a reference run (binary B)
subprocess.run([bins["B"], "run", "--sut", "reference", "-q", "--out", "rec"], cwd=work, env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
rec = os.path.join(work, "rec", "report.json")
# 60 fitness candidates: each rewrites two v1 tools that golden queries label relevant
candidates = os.path.join(work, "candidates.jsonl")
subprocess.run([sys.executable, f"{root}/scripts/fitness-candidates.py", f"{root}/datasets/v1", "60",
                candidates], check=True)
scale = f"{root}/target/scale-set/t50000-q10000"
if not os.path.exists(f"{scale}/security.json"):
    subprocess.run([sys.executable, f"{root}/scripts/scale-set.py", "--tools", "50000",
                    "--queries", "10000", "--out", scale], check=True, stdout=subprocess.DEVNULL)
n = args.rounds
cases = {
  "run": (n, lambda b: [b, "run", "-q", "--out", "o"]),
  "validate": (n, lambda b: [b, "validate"]),
  "recorded": (n, lambda b: [b, "run", "--sut", "recorded", "--detectors", "recorded", "--recorded", rec, "-q", "--out", "o"]),
  "reference": (n, lambda b: [b, "run", "--sut", "reference", "-q", "--out", "o"]),
  "fitness": (n, lambda b: [b, "fitness", "--lines"]),
  "scale": (3, lambda b: [b, "run", "--datasets", scale, "--robustness", "off", "--no-baseline", "-q", "--out", "o"]),
}
if args.mcpproxy:
    mp = os.path.abspath(args.mcpproxy)
    cases["mcpproxy"] = (3, lambda b: [b, "run", "--mcpproxy-bin", mp, "-q", "--out", "o"])
res = {}
for case, (reps, mk) in cases.items():
    for i in range(reps):
        for name, b in bins.items():
            stdin = open(candidates) if case == "fitness" else None
            res.setdefault((case, name), []).append(timed(mk(b), stdin))
            print(f"{case} {name}: {res[(case, name)][-1][0]:.2f} s", file=sys.stderr)
for case in cases:
    for name in bins:
        v = res[(case, name)]
        ws = [x[0] for x in v]; cs = [x[1] for x in v]; rs = [x[2] for x in v]
        print(f"{case:10} {name:7} wall median {statistics.median(ws):.3f} s (min {min(ws):.3f}, max {max(ws):.3f}) cpu median {statistics.median(cs):.3f} s rss max {max(rs):.1f} MB exit {sorted(set(x[3] for x in v))}")
med = lambda case, name, i=0: statistics.median([x[i] for x in res[(case, name)]])
for name, b in bins.items():
    print(f"overhead {name}: wall {100*med('recorded', name)/med('reference', name):.2f} % cpu {100*med('recorded', name, 1)/med('reference', name, 1):.2f} %")
    print(f"fitness {name}: {60 / med('fitness', name):.1f} candidates/s; size {os.path.getsize(b) / 1e6:.2f} MB")
for case in cases:
    print(f"{case} B / A: {med(case, 'B') / med(case, 'A'):.3f}")
shutil.rmtree(work)
