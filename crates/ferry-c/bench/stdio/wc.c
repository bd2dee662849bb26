/* wc FILE: lines, words and bytes with getc (GNU's counts, C locale). */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("wc", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("wc", argv[1], errno);
    wc_classes();
    long long lines = 0, words = 0, bytes = 0;
    int in_word = 0, c;
    while ((c = getc(in)) != EOF) {
        bytes++;
        lines += c == '\n';
        unsigned char k = wc_class[c];
        if (k == WORD) {
            words += !in_word;
            in_word = 1;
        } else if (k == SEP) {
            in_word = 0;
        }
    }
    if (ferror(in))
        die("wc", argv[1], errno);
    printf("%lld %lld %lld %s\n", lines, words, bytes, argv[1]);
    return 0;
}
