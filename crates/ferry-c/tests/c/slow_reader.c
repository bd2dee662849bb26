/* Copies standard input to standard output by getc, pausing PAUSE_US
 * microseconds after each line that begins with the byte MARK (a reader
 * that drains its pipe, then is busy while its writer goes on). On
 * standard error: "channel yes" if this process maps a ferry ipc pool.
 * Usage: slow_reader PAUSE_US MARK */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    if (argc != 3) return 2;
    long pause_us = atol(argv[1]);
    int mark = argv[2][0];
    int c, first = -1, channel = 0;
    long n = 0;
    while ((c = getc(stdin)) != EOF) {
        if (n++ == 0) channel = mapped_pool();
        if (first < 0) first = c;
        putchar(c);
        if (c == '\n') {
            if (first == mark && pause_us > 0) {
                if (fflush(stdout) != 0) return 3;
                usleep((useconds_t)pause_us);
            }
            first = -1;
        }
    }
    if (ferror(stdin)) return 4;
    fprintf(stderr, "channel %s\n", channel ? "yes" : "no");
    return fclose(stdout) == 0 ? 0 : 5;
}
