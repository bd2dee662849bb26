/* A consumer for pipelines: reads standard input to its end (or, given
 * LIMIT, until LIMIT bytes came) by fgets, getc and fread in turn, and prints how many bytes and lines came and a
 * hash of them. On standard error: "channel yes" if this process maps a
 * ferry ipc pool (its input came through one), else "channel no". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long h = 1469598103934665603ULL, bytes, lines;
static void take(const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
        lines += p[i] == '\n';
    }
    bytes += n;
}

static int mapped_pool(void) {
    FILE *m = fopen("/proc/self/maps", "r");
    char l[512];
    int found = 0;
    if (!m) return 0;
    while (fgets(l, sizeof l, m))
        if (strstr(l, "memfd:ferry-ipc")) found = 1;
    fclose(m);
    return found;
}

int main(int argc, char **argv) {
    char buf[3000];
    int channel = 0;
    unsigned long long limit = argc > 1 ? strtoull(argv[1], 0, 10) : 0;
    for (int turn = 0; limit == 0 || bytes < limit; turn++) {
        if (turn == 1) channel = mapped_pool();
        if (turn % 3 == 0) {
            if (!fgets(buf, sizeof buf, stdin)) break;
            take(buf, strlen(buf));
        } else if (turn % 3 == 1) {
            int c = getc(stdin);
            if (c == EOF) break;
            char ch = (char)c;
            take(&ch, 1);
        } else {
            size_t n = fread(buf, 1, 1 + turn % sizeof buf, stdin);
            take(buf, n);
            if (n == 0) break;
        }
    }
    if (ferror(stdin)) return 2;
    printf("bytes %llu lines %llu hash %016llx\n", bytes, lines, h);
    fprintf(stderr, "channel %s\n", channel ? "yes" : "no");
    return 0;
}
