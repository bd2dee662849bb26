/* freopen gives the old stream's regions back. It kept the old stream's
 * region table: a region of the old stream freed after freopen was
 * rebuilt on the new stream and returned a lease of the new stream's
 * buffer with the same slot number, so that buffer was freed (unmapped)
 * while a live region of the new stream pointed into it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ferry/asi.h>
#include <ferry/buf.h>
#include "../ferry-only/check.h"

static void make(const char *path, char c1, char c2) {
    FILE *w = fopen(path, "w");
    CHECK(w);
    for (int i = 0; i < (2 << 20); i++) fputc(i < (256 << 10) ? c1 : c2, w);
    CHECK(fclose(w) == 0);
}

int main(void) {
    make("a", 'A', 'A');
    make("b", 'B', 'C');
    /* The old stream's buffer is kept alive by a fy_buf made from its
     * first region, so the pool cannot hand the same memory to the new
     * stream: p (the second region, still allocated) then points at
     * nothing the new stream owns. */
    FILE *f = fopen("a", "r+");
    CHECK(f);
    CHECK(fy_set_stream_mode(f, FY_READ) == 0);
    ssize_t n = 16;
    char *h = fy_salloc(f, &n);
    CHECK(h && n == 16);
    fy_buf *hold = fy_region_to_buf(f, h);
    CHECK(hold);
    n = 16;
    char *p = fy_salloc(f, &n);           /* old stream, slot 0 */
    CHECK(p && n == 16 && p[0] == 'A');
    CHECK(freopen("b", "r", f) == f);
    n = 16;
    char *q = fy_salloc(f, &n);           /* new stream, slot 0 */
    CHECK(q && n == 16 && q[0] == 'B');
    char keep[16];
    memcpy(keep, q, 16);
    n = 16;
    char *r = fy_sallocat(f, &n, 1 << 20, SEEK_SET); /* slot 1; slot 0 retired, leased by q */
    CHECK(r && n == 16 && r[0] == 'C');
    /* The old region went with the old stream (freopen gives it back):
     * unknown now, so EINVAL, which the held buffer makes sure is not the
     * memory of one of the new stream's regions. */
    CHECK(p != q && p != r);
    {
        int e = fy_sfree(f, p);
        fprintf(stderr, "sfree(old region) = %d\n", e);
        CHECK(e == -EINVAL);
    }
    n = 16;
    char *t = fy_sallocat(f, &n, 1500 << 10, SEEK_SET); /* more fills reuse memory */
    CHECK(t);
    /* q is live: its bytes must not change (or vanish). */
    CHECK(memcmp(keep, q, 16) == 0);
    CHECK(fy_sfree(f, q) == 0);
    fy_buf_release(hold);
    printf("ok\n");
    return 0;
}
