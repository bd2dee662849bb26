#!/usr/bin/env python3
"""Commands timed side by side (used for docs/BENCHMARKS.md, "start-up: what the dynamic binary cost" (2026-11-23, 6d1ff8d)): ROUNDS then "label|ENV=V ... cmd args" cases, interleaved
(order rotated each round), stdout to /dev/null, medians in ms."""
import subprocess, time, statistics, sys, os, shlex
runs = int(sys.argv[1]); cases = [a.split("|", 1) for a in sys.argv[2:]]
res = {}
warm = [w for w in os.environ.get("WARM", "").split() if w]
for r in range(runs):
    for w in warm:
        subprocess.run(["cat", w], stdout=subprocess.DEVNULL)
    order = cases[r % len(cases):] + cases[:r % len(cases)]
    for label, cmd in order:
        parts = shlex.split(cmd); env = dict(os.environ)
        while parts and "=" in parts[0] and not parts[0].startswith("/"):
            k, v = parts.pop(0).split("=", 1); env[k] = v
        t = time.perf_counter()
        p = subprocess.run(parts, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        dt = time.perf_counter() - t
        if p.returncode not in (0, 1): print("FAIL", label, p.returncode, p.stderr[:300]); sys.exit(1)
        res.setdefault(label, []).append(dt)
base = statistics.median(res[cases[0][0]])
for label, _ in cases:
    m = statistics.median(res[label])
    print(f"{label:28s} {m*1000:8.2f} ms  {base/m:5.2f}x vs {cases[0][0]}   [{min(res[label])*1000:.1f}-{max(res[label])*1000:.1f}]")
