/* Writes standard output through stdio and beside it, as programs that
 * run children do: per round, LINES lines by printf (flushed), the output
 * of COMMAND run by system() (skipped when COMMAND is empty), a line by
 * write(2) on descriptor 1, a line left in the buffer for the next flush,
 * then (with FORK_LINES) a forked child that prints FORK_LINES lines by
 * printf and exits, and a pause of PAUSE_US microseconds. Every byte
 * written beside the stream follows a flush, so the order of the output
 * is the same for any buffer size.
 * Usage: pipe_beside COMMAND ROUNDS LINES [PAUSE_US [FORK_LINES]] */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    const char *cmd = argv[1];
    int rounds = atoi(argv[2]);
    long lines = atol(argv[3]);
    long pause_us = argc > 4 ? atol(argv[4]) : 0;
    long fork_lines = argc > 5 ? atol(argv[5]) : 0;
    for (int r = 0; r < rounds; r++) {
        for (long i = 0; i < lines; i++) printf("round %d line %ld\n", r, i);
        if (fflush(stdout) != 0) return 3;
        if (fork_lines > 0) {
            pid_t p = fork();
            if (p < 0) return 7;
            if (p == 0) {
                for (long i = 0; i < fork_lines; i++) printf("child %d line %ld\n", r, i);
                exit(fclose(stdout) == 0 ? 0 : 1);
            }
            int st;
            if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 8;
        }
        if (*cmd && system(cmd) != 0) return 4;
        char raw[64];
        int n = snprintf(raw, sizeof raw, "wrote %d by write(2)\n", r);
        if (write(1, raw, (size_t)n) != n) return 5;
        printf("after %d\n", r);
        if (pause_us > 0) usleep((useconds_t)pause_us);
    }
    return fclose(stdout) == 0 ? 0 : 6;
}
