#!/usr/bin/env python3
"""ROUNDS then "label|ENV=V cmd args" cases: each writes into a 1 MiB pipe
drained with splice into /dev/null; interleaved rounds, medians."""
import subprocess, time, statistics, sys, os, shlex, fcntl
runs = int(sys.argv[1]); cases = [a.split("|", 1) for a in sys.argv[2:]]
res = {}
null = os.open("/dev/null", os.O_WRONLY)
for r in range(runs):
    for w in os.environ.get("WARM", "").split():
        subprocess.run(["cat", w], stdout=subprocess.DEVNULL)
    order = cases[r % len(cases):] + cases[:r % len(cases)]
    for label, cmd in order:
        parts = shlex.split(cmd); env = dict(os.environ)
        while parts and "=" in parts[0] and not parts[0].startswith("/"):
            k, v = parts.pop(0).split("=", 1); env[k] = v
        rd, wr = os.pipe()
        fcntl.fcntl(wr, 1031, 1 << 20)
        t = time.perf_counter()
        p = subprocess.Popen(parts, stdout=wr, env=env)
        os.close(wr)
        while os.splice(rd, null, 1 << 20) > 0:
            pass
        p.wait()
        dt = time.perf_counter() - t
        os.close(rd)
        res.setdefault(label, []).append(dt)
base = statistics.median(res[cases[0][0]])
for label, _ in cases:
    m = statistics.median(res[label])
    print(f"{label:20s} {m*1000:8.2f} ms  {base/m:5.2f}x vs {cases[0][0]}   [{min(res[label])*1000:.1f}-{max(res[label])*1000:.1f}]")
