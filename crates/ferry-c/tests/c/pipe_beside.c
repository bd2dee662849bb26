/* Writes standard output through stdio and beside it, as programs that
 * run children do: per round, LINES lines by printf (flushed), the output
 * of COMMAND run by system() (skipped when COMMAND is empty), a line by
 * write(2) on descriptor 1, and a line left in the buffer for the next
 * flush. Every byte written beside the stream follows a flush, so the
 * order of the output is the same for any buffer size.
 * Usage: pipe_beside COMMAND ROUNDS LINES */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    const char *cmd = argv[1];
    int rounds = atoi(argv[2]);
    long lines = atol(argv[3]);
    for (int r = 0; r < rounds; r++) {
        for (long i = 0; i < lines; i++) printf("round %d line %ld\n", r, i);
        if (fflush(stdout) != 0) return 3;
        if (*cmd && system(cmd) != 0) return 4;
        char raw[64];
        int n = snprintf(raw, sizeof raw, "raw %d\n", r);
        if (write(1, raw, (size_t)n) != n) return 5;
        printf("after %d\n", r);
    }
    return fclose(stdout) == 0 ? 0 : 6;
}
