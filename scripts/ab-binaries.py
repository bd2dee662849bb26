#!/usr/bin/env python3
"""Two ferry binaries (OLD, NEW in the environment) run the same commands,
interleaved round by round (order swapped every round), output to /dev/null;
prints each case's median. Usage: OLD=... NEW=... scripts/ab-binaries.py ROUNDS "name|args" ..."""
import subprocess, time, statistics, sys, os
# Two builds of ferry side by side: OLD and NEW binaries from the environment.
old, new = os.environ["OLD"], os.environ["NEW"]
cases = [l.split("|") for l in sys.argv[2:]]
runs = int(sys.argv[1])
res = {}
for r in range(runs):
    for name, args in cases:
        for tag, b in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
            f = open(os.devnull, "w")
            t = time.perf_counter()
            p = subprocess.run([b] + args.split(), stdout=f, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t
            assert p.returncode in (0, 1), (b, args, p.returncode, p.stderr[:200])
            res.setdefault((name, tag), []).append(dt)
for name, _ in cases:
    o = statistics.median(res[(name, "old")]); n = statistics.median(res[(name, "new")])
    print(f"| {name} | {o*1000:.2f} ms | {n*1000:.2f} ms | {o/n:.2f}x |")
