#!/usr/bin/env python3
"""`ferry cat FILE | reader` against uutils cat, and each one's start-up.

Interleaved rounds; each run is timed from spawning the program to its exit,
with this process draining the pipe into /dev/null by splice (as
`ferry-bench asf` does), and FILE read once right before each run. Also times
`cat /dev/null` for both: the start-up alone. Prints medians and minimums.

    scripts/cat-start.py FILE [ROUNDS]     (FERRY=path, UUCAT=path)
"""
import os
import shutil
import statistics
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 21
    ferry = os.environ.get("FERRY", "target/release/ferry")
    uu = os.environ.get("UUCAT") or shutil.which("uu-cat") or shutil.which("coreutils")
    progs = {"ferry cat FILE": [ferry, "cat", path], "ferry cat /dev/null": [ferry, "cat", "/dev/null"]}
    if uu is None:
        print("uutils cat not found (set UUCAT); timing ferry only", file=sys.stderr)
    else:
        pre = [uu, "cat"] if os.path.basename(uu) == "coreutils" else [uu]
        progs["uutils cat FILE"] = pre + [path]
        progs["uutils cat /dev/null"] = pre + ["/dev/null"]
    null = os.open("/dev/null", os.O_WRONLY)
    times = {k: [] for k in progs}
    for _ in range(rounds):
        for name, argv in progs.items():
            with open(path, "rb") as f:
                while f.read(1 << 24):
                    pass
            t = time.perf_counter()
            p = subprocess.Popen(argv, stdout=subprocess.PIPE, env={"LC_ALL": "C"})
            fd = p.stdout.fileno()
            while os.splice(fd, null, 1 << 20, flags=os.SPLICE_F_MOVE):
                pass
            if p.wait() != 0:
                sys.exit(f"{argv} failed")
            times[name].append(time.perf_counter() - t)
    for name, v in times.items():
        print(f"{name}: median {statistics.median(v) * 1e3:.2f} ms, min {min(v) * 1e3:.2f} ms")


main()
