/* wc FILE on the Alloc Stream Interface: the counting loop runs over the
 * stream's own bytes (a mapped file's pages), region by region: lines
 * with memchr, words with a branch-free form of the same rule. */
#include "asi_bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("wc", "FILE");
    fy_stream *in = open_in("wc", argv[1]);
    wc_classes();
    long long lines = 0, words = 0, bytes = 0;
    int in_word = 0;
    ssize_t len;
    const unsigned char *p;
    while ((p = (const unsigned char *)next_region("wc", argv[1], in, CHUNK, &len)) && len > 0) {
        bytes += len;
        lines += count_newlines((const char *)p, len);
        /* The same rule as the getc version, without branches: a word
         * byte after a non-word state starts a word. */
        unsigned state = (unsigned)in_word;
        long long starts = 0;
        for (ssize_t i = 0; i < len; i++) {
            unsigned k = wc_class[p[i]];
            unsigned w = k == WORD, s = k == SEP;
            starts += w & ~state;
            state = w | (state & ~s & 1);
        }
        words += starts;
        in_word = (int)state;
        release("wc", argv[1], in, p);
    }
    printf("%lld %lld %lld %s\n", lines, words, bytes, argv[1]);
    fy_sclose(in);
    return 0;
}
