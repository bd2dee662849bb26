/* ASI regions on fmemopen and open_memstream streams (glibc has none).
 * fmemopen's FILE shows the cookie's contents through a view that each
 * fflush and fseek replaces: while a region points into it, both fail
 * with EBUSY and change nothing; fclose gives the regions back and then
 * hands their bytes to the buffer. open_memstream publishes what regions
 * wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ferry/asi.h>

#include "check.h"

int main(void)
{
    char mem[8] = "zzzzzzz";
    FILE *f = fmemopen(mem, sizeof mem, "w");
    CHECK(f);
    ssize_t len = 3;
    char *w = fy_salloc(f, &len);
    CHECK(w && len == 3);
    memcpy(w, "abc", 3);
    errno = 0;
    CHECK(fflush(f) == EOF && errno == EBUSY);
    CHECK(fseek(f, 0, SEEK_SET) == -1 && errno == EBUSY);
    CHECK(memcmp(mem, "zzzzzzz", 8) == 0);
    CHECK(fy_sfree(f, w) == 0);
    CHECK(fflush(f) == 0 && memcmp(mem, "abc\0zzz", 8) == 0);
    CHECK(ftell(f) == 3);
    /* A region still held at fclose: EBUSY, its bytes reach the buffer. */
    len = 2;
    w = fy_salloc(f, &len);
    CHECK(w && len == 2);
    memcpy(w, "de", 2);
    CHECK(fclose(f) == EOF && errno == EBUSY);
    CHECK(memcmp(mem, "abcde\0z", 8) == 0);

    /* Reading through a region. */
    f = fmemopen(mem, 5, "r");
    CHECK(f);
    len = 2;
    const char *r = fy_salloc(f, &len);
    CHECK(r && len == 2 && memcmp(r, "ab", 2) == 0);
    CHECK(fseek(f, 4, SEEK_SET) == -1 && errno == EBUSY);
    CHECK(fy_sfree(f, r) == 0);
    CHECK(fseek(f, 4, SEEK_SET) == 0 && getc(f) == 'e' && getc(f) == EOF);
    CHECK(fclose(f) == 0);

    /* open_memstream: the size is where the region left the offset. */
    char *buf = NULL;
    size_t size = 99;
    FILE *ms = open_memstream(&buf, &size);
    CHECK(ms && buf == NULL && size == 99);
    len = 4;
    w = fy_salloc(ms, &len);
    CHECK(w && len == 4);
    memcpy(w, "memo", 4);
    CHECK(fy_sfree(ms, w) == 0);
    CHECK(fflush(ms) == 0 && size == 4 && strcmp(buf, "memo") == 0);
    CHECK(fclose(ms) == 0 && size == 4 && strcmp(buf, "memo") == 0);
    free(buf);
    printf("ok\n");
    return 0;
}
