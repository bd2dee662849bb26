#!/usr/bin/env bash
# `ferry cp -r` against GNU `cp -r` on a tree of many small files: FILES
# files of 1-8 KiB (sizes from a fixed seed) in 10 x 10 nested directories,
# the source read once first so both copy from the page cache; then ROUNDS
# interleaved rounds (ferry, GNU, ferry, GNU...), each copy into a fresh
# destination beside the source (removed and synced, untimed, between
# copies); the
# median wall time of each and the ratio.
#
#   scripts/bench-cp-tree.sh [FERRY_BINARY] [FILES] [ROUNDS] [DIR]
#
# FERRY_BINARY defaults to target/release/ferry; FILES to 10000; ROUNDS to
# 7; DIR (where the tree is made) to a new directory under /tmp.
set -euo pipefail
cd "$(dirname "$0")/.."
ferry=$(realpath "${1:-target/release/ferry}")
files=${2:-10000}
rounds=${3:-7}
dir=${4:-$(mktemp -d /tmp/bench-cp-tree.XXXXXX)}
trap 'rm -rf "$dir"' EXIT

python3 - "$dir/src" "$files" <<'PY'
import os, random, sys
root, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(19)
blob = os.urandom(8192)
for i in range(n):
    d = os.path.join(root, f"d{i % 10}", f"e{(i // 10) % 10}")
    os.makedirs(d, exist_ok=True)
    size = rng.randint(1024, 8192)
    with open(os.path.join(d, f"f{i}"), "wb") as f:
        f.write(blob[:size])
PY
sync
# Warm: every source file and directory in the page cache.
find "$dir/src" -type f -print0 | xargs -0 cat > /dev/null

declare -A T
now() { date +%s.%N; }
for r in $(seq "$rounds"); do
    for who in ferry gnu; do
        rm -rf "$dir/dst"
        # Untimed: the last copy's and the removal's dirty pages written
        # back, so no copy pays for the one before it (without this, one
        # run here took 0.95 s and another 108 s).
        sync
        if [ $who = ferry ]; then cmd=("$ferry" cp -r); else cmd=(cp -r); fi
        t0=$(now)
        "${cmd[@]}" "$dir/src" "$dir/dst"
        t1=$(now)
        T[$who]+="$(echo "$t1 - $t0" | bc -l | xargs printf '%.4f') "
    done
done
# Both copies are whole.
diff -r "$dir/src" "$dir/dst" > /dev/null

source scripts/medians.sh
median_table "cp -r of $files files, $rounds rounds" ferry gnu
med() { tr ' ' '\n' <<<"${T[$1]}" | grep . | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }
echo
echo "ferry/GNU median ratio: $(echo "$(med ferry) / $(med gnu)" | bc -l | xargs printf '%.3f')"
