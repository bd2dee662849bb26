/* Forks before either process reads standard input. The child reads one
 * line, prints it and leaves with _exit (no exit handlers); then the
 * parent reads the rest by fread and prints how many bytes came. On
 * standard error: "channel yes" if the parent maps a ferry ipc pool. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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

int main(void) {
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) return 3;
    if (p == 0) {
        char line[256];
        if (fgets(line, sizeof line, stdin)) fputs(line, stdout);
        fflush(stdout);
        _exit(0);
    }
    int st;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 4;
    static char buf[65536];
    unsigned long long bytes = 0;
    size_t n;
    int channel = 0;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        bytes += n;
        if (!channel) channel = mapped_pool();
    }
    if (ferror(stdin)) return 2;
    printf("parent %llu\n", bytes);
    fprintf(stderr, "channel %s\n", channel ? "yes" : "no");
    return 0;
}
