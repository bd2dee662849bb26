/* cut -c1-10 FILE on the Alloc Stream Interface: line ends found with
 * memchr in the input region, the kept bytes written into one output
 * region per input region. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("cut", "FILE");
    fy_stream *in = open_in("cut", argv[1]);
    grow_out_pipe(stdout);
    long long col = 0; /* bytes of the current line seen so far */
    ssize_t len;
    const char *p;
    while ((p = next_region("cut", argv[1], in, CHUNK, &len)) && len > 0) {
        char *q = out_region("cut", "write error", stdout, len);
        char *o = q;
        const char *s = p, *end = p + len;
        while (s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t seg = (size_t)((nl ? nl : end) - s);
            if (col < 10) {
                size_t k = seg < (size_t)(10 - col) ? seg : (size_t)(10 - col);
                memcpy(o, s, k);
                o += k;
            }
            col += (long long)seg;
            if (!nl)
                break;
            *o++ = '\n';
            col = 0;
            s = nl + 1;
        }
        finish_out("cut", "write error", stdout, q, o - q);
        release("cut", argv[1], in, p);
    }
    if (col > 0) { /* GNU cut ends the last line */
        char *q = out_region("cut", "write error", stdout, 1);
        *q = '\n';
        release("cut", "write error", stdout, q);
    }
    int r = fy_sflush(stdout);
    if (r != 0)
        die("cut", "write error", -r);
    fy_sclose(in);
    return 0;
}
