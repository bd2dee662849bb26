#!/usr/bin/env bash
# How fast can a cp that writes with write(2) be here? Times, interleaved
# and with the page cache warm, GNU cp and `ferry cp` of a file beside the
# floor of such a cp: writing the same bytes into a new file straight from
# memory (pwrite from a mapping populated before the clock starts), with
# one thread and with two threads writing halves (they take turns on the
# file's inode lock). A cp that writes with write(2) or copy_file_range
# cannot beat it; `ferry cp` on ext4 can, since one of its two threads
# fills the new file's mapped pages instead (page faults take no inode
# lock). Prints each median.
#
#   scripts/write-floor.sh [ROUNDS] [SIZE_MIB]      (COLD=1: no memory warming)
set -euo pipefail
rounds=${1:-7}
size=${2:-1024}
ferry=${FERRY:-target/release/ferry}
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -x "$ferry" ] || cargo build --release -p ferry-cli >/dev/null
cat > "$dir/floor.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static const char *src;
static size_t size;
static int out, threads;
static void *half(void *arg)
{
    size_t part = size / threads, from = (size_t)arg * part;
    size_t to = (size_t)arg + 1 == (size_t)threads ? size : from + part;
    for (size_t p = from; p < to;) {
        size_t n = to - p < (1 << 20) ? to - p : (1 << 20);
        ssize_t w = pwrite(out, src + p, n, (off_t)p);
        if (w <= 0) { perror("pwrite"); exit(1); }
        p += (size_t)w;
    }
    return 0;
}
int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: floor THREADS IN OUT\n"); return 2; }
    threads = atoi(argv[1]);
    int in = open(argv[2], O_RDONLY);
    struct stat st;
    if (in < 0 || fstat(in, &st) != 0) { perror(argv[2]); return 1; }
    size = (size_t)st.st_size;
    src = mmap(0, size, PROT_READ, MAP_SHARED | MAP_POPULATE, in, 0);
    if (src == MAP_FAILED) { perror("mmap"); return 1; }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    out = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) { perror(argv[3]); return 1; }
    pthread_t t[2];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], 0, half, (void *)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], 0);
    close(out);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
EOF
"$cc" -O2 -pthread "$dir/floor.c" -o "$dir/floor"
head -c $((size << 20)) /dev/urandom > "$dir/in"
secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
# This VM hands idle free memory back to its host, and the first touch of
# such a page faults in the host (~1 s per GiB written after a few idle
# seconds, against ~0.5 s right after other writes). So right before each
# run, the memory the run will fill is used once: a scratch file of the
# same size is written and removed (COLD=1 leaves that out).
fresh() {
    rm -f "$dir/out"; sync; cat "$dir/in" > /dev/null
    if [ "${COLD:-0}" != 1 ]; then
        head -c $((size << 20)) /dev/zero > "$dir/warm"; rm -f "$dir/warm"
    fi
}
declare -A T
for ((r = 0; r < rounds; r++)); do
    fresh; T[floor1]+="$("$dir/floor" 1 "$dir/in" "$dir/out") "
    fresh; T[floor2]+="$("$dir/floor" 2 "$dir/in" "$dir/out") "
    fresh; T[gnu_cp]+="$(secs cp "$dir/in" "$dir/out") "
    fresh; T[ferry_cp]+="$(secs "$ferry" cp "$dir/in" "$dir/out") "
done
. "$(dirname "$0")/medians.sh"
median_table "${size} MiB, $rounds rounds" floor1 floor2 gnu_cp ferry_cp
