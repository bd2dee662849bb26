/* cmp A B with getc on both: the first difference, as GNU cmp reports it. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        usage("cmp", "A B");
    FILE *a = fopen(argv[1], "r");
    if (!a)
        die("cmp", argv[1], errno);
    FILE *b = fopen(argv[2], "r");
    if (!b)
        die("cmp", argv[2], errno);
    long long bytes = 0, newlines = 0;
    int ca, cb, last = '\n';
    for (;;) {
        ca = getc(a);
        cb = getc(b);
        if (ca != cb || ca == EOF)
            break;
        bytes++;
        newlines += ca == '\n';
        last = ca;
    }
    if (ferror(a))
        die("cmp", argv[1], errno);
    if (ferror(b))
        die("cmp", argv[2], errno);
    if (ca == cb)
        return 0;
    if (ca == EOF || cb == EOF)
        return eof_on(ca == EOF ? argv[1] : argv[2], bytes, newlines, last == '\n');
    printf("%s %s differ: %s %lld, line %lld\n", argv[1], argv[2], cmp_unit(), bytes + 1, newlines + 1);
    return 1;
}
