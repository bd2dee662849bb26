/* The line filter on the Alloc Stream Interface: lines are found with
 * memchr in the input region and the kept ones copied straight into one
 * output region per input region. Only a line cut by a region's end is
 * gathered in a buffer of our own (one line per MiB), so pipes work too. */
#include "asi_bench.h"

struct carry {
    char *p;
    size_t len, cap;
};

static void carry_add(struct carry *c, const char *s, size_t n)
{
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n)
            cap *= 2;
        char *p = realloc(c->p, cap);
        if (!p)
            die("filter", "memory exhausted", ENOMEM);
        c->p = p;
        c->cap = cap;
    }
    memcpy(c->p + c->len, s, n);
    c->len += n;
}

/* Copies the line s[0..n) (its newline included, if any) to *o when its
 * length without the newline is even; up to a NUL, as fputs writes it
 * (looked for only when the region has one). */
static void keep(char **o, const char *s, size_t n, int nul)
{
    size_t len = n - (n > 0 && s[n - 1] == '\n');
    if (len % 2 == 0) {
        size_t k = nul ? strnlen(s, n) : n;
        memcpy(*o, s, k);
        *o += k;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("filter", "FILE");
    fy_stream *in = open_in("filter", argv[1]);
    grow_out_pipe(stdout);
    struct carry c = {0};
    ssize_t len;
    const char *p;
    while ((p = next_region("filter", argv[1], in, CHUNK, &len)) && len > 0) {
        char *q = out_region("filter", "write error", stdout, len + (ssize_t)c.len);
        char *o = q;
        const char *s = p, *end = p + len;
        int nul = memchr(p, 0, (size_t)len) != NULL;
        if (c.len > 0) { /* finish the line the last region cut */
            const char *nl = memchr(s, '\n', (size_t)len);
            const char *e = nl ? nl + 1 : end;
            carry_add(&c, s, (size_t)(e - s));
            s = e;
            if (nl) {
                keep(&o, c.p, c.len, 1);
                c.len = 0;
            }
        }
        while (s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            if (!nl) {
                carry_add(&c, s, (size_t)(end - s));
                break;
            }
            keep(&o, s, (size_t)(nl + 1 - s), nul);
            s = nl + 1;
        }
        finish_out("filter", "write error", stdout, q, o - q);
        release("filter", argv[1], in, p);
    }
    if (c.len > 0) { /* the last line, without a newline */
        char *q = out_region("filter", "write error", stdout, (ssize_t)c.len);
        char *o = q;
        keep(&o, c.p, c.len, 1);
        finish_out("filter", "write error", stdout, q, o - q);
    }
    int r = fy_sflush(stdout);
    if (r != 0)
        die("filter", "write error", -r);
    free(c.p);
    fy_sclose(in);
    return 0;
}
