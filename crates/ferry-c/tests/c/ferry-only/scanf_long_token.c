/* fscanf over a long token. ferry's scanf (csrc/format.c
 * fy__vfscanf_c) scans what is buffered and, if the scan used all of it,
 * asks for avail + 1 bytes and scans everything again. On a mapped file a
 * window past 1 MiB is exactly as long as asked, so a token longer than
 * 1 MiB grows the view ONE byte per round, each round mapping and
 * rescanning all of it: quadratic, a hang on hostile input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../ferry-only/check.h"

int main(void) {
    size_t len = (1 << 20) + (64 << 10); /* a 1.06 MiB word */
    FILE *w = fopen("word", "w");
    CHECK(w);
    for (size_t i = 0; i < len; i++) fputc('a', w);
    fputs(" 42\n", w);
    CHECK(fclose(w) == 0);
    FILE *f = fopen("word", "r");
    CHECK(f);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int n = 0;
    CHECK(fscanf(f, "%*s %d", &n) == 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    fprintf(stderr, "fscanf took %.2f s\n", s);
    CHECK(n == 42);
    printf("ok\n");
    return 0;
}
