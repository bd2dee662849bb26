/* One thread reads a whole file by pread into a reused buffer, or by
 * mapping windows of it (optionally populated with MADV_POPULATE_READ),
 * touching every cache line; prints the time. docs/BENCHMARKS.md, "asf:
 * why mapping loses on 4 KiB pages" (2026-11-25, 2e28fee): the per-page
 * cost of mapping a file in 4 KiB pages.
 *   cc -O2 -o /tmp/map-probe scripts/probes/map-vs-pread.c
 *   /tmp/map-probe pread|mmap|populate FILE WINDOW_BYTES */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char **argv) {
    int fd = open(argv[2], O_RDONLY);
    size_t win = atol(argv[3]);
    off_t size = lseek(fd, 0, SEEK_END);
    volatile unsigned long acc = 0;
    double t = now();
    char *buf = aligned_alloc(4096, win);
    for (off_t o = 0; o < size; o += win) {
        const unsigned long *p;
        char *m = 0;
        if (!strcmp(argv[1], "pread")) { pread(fd, buf, win, o); p = (void*)buf; }
        else {
            m = mmap(0, win, PROT_READ, MAP_SHARED, fd, o);
            if (!strcmp(argv[1], "populate")) madvise(m, win, MADV_POPULATE_READ);
            p = (void*)m;
        }
        unsigned long a = 0;
        for (size_t i = 0; i < win/8; i += 8) a += p[i];  /* touch every 64B line */
        acc += a;
        if (m) munmap(m, win);
    }
    printf("%s %zu: %.2f ms\n", argv[1], win, (now()-t)*1e3);
    return 0;
}
