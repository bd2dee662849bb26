/* cp SRC DST on the Alloc Stream Interface: one copy, region to region. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        usage("cp", "SRC DST");
    fy_stream *in = open_in("cp", argv[1]);
    int err;
    fy_stream *out = fy_sopen(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0666, &err);
    if (!out)
        die("cp", argv[2], -err);
    ssize_t len;
    const char *p;
    while ((p = next_region("cp", argv[1], in, CHUNK, &len)) && len > 0) {
        char *q = out_region("cp", argv[2], out, len);
        memcpy(q, p, (size_t)len);
        release("cp", argv[2], out, q);
        release("cp", argv[1], in, p);
    }
    int r = fy_sclose(out);
    if (r != 0)
        die("cp", argv[2], -r);
    fy_sclose(in);
    return 0;
}
