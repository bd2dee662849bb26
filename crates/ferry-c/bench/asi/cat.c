/* cat FILE on the Alloc Stream Interface: each region of the input is
 * copied once, straight into a region of standard output. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("cat", "FILE");
    fy_stream *in = open_in("cat", argv[1]);
    grow_out_pipe(stdout);
    ssize_t len;
    const char *p;
    while ((p = next_region("cat", argv[1], in, CHUNK, &len)) && len > 0) {
        char *q = out_region("cat", "write error", stdout, len);
        memcpy(q, p, (size_t)len);
        release("cat", "write error", stdout, q);
        release("cat", argv[1], in, p);
    }
    int r = fy_sflush(stdout);
    if (r != 0)
        die("cat", "write error", -r);
    fy_sclose(in);
    return 0;
}
