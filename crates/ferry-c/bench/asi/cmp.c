/* cmp A B on the Alloc Stream Interface: memcmp of the two files' regions
 * in place. Lines are counted only when a difference or an early end has
 * to be reported, by reading A again — or as we go when A is a pipe. */
#include <unistd.h>
#include "asi_bench.h"

/* Newlines in the first `n` bytes of `s`, and whether byte n is one. */
static long long newlines_before(const char *name, fy_stream *s, long long n, int *last_nl)
{
    long long count = 0, done = 0;
    *last_nl = 1;
    ssize_t len = n < CHUNK ? (ssize_t)n : CHUNK;
    const char *p = fy_sallocat(s, &len, 0, SEEK_SET);
    while (done < n) {
        if (!p)
            die("cmp", name, (int)-len);
        if (len == 0)
            break;
        count += count_newlines(p, len);
        *last_nl = p[len - 1] == '\n';
        done += len;
        release("cmp", name, s, p);
        if (done < n) {
            len = n - done < CHUNK ? (ssize_t)(n - done) : CHUNK;
            p = fy_salloc(s, &len);
        }
    }
    return count;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        usage("cmp", "A B");
    fy_stream *a = open_in("cmp", argv[1]);
    fy_stream *b = open_in("cmp", argv[2]);
    /* A pipe cannot be read again: count its lines as they pass. */
    int eager = lseek(fileno(a), 0, SEEK_CUR) < 0;
    long long offset = 0, seen_nl = 0;
    int seen_last_nl = 1;
    for (;;) {
        ssize_t la, lb;
        const char *pa = next_region("cmp", argv[1], a, CHUNK, &la);
        const char *pb = next_region("cmp", argv[2], b, CHUNK, &lb);
        ssize_t n = la < lb ? la : lb;
        if (memcmp(pa, pb, (size_t)n) != 0) {
            ssize_t i = 0;
            while (pa[i] == pb[i])
                i++;
            int last_nl;
            long long at = offset + i;
            long long nl = eager ? seen_nl + count_newlines(pa, i) : 0;
            if (la)
                release("cmp", argv[1], a, pa);
            if (lb)
                release("cmp", argv[2], b, pb);
            if (!eager)
                nl = newlines_before(argv[1], a, at, &last_nl);
            printf("%s %s differ: %s %lld, line %lld\n", argv[1], argv[2], cmp_unit(), at + 1, nl + 1);
            return 1;
        }
        offset += n;
        if (eager && n > 0) {
            seen_nl += count_newlines(pa, n);
            seen_last_nl = pa[n - 1] == '\n';
        }
        if (la)
            release("cmp", argv[1], a, pa);
        if (lb)
            release("cmp", argv[2], b, pb);
        if (la != lb) {
            int last_nl = seen_last_nl;
            long long nl = eager ? seen_nl : newlines_before(argv[1], a, offset, &last_nl);
            return eof_on(la < lb ? argv[1] : argv[2], offset, nl, last_nl);
        }
        if (la == 0)
            return 0;
    }
}
