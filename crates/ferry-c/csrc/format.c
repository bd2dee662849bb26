/*
 * printf and scanf for ferry streams, on glibc's own formatter and
 * scanner (so every conversion behaves exactly as glibc's).
 *
 * printf formats straight into the stream's write buffer: vsnprintf into
 * the write window, and only when the text does not fit there does it go
 * through a temporary buffer and fwrite.
 *
 * scanf scans the stream's buffer in place: glibc's vfscanf runs on an
 * fmemopen view of the unread bytes; if it reached the end of the view and
 * the stream goes on, the view grows and the scan runs again (a scan only
 * writes its arguments, so running it again is harmless). Then exactly
 * the bytes it used are consumed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

struct fy_file {
    unsigned char *rpos, *rend;
    unsigned char *wpos, *wend;
};

void fy_flockfile(struct fy_file *f);
void fy_funlockfile(struct fy_file *f);
ssize_t fy__wwindow(struct fy_file *f);
size_t fy__fwrite(const void *p, size_t size, size_t n, struct fy_file *f);
const unsigned char *fy__rpeek(struct fy_file *f, size_t want, size_t *avail, int *at_end);
void fy__rconsume(struct fy_file *f, size_t used, int eof);
void fy__seterr(struct fy_file *f, int e);
int fy_fflush(struct fy_file *f);

int fy__vfprintf_c(struct fy_file *f, const char *fmt, va_list ap)
{
    va_list aq;
    int n;
    fy_flockfile(f);
    ssize_t room = fy__wwindow(f);
    if (room < 0) {
        fy_funlockfile(f);
        return -1;
    }
    if (room > 0) {
        va_copy(aq, ap);
        n = vsnprintf((char *)f->wpos, (size_t)room, fmt, aq);
        va_end(aq);
        if (n < 0) {
            fy__seterr(f, errno);
            fy_funlockfile(f);
            return -1;
        }
        if (n < room) {
            /* It fit: the text is already in the stream's buffer. */
            f->wpos += n;
            fy_funlockfile(f);
            return n;
        }
    }
    /* Through a temporary buffer (it did not fit, or the stream is line
     * buffered or unbuffered and fwrite applies the rules). */
    char small[1024];
    va_copy(aq, ap);
    n = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    if (n < 0) {
        fy__seterr(f, errno);
        fy_funlockfile(f);
        return -1;
    }
    char *text = small;
    if ((size_t)n >= sizeof small) {
        text = malloc((size_t)n + 1);
        if (!text) {
            fy__seterr(f, ENOMEM);
            fy_funlockfile(f);
            return -1;
        }
        va_copy(aq, ap);
        vsnprintf(text, (size_t)n + 1, fmt, aq);
        va_end(aq);
    }
    size_t w = n ? fy__fwrite(text, 1, (size_t)n, f) : 0;
    if (text != small)
        free(text);
    fy_funlockfile(f);
    return w == (size_t)n ? n : -1;
}

int fy__vdprintf_c(int fd, const char *fmt, va_list ap)
{
    return vdprintf(fd, fmt, ap);
}

int fy__vfscanf_c(struct fy_file *f, const char *fmt, va_list ap)
{
    /* First what is buffered; more only if the scan used all of it (a
     * terminal or pipe is asked for one more byte at a time). */
    size_t want = 1;
    fy_flockfile(f);
    for (;;) {
        size_t avail = 0;
        int at_end = 0;
        const unsigned char *p = fy__rpeek(f, want, &avail, &at_end);
        if (!p) {
            fy_funlockfile(f);
            return EOF;
        }
        FILE *m = avail ? fmemopen((void *)p, avail, "r") : fopen("/dev/null", "r");
        if (!m) {
            fy__rconsume(f, 0, 0);
            fy__seterr(f, errno);
            fy_funlockfile(f);
            return EOF;
        }
        va_list aq;
        va_copy(aq, ap);
        int r = vfscanf(m, fmt, aq);
        va_end(aq);
        long used = ftell(m);
        int hit_end = feof(m);
        fclose(m);
        if (used < 0)
            used = 0;
        if ((size_t)used >= avail && !at_end) {
            /* The scan may have wanted more than the view held. */
            fy__rconsume(f, 0, 0);
            /* Twice the view: a long token costs linear work in all, not
             * one byte (or buffer) more per rescan (quadratic). */
            want = avail > ((size_t)-1) / 2 ? avail + 1 : avail * 2 + 1;
            continue;
        }
        fy__rconsume(f, (size_t)used, hit_end && at_end);
        fy_funlockfile(f);
        return r;
    }
}
