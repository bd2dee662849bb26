/* Impossible sizes fail with NULL / -1 / 0 and errno; nothing panics or
 * aborts, and the program goes on normally afterwards. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <unistd.h>
#include <ferry/asi.h>
#include <ferry/buf.h>

#include "check.h"

static char buf_for_fmem[16];

/* A region request: NULL with *len = -e and errno e, or a region. */
static void salloc_fails(fy_stream *s, int mode, ssize_t want, int e)
{
    ssize_t len = want;
    errno = 0;
    void *p = fy_Salloc(s, mode, &len);
    if (p) {
        fprintf(stderr, "salloc(%zd) in mode %d gave %zd bytes\n", want, mode, len);
        exit(1);
    }
    if (len != -e || errno != e) {
        fprintf(stderr, "salloc(%zd) in mode %d: len %zd errno %d, want %d\n", want, mode, len,
                errno, e);
        exit(1);
    }
}

int main(void)
{
    /* Buffers: malloc's rule, NULL with ENOMEM. */
    errno = 0;
    CHECK(fy_bufmut_new(SIZE_MAX) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(fy_bufmut_new(PTRDIFF_MAX) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(fy_bufmut_new((size_t)PTRDIFF_MAX + 1) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(fy_bufmut_new(SIZE_MAX - 4095) == NULL && errno == ENOMEM);
    fy_bufmut *m = fy_bufmut_new(16);
    CHECK(m != NULL);
    CHECK(fy_bufmut_append(m, "abc", 3) == 0);
    errno = 0;
    /* Growing past any possible size: -1 with ENOMEM, the bytes stay. */
    CHECK(fy_bufmut_append(m, "x", SIZE_MAX) == -1 && errno == ENOMEM);
    CHECK(fy_bufmut_append(m, "x", PTRDIFF_MAX) == -1 && errno == ENOMEM);
    CHECK(fy_bufmut_len(m) == 3);
    errno = 0;
    CHECK(fy_buf_copy("x", SIZE_MAX) == NULL && errno == ENOMEM);
    fy_buf *b = fy_bufmut_freeze(m);
    CHECK(b && fy_buf_len(b) == 3 && memcmp(fy_buf_data(b), "abc", 3) == 0);
    fy_buf_release(b);

    /* Regions: a negative length (SIZE_MAX or PTRDIFF_MAX + 1 through
     * ssize_t) is EINVAL; a length no memory can hold is ENOMEM. */
    FILE *w = fopen("regions", "w+");
    CHECK(w != NULL);
    CHECK(fputs("some bytes\n", w) >= 0);
    salloc_fails(w, FY_WRITE, (ssize_t)SIZE_MAX, EINVAL);
    salloc_fails(w, FY_WRITE, (ssize_t)((size_t)PTRDIFF_MAX + 1), EINVAL);
    /* At offset 11, PTRDIFF_MAX more bytes pass the largest file offset:
     * EFBIG, as write(2) says past the largest file size. */
    salloc_fails(w, FY_WRITE, PTRDIFF_MAX, EFBIG);
    salloc_fails(w, FY_WRITE, PTRDIFF_MAX - 4095, ENOMEM);
    salloc_fails(w, FY_WRITE, (ssize_t)1 << 62, ENOMEM);
    salloc_fails(w, FY_READ, (ssize_t)SIZE_MAX, EINVAL);
    salloc_fails(w, FY_READ, (ssize_t)((size_t)PTRDIFF_MAX + 1), EINVAL);
    /* A read region of PTRDIFF_MAX bytes is the rest of the file. */
    CHECK(fseek(w, 0, SEEK_SET) == 0);
    ssize_t len = PTRDIFF_MAX;
    char *p = fy_Salloc(w, FY_READ, &len);
    CHECK(p && len == 11 && memcmp(p, "some bytes\n", 11) == 0);
    CHECK(fy_sfree(w, p) == 0);
    /* The stream still works. */
    CHECK(fseek(w, 0, SEEK_END) == 0);
    CHECK(fputs("more\n", w) >= 0);
    CHECK(fflush(w) == 0);

    /* Growing a write region past any size. */
    len = 4;
    CHECK(fseek(w, 0, SEEK_END) == 0);
    p = fy_Salloc(w, FY_WRITE, &len);
    CHECK(p && len == 4);
    memcpy(p, "tail", 4);
    len = PTRDIFF_MAX - 4095;
    errno = 0;
    CHECK(fy_srealloc(w, p, &len) == NULL && len == -ENOMEM && errno == ENOMEM);
    CHECK(fy_sfree(w, p) == 0);

    /* A pipe: a region of the next PTRDIFF_MAX bytes would have to hold
     * them all at once (a pipe cannot be mapped): ENOMEM; then the bytes
     * are still there. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    CHECK(write(fds[1], "piped\n", 6) == 6);
    close(fds[1]);
    FILE *r = fdopen(fds[0], "r");
    CHECK(r != NULL);
    salloc_fails(r, FY_READ, PTRDIFF_MAX, ENOMEM);
    salloc_fails(r, FY_READ, PTRDIFF_MAX - 4095, ENOMEM);
    len = 100;
    p = fy_salloc(r, &len);
    CHECK(p && len == 6 && memcmp(p, "piped\n", 6) == 0);
    CHECK(fy_sfree(r, p) == 0);
    CHECK(fclose(r) == 0);

    /* A memory stream. */
    char *mem = NULL;
    size_t msize = 0;
    FILE *ms = open_memstream(&mem, &msize);
    CHECK(ms != NULL);
    salloc_fails(ms, FY_WRITE, PTRDIFF_MAX, ENOMEM);
    CHECK(fputs("memory", ms) >= 0);
    CHECK(fclose(ms) == 0 && msize == 6 && strcmp(mem, "memory") == 0);
    free(mem);

    /* fmemopen: a buffer of SIZE_MAX bytes cannot exist. */
    errno = 0;
    CHECK(fmemopen(NULL, SIZE_MAX, "w+") == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(fmemopen(NULL, (size_t)PTRDIFF_MAX + 1, "w+") == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(fmemopen(buf_for_fmem, SIZE_MAX, "r") == NULL && errno == ENOMEM);

    /* fread and fwrite whose size * n overflows: no buffer can hold that
     * many bytes. glibc multiplies modulo 2^64 and the kernel refuses the
     * wrapped count with EFAULT (ferror set); ferry fails the same way
     * whatever the wrapped count, and reads or writes nothing. */
    char buf[64];
    size_t sizes[][2] = {
        {2, SIZE_MAX / 2 + 1}, {SIZE_MAX, 2}, {(size_t)1 << 32, (size_t)1 << 32}, {3, SIZE_MAX / 2}};
    for (int i = 0; i < 4; i++) {
        CHECK(fseek(w, 0, SEEK_SET) == 0);
        clearerr(w);
        errno = 0;
        CHECK(fread(buf, sizes[i][0], sizes[i][1], w) == 0);
        CHECK(errno == EFAULT && ferror(w) && !feof(w) && ftell(w) == 0);
        clearerr(w);
        errno = 0;
        CHECK(fwrite(buf, sizes[i][0], sizes[i][1], w) == 0);
        CHECK(errno == EFAULT && ferror(w) && ftell(w) == 0);
        clearerr(w);
        errno = 0;
        CHECK(fread_unlocked(buf, sizes[i][0], sizes[i][1], w) == 0 && errno == EFAULT);
        CHECK(fwrite_unlocked(buf, sizes[i][0], sizes[i][1], w) == 0 && errno == EFAULT);
    }
    clearerr(w);
    CHECK(fread(buf, 1, 20, w) == 20 && memcmp(buf, "some bytes\nmore\ntail", 20) == 0);
    CHECK(fclose(w) == 0);

    /* Emulated Unix I/O (ferry/unistd.h) on a stream: counts past
     * PTRDIFF_MAX name no buffer; the kernel says EFAULT for them, so
     * does ferry. */
    int fd = open("regions", O_RDWR);
    CHECK(fd >= 0);
    size_t counts[] = {SIZE_MAX, (size_t)PTRDIFF_MAX + 1};
    for (int i = 0; i < 2; i++) {
        errno = 0;
        CHECK(read(fd, buf, counts[i]) == -1 && errno == EFAULT);
        errno = 0;
        CHECK(write(fd, buf, counts[i]) == -1 && errno == EFAULT);
        errno = 0;
        CHECK(pread(fd, buf, counts[i], 0) == -1 && errno == EFAULT);
        errno = 0;
        CHECK(pwrite(fd, buf, counts[i], 0) == -1 && errno == EFAULT);
    }
    CHECK(read(fd, buf, 4) == 4 && memcmp(buf, "some", 4) == 0);
    CHECK(close(fd) == 0);

    /* Everything still works afterwards. */
    FILE *o = fopen("after", "w");
    CHECK(o && fprintf(o, "%d %s\n", 42, "fine") == 8 && fclose(o) == 0);
    o = fopen("after", "r");
    CHECK(o && fgets(buf, sizeof buf, o) && strcmp(buf, "42 fine\n") == 0 && fclose(o) == 0);
    printf("ok\n");
    return 0;
}
