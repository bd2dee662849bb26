/* A file into standard output (a pipe) by splice, as ferry cat and uutils
 * cat do: "staged" through a private 1 MiB pipe, or "direct"; CHUNK bytes
 * per call (default 1 MiB). docs/BENCHMARKS.md, "asf: cat | reader against
 * uutils, a tie at the kernel's splice" (2026-11-25, 2e28fee).
 *   cc -O2 -static -o /tmp/splice-floor scripts/probes/splice-floor.c
 *   scripts/pipe-side-by-side.py 11 "staged|/tmp/splice-floor staged FILE" ...  */
#define _GNU_SOURCE
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int fd = open(argv[2], O_RDONLY);
    long chunk = argc > 3 ? atol(argv[3]) : (1 << 20);
    fcntl(1, F_SETPIPE_SZ, 1 << 20);
    if (!strcmp(argv[1], "direct")) {
        while (splice(fd, 0, 1, 0, chunk, 0) > 0) ;
    } else {
        int p[2]; pipe(p); fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
        ssize_t n;
        while ((n = splice(fd, 0, p[1], 0, chunk, 0)) > 0)
            while (n > 0) n -= splice(p[0], 0, 1, 0, n, 0);
    }
    return 0;
}
