#!/usr/bin/env python3
"""A file sent over loopback TCP by `ferry pipe FILE tcp:…` and by socat
(its defaults, and -b 131072), side by side: interleaved rounds (order
rotated), the same sink for every sender (`ferry pipe tcp-listen:… /dev/null`),
the file read once before each send so it is in the page cache. Prints
each sender's median wall time, GB/s and CPU (user+sys) per GiB of the
sender, and its ratio to ferry's. Installs nothing: socat must be on PATH
(`apt-get install socat`); a missing peer is named and left out.

  scripts/pipe-vs-socat.py FERRY FILE ROUNDS
"""
import os, shutil, socket, statistics, subprocess, sys, time

ferry, path, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = os.path.getsize(path)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


senders = [
    ("ferry pipe", lambda p: [ferry, "pipe", path, f"tcp:127.0.0.1:{p}"]),
    # The overlay's path (read + gathered write, 128 KiB blocks) beside the
    # kernel's (sendfile), to see which the pair should take.
    ("ferry pipe --block 131072", lambda p: [ferry, "pipe", "--block", "131072", path, f"tcp:127.0.0.1:{p}"]),
]
if shutil.which("socat"):
    senders.append(("socat", lambda p: ["socat", "-u", f"FILE:{path}", f"TCP:127.0.0.1:{p}"]))
    senders.append(("socat -b 131072", lambda p: ["socat", "-b", "131072", "-u", f"FILE:{path}", f"TCP:127.0.0.1:{p}"]))
else:
    print("socat not found, left out (apt-get install socat)")

res = {name: [] for name, _ in senders}
for r in range(rounds):
    order = senders[r % len(senders):] + senders[:r % len(senders)]
    for name, argv in order:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass
        port = free_port()
        sink = subprocess.Popen([ferry, "pipe", f"tcp-listen:127.0.0.1:{port}", "/dev/null"])
        # Wait until the sink listens (a probe connection would be the
        # one it accepts, so look in /proc instead).
        deadline = time.time() + 10
        while True:
            if time.time() > deadline:
                sys.exit("sink did not come up")
            try:
                with open("/proc/net/tcp") as t:
                    if any(f":{port:04X} " in l and l.split()[3] == "0A" for l in t):
                        break
            except OSError:
                pass
            time.sleep(0.002)
        t0 = time.perf_counter()
        p = subprocess.Popen(argv(port))
        _, status, ru = os.wait4(p.pid, 0)
        sink.wait()
        dt = time.perf_counter() - t0
        if status != 0 or sink.returncode != 0:
            sys.exit(f"{name}: failed ({status}, sink {sink.returncode})")
        res[name].append((dt, ru.ru_utime + ru.ru_stime))

base = statistics.median(d for d, _ in res["ferry pipe"])
print(f"{size} bytes over loopback TCP, {rounds} interleaved rounds, medians")
print("| sender | wall s | GB/s | CPU s per GiB | ferry's speed-up |")
print("|---|---|---|---|---|")
for name, _ in senders:
    w = statistics.median(d for d, _ in res[name])
    c = statistics.median(c for _, c in res[name]) * (1 << 30) / size
    print(f"| {name} | {w:.3f} | {size / w / 1e9:.2f} | {c:.3f} | {w / base:.2f}× |")
