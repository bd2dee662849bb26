#!/usr/bin/env python3
"""Web servers side by side under wrk: requests/s and the server's CPU per
request (its process tree's user + system time from /proc over the run,
and the user part alone).

    scripts/serve-ab.py ROUNDS URL_PATH "label|port|server command" ...

Each server is started on CPU 0 (`taskset -c 0`), listening on its port;
`wrk -t1 -c32 -d4s` runs on CPU 1 against http://127.0.0.1:PORT/URL_PATH,
with `-H 'Connection: close'` when WRK_CLOSE=1. Servers take turns within
a round, the order rotated each round; medians over the rounds. The
servers stay up for the whole run (each warmed by a 1 s run first).
Used for docs/BENCHMARKS.md, "iolite http: a connection's cost"."""
import os, re, shlex, signal, statistics, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def tree(pid):
    """pid and its descendants."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                kids.setdefault(ppid, []).append(int(d))
            except OSError:
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def cpu(pids):
    """(user, system) seconds of pids."""
    u = s = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                v = f.read().rsplit(")", 1)[1].split()
            u += int(v[11])
            s += int(v[12])
        except OSError:
            pass
    return u / TICK, s / TICK


def wrk(port, path, secs):
    cmd = ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{secs}s"]
    if os.environ.get("WRK_CLOSE") == "1":
        cmd += ["-H", "Connection: close"]
    out = subprocess.run(cmd + [f"http://127.0.0.1:{port}/{path}"], capture_output=True, text=True).stdout
    m = re.search(r"^\s*(\d+) requests in", out, re.M)
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if not m or bad:
        sys.exit(f"wrk failed on port {port}: {out}")
    return int(m.group(1))


def main():
    rounds, path = int(sys.argv[1]), sys.argv[2]
    servers = [a.split("|", 2) for a in sys.argv[3:]]
    procs = []
    try:
        for label, port, cmd in servers:
            p = subprocess.Popen(["taskset", "-c", "0"] + shlex.split(cmd),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True)
            procs.append(p)
        time.sleep(1.5)
        for (label, port, _), p in zip(servers, procs):
            if p.poll() is not None:
                sys.exit(f"{label} did not start")
            wrk(port, path, 1)
        res = {s[0]: [] for s in servers}
        for r in range(rounds):
            order = list(zip(servers, procs))
            order = order[r % len(order):] + order[:r % len(order)]
            for (label, port, _), p in order:
                pids = tree(p.pid)
                c0, t0 = cpu(pids), time.perf_counter()
                n = wrk(port, path, 4)
                c1, t1 = cpu(pids), time.perf_counter()
                user, system = c1[0] - c0[0], c1[1] - c0[1]
                res[label].append((n / (t1 - t0), (user + system) / n * 1e6, user / n * 1e6))
        base = statistics.median(x[0] for x in res[servers[0][0]])
        base_cpu = statistics.median(x[1] for x in res[servers[0][0]])
        for label, _, _ in servers:
            rate = statistics.median(x[0] for x in res[label])
            us = statistics.median(x[1] for x in res[label])
            user = statistics.median(x[2] for x in res[label])
            print(f"{label:24s} {rate:9.0f} req/s ({rate / base:4.2f}x)  {us:6.2f} us CPU/req ({us / base_cpu:4.2f}x;"
                  f" user {user:5.2f})"
                  f"  rates {min(x[0] for x in res[label]):.0f}-{max(x[0] for x in res[label]):.0f}")
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except OSError:
                pass
        for p in procs:
            p.wait()


main()
