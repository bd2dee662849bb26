/* fread in 1 KiB pieces: bytes of FILE and a sum of each piece's ends. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("fread1k", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("fread1k", argv[1], errno);
    char buf[1024];
    size_t n;
    long long bytes = 0;
    unsigned sum = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        bytes += n;
        sum += (unsigned char)buf[0] + (unsigned char)buf[n - 1];
    }
    if (ferror(in))
        die("fread1k", argv[1], errno);
    printf("%lld %u\n", bytes, sum);
    return 0;
}
