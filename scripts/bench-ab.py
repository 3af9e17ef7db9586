#!/usr/bin/env python3
"""A/B timing of two evalgate binaries in one session, runs interleaved (A, B, A, B, ...), so that
the machine's load moves both the same way.

    python3 scripts/bench-ab.py BIN_A BIN_B

Build A from another revision with its own target directory, for example:

    git worktree add /tmp/evalgate-base main
    (cd /tmp/evalgate-base && CARGO_TARGET_DIR=/tmp/evalgate-base-target cargo build --release)
    cargo build --release
    python3 scripts/bench-ab.py /tmp/evalgate-base-target/release/evalgate target/release/evalgate

Measures, with /usr/bin/time -v (median wall and CPU, largest peak RSS):
  run        `evalgate run` on the embedded v1 datasets (7 times each)
  validate   `evalgate validate` (7 times each)
  recorded   the observations of one `run --sut reference` (made with B) re-scored offline:
             everything evalgate does besides waiting for the system under test (7 times each)
  reference  `run --sut reference`: the reference proxy over 101 replay servers (4 times each)
and prints the harness overhead of each binary: recorded / reference.
"""
import subprocess, time, statistics, os, sys, json, tempfile, shutil
bins = {"A": sys.argv[1], "B": sys.argv[2]}
work = tempfile.mkdtemp()
env = {k: v for k, v in os.environ.items() if not k.startswith("EVALGATE_")}
env["EVALGATE_PUBLISH"] = "never"
def timed(cmd, cwd):
    with tempfile.NamedTemporaryFile("r", suffix=".t") as tf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name] + cmd, cwd=cwd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        w = time.perf_counter() - t0
        out = dict(l.strip().rsplit(": ", 1) for l in tf.read().splitlines() if ": " in l)
        rss = int(out.get("Maximum resident set size (kbytes)", "0")) / 1024
        cpu = float(out["User time (seconds)"]) + float(out["System time (seconds)"])
    return w, cpu, rss, p.returncode
# one recorded report from a reference run (binary B)
subprocess.run([bins["B"], "run", "--sut", "reference", "-q", "--out", "rec"], cwd=work, env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
rec = os.path.join(work, "rec", "report.json")
cases = {
  "run": lambda b: [b, "run", "-q", "--out", "o"],
  "validate": lambda b: [b, "validate"],
  "recorded": lambda b: [b, "run", "--sut", "recorded", "--detectors", "recorded", "--recorded", rec, "-q", "--out", "o"],
  "reference": lambda b: [b, "run", "--sut", "reference", "-q", "--out", "o"],
}
reps = {"run": 7, "validate": 7, "recorded": 7, "reference": 4}
res = {}
for case, mk in cases.items():
    for i in range(reps[case]):
        for name, b in bins.items():
            w, c, r, code = timed(mk(b), work)
            res.setdefault((case, name), []).append((w, c, r, code))
for (case, name), v in sorted(res.items()):
    ws = [x[0] for x in v]; cs = [x[1] for x in v]; rs = [x[2] for x in v]
    print(f"{case:10} {name:7} wall median {statistics.median(ws):.3f} s (min {min(ws):.3f}, max {max(ws):.3f}) cpu median {statistics.median(cs):.3f} s rss max {max(rs):.1f} MB exit {sorted(set(x[3] for x in v))}")
for name in bins:
    rec_w = statistics.median([x[0] for x in res[("recorded", name)]])
    ref_w = statistics.median([x[0] for x in res[("reference", name)]])
    rec_c = statistics.median([x[1] for x in res[("recorded", name)]])
    ref_c = statistics.median([x[1] for x in res[("reference", name)]])
    print(f"overhead {name}: wall {100*rec_w/ref_w:.2f} % cpu {100*rec_c/ref_c:.2f} %")
shutil.rmtree(work)
