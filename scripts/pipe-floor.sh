#!/usr/bin/env bash
# How fast can a cat that write()s into a pipe be here? Times, interleaved
# and with the page cache warm, into a reader that drains the pipe inside
# the kernel (splice to /dev/null):
#   floor      write() of the file's bytes straight from a mapping populated
#              before the clock starts (no read, no copy in the program: the
#              pipe's own cost, the floor under any write()-based cat)
#   glibc_cat  bench/stdio/cat.c (fread/fwrite 8 KiB) on glibc
#   asi_cat    bench/asi/cat.c (the ASI rewrite) on libferry
#   ferry_cat  `ferry cat` (splices the file's pages into the pipe)
# Prints each median.
#
#   scripts/pipe-floor.sh [ROUNDS] [SIZE_MIB]
set -euo pipefail
rounds=${1:-9}
size=${2:-1024}
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$root/target/release
ferry=${FERRY:-$lib/ferry}
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -x "$ferry" ] || cargo build --release -p ferry-cli >/dev/null
[ -f "$lib/libferry.so" ] || cargo build --release -p ferry-c >/dev/null
cat > "$dir/floor.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: floor IN > PIPE\n"); return 2; }
    int in = open(argv[1], O_RDONLY);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) { perror(argv[1]); return 1; }
    size_t size = (size_t)st.st_size;
    const char *src = mmap(0, size, PROT_READ, MAP_SHARED | MAP_POPULATE, in, 0);
    if (src == MAP_FAILED) { perror("mmap"); return 1; }
    fcntl(1, F_SETPIPE_SZ, 1 << 20); /* as ferry's streams do */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t p = 0; p < size;) {
        size_t n = size - p < (1 << 20) ? size - p : (1 << 20);
        ssize_t w = write(1, src + p, n);
        if (w <= 0) { perror("write"); return 1; }
        p += (size_t)w;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    fprintf(stderr, "%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
EOF
cat > "$dir/drain.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
int main(void)
{
    int null = open("/dev/null", O_WRONLY);
    for (;;) {
        ssize_t n = splice(0, NULL, null, NULL, 1 << 20, SPLICE_F_MOVE);
        if (n <= 0)
            return n < 0;
    }
}
EOF
"$cc" -O2 "$dir/floor.c" -o "$dir/floor"
"$cc" -O2 "$dir/drain.c" -o "$dir/drain"
b=$root/crates/ferry-c/bench
"$cc" -std=gnu11 -O2 "$b/stdio/cat.c" -o "$dir/glibc_cat"
"$cc" -std=gnu11 -O2 -I "$root/crates/ferry-c/include" "$b/asi/cat.c" -o "$dir/asi_cat" \
    -L "$lib" -lferry -Wl,-rpath,"$lib"
# Text of 60-byte lines (base64 stops early on SIGPIPE: expected).
(head -c $((size << 20)) /dev/urandom | base64 -w 59 | head -c $((size << 20)) > "$dir/in") || true
[ "$(stat -c %s "$dir/in")" -eq $((size << 20)) ]
piped() {
    local a b
    a=$(date +%s%N)
    $1 "$dir/in" | "$dir/drain"
    b=$(date +%s%N)
    awk -v n=$((b - a)) 'BEGIN { printf "%.3f", n / 1e9 }'
}
warm() { cat "$dir/in" > /dev/null; }
declare -A T
for ((r = 0; r < rounds; r++)); do
    warm; T[floor]+="$({ "$dir/floor" "$dir/in" | "$dir/drain"; } 2>&1) "
    warm; T[glibc_cat]+="$(piped "$dir/glibc_cat") "
    warm; T[asi_cat]+="$(piped "$dir/asi_cat") "
    warm; T[ferry_cat]+="$(piped "$ferry cat") "
done
. "$(dirname "$0")/medians.sh"
median_table "${size} MiB into a splice-draining reader, $rounds rounds" floor glibc_cat asi_cat ferry_cat
