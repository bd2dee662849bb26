/* fread in 1 KiB pieces rewritten on the Alloc Stream Interface: each
 * piece is a region of the stream, not a copy. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("fread1k", "FILE");
    fy_stream *in = open_in("fread1k", argv[1]);
    long long bytes = 0;
    unsigned sum = 0;
    ssize_t n;
    const unsigned char *p;
    while ((p = (const unsigned char *)next_region("fread1k", argv[1], in, 1024, &n)) && n > 0) {
        bytes += n;
        sum += p[0] + p[n - 1];
        release("fread1k", argv[1], in, p);
    }
    printf("%lld %u\n", bytes, sum);
    fy_sclose(in);
    return 0;
}
