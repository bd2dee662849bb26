/* ferry/buf.h: buffers, slices, references, regions kept as buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <ferry/buf.h>

#include "check.h"

int main(void)
{
    fy_bufmut *m = fy_bufmut_new(10000);
    size_t room = 0;
    unsigned char *p = fy_bufmut_spare(m, &room);
    CHECK(p && room >= 10000 && ((uintptr_t)p & 4095) == 0);
    memcpy(p, "hello", 5);
    CHECK(fy_bufmut_commit(m, 5) == 0);
    CHECK(fy_bufmut_commit(m, room) == -1 && errno == EINVAL);
    CHECK(fy_bufmut_append(m, " world", 6) == 0 && fy_bufmut_len(m) == 11);
    fy_buf *b = fy_bufmut_freeze(m);
    CHECK(fy_buf_len(b) == 11 && memcmp(fy_buf_data(b), "hello world", 11) == 0);
    fy_buf *s = fy_buf_slice(b, 6, 5);
    CHECK(s && fy_buf_len(s) == 5 && fy_buf_data(s) == fy_buf_data(b) + 6);
    CHECK(fy_buf_shares(s, b));
    CHECK(fy_buf_slice(b, 6, 6) == NULL && errno == EINVAL);
    fy_buf *c = fy_buf_clone(s);
    fy_buf_release(b);
    fy_buf_release(s);
    CHECK(memcmp(fy_buf_data(c), "world", 5) == 0);
    fy_buf_release(c);
    fy_buf *k = fy_buf_copy("copy", 4);
    CHECK(fy_buf_len(k) == 4 && !fy_buf_shares(k, k) == 0);
    fy_buf_release(k);

    /* A region of a stream kept as a buffer after the stream is closed. */
    FILE *f = fopen("data", "w");
    for (int i = 0; i < 100000; i++)
        putc('a' + i % 26, f);
    fclose(f);
    int err;
    fy_stream *st = fy_sopen("data", O_RDONLY, 0, &err);
    ssize_t len = 50000;
    void *r = fy_salloc(st, &len);
    CHECK(r && len == 50000);
    fy_buf *kept = fy_region_to_buf(st, r);
    CHECK(kept && fy_buf_data(kept) == r && fy_buf_len(kept) == 50000);
    CHECK(fy_sfree(st, r) == -EINVAL); /* already given up */
    CHECK(fy_sclose(st) == 0);
    CHECK(fy_buf_data(kept)[0] == 'a' && fy_buf_data(kept)[49999] == 'a' + 49999 % 26);
    fy_buf_release(kept);
    printf("ok\n");
    return 0;
}
