/* A line filter with getline and fputs: the lines of even length. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("filter", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("filter", argv[1], errno);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, in)) > 0) {
        size_t len = (size_t)n - (line[n - 1] == '\n');
        if (len % 2 == 0 && fputs(line, stdout) == EOF)
            die("filter", "write error", errno);
    }
    if (ferror(in))
        die("filter", argv[1], errno);
    if (fflush(stdout) != 0)
        die("filter", "write error", errno);
    free(line);
    return 0;
}
