/* The getc loop: bytes and newlines of FILE. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("getc", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("getc", argv[1], errno);
    long long bytes = 0, lines = 0;
    int c;
    while ((c = getc(in)) != EOF) {
        bytes++;
        lines += c == '\n';
    }
    if (ferror(in))
        die("getc", argv[1], errno);
    printf("%lld %lld\n", bytes, lines);
    return 0;
}
