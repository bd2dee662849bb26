/* An unbuffered input stream reads no further than asked: each getc,
 * fgets, getline and fread leaves the descriptor's offset just past what
 * it returned, so a shell command run in between reads on from there —
 * what GNU ed relies on (setvbuf(stdin, _IONBF) and `!read` in a script).
 * Standard input is a regular file and then a pipe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>

static const char input[] =
    "first line for getc\n"
    "taken by the shell 1\n"
    "second line for fgets\n"
    "taken by the shell 2\n"
    "third line for getline\n"
    "taken by the shell 3\n"
    "fread12bytesXtaken by the shell 4\n"
    "last line\n";

static void shell(void)
{
    fflush(stdout);
    if (system("read -r x; echo \"  shell read: $x\"") != 0)
        printf("  system failed\n");
}

static void reader(void)
{
    setvbuf(stdin, NULL, _IONBF, 0);
    int c;
    printf("  getc: ");
    while ((c = getchar()) != EOF && c != '\n')
        putchar(c);
    printf("\n");
    shell();
    char buf[100];
    printf("  fgets: %s", fgets(buf, sizeof buf, stdin));
    shell();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    printf("  getline %zd: %s", n, line);
    free(line);
    shell();
    size_t k = fread(buf, 1, 12, stdin);
    printf("  fread %zu: %.12s\n", k, buf);
    c = getchar();
    printf("  then getc: %c\n", c);
    shell();
    printf("  ftell %ld\n", ftell(stdin));
    printf("  rest: %s", fgets(buf, sizeof buf, stdin));
    printf("  eof: %d\n", getchar() == EOF && feof(stdin));
    fflush(stdout);
    _exit(0);
}

int main(int argc, char **argv)
{
    (void)argc;
    char path[4096];
    snprintf(path, sizeof path, "%s/input", argv[1]);
    FILE *f = fopen(path, "w");
    fputs(input, f);
    fclose(f);
    for (int as_pipe = 0; as_pipe < 2; as_pipe++) {
        printf("%s:\n", as_pipe ? "a pipe" : "a regular file");
        fflush(stdout);
        int p[2] = {-1, -1};
        if (as_pipe && pipe(p) != 0)
            return 1;
        pid_t pid = fork();
        if (pid == 0) {
            int fd = as_pipe ? p[0] : open(path, O_RDONLY);
            dup2(fd, 0);
            close(fd);
            if (as_pipe)
                close(p[1]);
            reader();
        }
        if (as_pipe) {
            close(p[0]);
            if (write(p[1], input, strlen(input)) < 0)
                return 1;
            close(p[1]);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("  exit %d\n", WEXITSTATUS(st));
    }
    return 0;
}
