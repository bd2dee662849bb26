/* The floor of cmp on two files in the page cache: two threads, each
 * pread-ing its half of both files into two page-aligned buffers, PIECE
 * bytes at a time, and memcmp-ing them. docs/BENCHMARKS.md, "asf: cmp on
 * 4 KiB pages, at the floor of pread" (2026-11-25, 2e28fee).
 *   cc -O2 -pthread -o /tmp/cmp-floor scripts/probes/cmp-floor.c
 *   /tmp/cmp-floor A B PIECE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <pthread.h>
static int fa, fb; static size_t chunk; static off_t size;
static void *run(void *arg) {
    long k = (long)arg; off_t half = size / 2;
    off_t from = k ? half : 0, to = k ? size : half;
    char *a = aligned_alloc(4096, chunk), *b = aligned_alloc(4096, chunk);
    for (off_t o = from; o < to; o += chunk) {
        size_t n = to - o < (off_t)chunk ? to - o : chunk;
        pread(fa, a, n, o); pread(fb, b, n, o);
        if (memcmp(a, b, n)) { puts("differ"); exit(1); }
    }
    return 0;
}
int main(int argc, char **argv) {
    fa = open(argv[1], O_RDONLY); fb = open(argv[2], O_RDONLY); chunk = atol(argv[3]);
    size = lseek(fa, 0, SEEK_END);
    pthread_t t; pthread_create(&t, 0, run, (void*)1); run(0); pthread_join(t, 0);
    return 0;
}
