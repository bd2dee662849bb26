/* Line buffering on a terminal: run under a pseudo-terminal, stdout and
 * stderr share it, and the order of what appears shows the buffering:
 * stdout flushed at each newline, stderr at once. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    printf("isatty %d %d\n", isatty(1), isatty(2));
    printf("line one\n");
    fprintf(stderr, "err one\n");
    printf("partial ");
    fprintf(stderr, "err two\n");
    printf("end\n");
    putchar('c');
    fputs(" by putc", stderr);
    putchar('\n');
    FILE *t = fopen("/dev/tty", "w");
    if (t) {
        fputs("to /dev/tty ", t);
        fprintf(stderr, "[stderr before tty newline]");
        fputs("newline\n", t);
        fclose(t);
    }
    printf("no newline at exit");
    return 0;
}
