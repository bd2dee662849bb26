#!/usr/bin/env bash
# The kernel paths a large cp can take on this machine, timed alone and in
# the pair `ferry cp` runs on its two cores, beside GNU cp and `ferry cp`:
#
#   cfr        copy_file_range in 8 MiB pieces, front to back (GNU cp's path)
#   map        pread into a shared writable mapping of the fallocated output,
#              8 MiB pieces taken from the back (ferry's second thread)
#   map_huge   the same with MADV_HUGEPAGE on each mapping
#   pair       cfr from the front and map from the back on two threads,
#              meeting where their speeds put them
#   pair_huge  the same with MADV_HUGEPAGE (what `ferry cp` does:
#              docs/BENCHMARKS.md, "cp: why two threads, and why huge
#              pages" (2026-11-23, 715aaa7))
#
# Every figure is a whole command's time (/usr/bin/time), interleaved
# rounds, page cache warm and memory warmed as in write-floor.sh. Run it
# under scripts/hold-memory.sh on a VM with free page reporting.
#
#   scripts/cp-paths.sh [ROUNDS] [SIZE_MIB] [SHORT_BYTES]
#
# SHORT_BYTES makes the input that many bytes shorter than SIZE_MIB MiB, so
# that piece boundaries counted from the end fall off 2 MiB boundaries.
set -euo pipefail
rounds=${1:-5}
size=${2:-1024}
short=${3:-0}
ferry=${FERRY:-target/release/ferry}
cc=${CC:-cc}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -x "$ferry" ] || cargo build --release -p ferry-cli >/dev/null
cat > "$dir/paths.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define PIECE ((size_t)8 << 20)
static int in, out, huge;
static size_t front, back;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void die(const char *what) { perror(what); exit(1); }
/* The next piece from the front or the back; 0 when they have met. */
static size_t take(int from_back, size_t *at)
{
    pthread_mutex_lock(&mu);
    size_t n = 0;
    if (front < back) {
        n = from_back && back % PIECE ? back % PIECE : PIECE;
        if (n > back - front) n = back - front;
        if (from_back) { back -= n; *at = back; } else { *at = front; front += n; }
    }
    pthread_mutex_unlock(&mu);
    return n;
}
static void *by_cfr(void *arg)
{
    (void)arg;
    size_t at, n;
    while ((n = take(0, &at))) {
        loff_t a = (loff_t)at, b = (loff_t)at;
        while (n) {
            ssize_t r = copy_file_range(in, &a, out, &b, n, 0);
            if (r <= 0) die("copy_file_range");
            n -= (size_t)r;
        }
    }
    return 0;
}
static void *by_map(void *arg)
{
    (void)arg;
    size_t at, n;
    while ((n = take(1, &at))) {
        char *m = mmap(0, n, PROT_READ | PROT_WRITE, MAP_SHARED, out, (off_t)at);
        if (m == MAP_FAILED) die("mmap");
        if (huge) madvise(m, n, MADV_HUGEPAGE);
        for (size_t q = 0; q < n;) {
            ssize_t r = pread(in, m + q, n - q, (off_t)(at + q));
            if (r <= 0) die("pread");
            q += (size_t)r;
        }
        munmap(m, n);
    }
    return 0;
}
int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: paths cfr|map|map_huge|pair|pair_huge IN OUT\n"); return 2; }
    const char *how = argv[1];
    huge = strstr(how, "huge") != 0;
    struct stat st;
    if ((in = open(argv[2], O_RDONLY)) < 0 || fstat(in, &st)) die(argv[2]);
    back = (size_t)st.st_size;
    if ((out = open(argv[3], O_RDWR | O_CREAT | O_TRUNC, 0644)) < 0) die(argv[3]);
    if (strcmp(how, "cfr") && fallocate(out, 0, 0, st.st_size)) die("fallocate");
    if (!strcmp(how, "cfr")) by_cfr(0);
    else if (!strncmp(how, "map", 3)) by_map(0);
    else {
        pthread_t t;
        if (pthread_create(&t, 0, by_map, 0)) die("pthread_create");
        by_cfr(0);
        pthread_join(t, 0);
    }
    return close(out) ? 1 : 0;
}
EOF
"$cc" -O2 -pthread "$dir/paths.c" -o "$dir/paths"
head -c $(((size << 20) - short)) /dev/urandom > "$dir/in"
secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
fresh() {
    rm -f "$dir/out"; sync; cat "$dir/in" > /dev/null
    if [ "${COLD:-0}" != 1 ]; then
        head -c $((size << 20)) /dev/zero > "$dir/warm"; rm -f "$dir/warm"
    fi
}
ways=(cfr map map_huge pair pair_huge)
declare -A T
for ((r = 0; r < rounds; r++)); do
    for w in "${ways[@]}"; do
        fresh; T[$w]+="$(secs "$dir/paths" "$w" "$dir/in" "$dir/out") "
        cmp -s "$dir/in" "$dir/out" || { echo "$w: the copy differs" >&2; exit 1; }
    done
    fresh; T[gnu_cp]+="$(secs cp "$dir/in" "$dir/out") "
    fresh; T[ferry_cp]+="$(secs "$ferry" cp "$dir/in" "$dir/out") "
done
. "$(dirname "$0")/medians.sh"
median_table "${size} MiB - $short B, $rounds rounds" "${ways[@]}" gnu_cp ferry_cp
