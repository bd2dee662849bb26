/* The getc loop rewritten on the Alloc Stream Interface: the same count
 * over each region of the file in place. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("getc", "FILE");
    fy_stream *in = open_in("getc", argv[1]);
    long long bytes = 0, lines = 0;
    ssize_t len;
    const char *p;
    while ((p = next_region("getc", argv[1], in, CHUNK, &len)) && len > 0) {
        bytes += len;
        lines += count_newlines(p, len);
        release("getc", argv[1], in, p);
    }
    printf("%lld %lld\n", bytes, lines);
    fy_sclose(in);
    return 0;
}
