/* cut -c1-10 FILE (bytes, as GNU cut in the C locale) with getc and putc. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("cut", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("cut", argv[1], errno);
    long long col = 0;
    int c;
    while ((c = getc(in)) != EOF) {
        if (c == '\n') {
            putc('\n', stdout);
            col = 0;
        } else if (++col <= 10) {
            putc(c, stdout);
        }
    }
    if (ferror(in))
        die("cut", argv[1], errno);
    if (col > 0) /* GNU cut ends the last line */
        putc('\n', stdout);
    if (fflush(stdout) != 0)
        die("cut", "write error", errno);
    return 0;
}
