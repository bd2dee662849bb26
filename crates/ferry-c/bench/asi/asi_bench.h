/* Helpers of the ASI rewrites: regions in, regions out, errors from the
 * call (a negative errno in the length) turned into GNU-style exits. */
#ifndef FERRY_ASI_BENCH_H
#define FERRY_ASI_BENCH_H

#include <fcntl.h>
#include <ferry/asi.h>
#include <ferry/stdio.h>
#include "../bench.h"

/* Regions asked for at a time. */
#define CHUNK (1 << 20)

static inline fy_stream *open_in(const char *prog, const char *path)
{
    int err;
    fy_stream *s = fy_sopen(path, O_RDONLY, 0, &err);
    if (!s)
        die(prog, path, -err);
    return s;
}

/* Output to a pipe: asks for one that holds a whole region, so each
 * region goes out in one write (ferry never resizes a pipe on its own;
 * glibc and GNU tools keep the 64 KiB default). Not a pipe: nothing. */
static inline void grow_out_pipe(fy_stream *s)
{
    (void)fy_set_pipe_size(s, CHUNK);
}

/* The next `want` bytes of `s` (fewer only at end of file; *len 0 then). */
static inline const char *next_region(const char *prog, const char *name, fy_stream *s,
                               ssize_t want, ssize_t *len)
{
    *len = want;
    const char *p = fy_salloc(s, len);
    if (!p)
        die(prog, name, (int)-*len);
    return p;
}

/* Room for exactly `want` bytes of output on `s`. */
static inline char *out_region(const char *prog, const char *name, fy_stream *s, ssize_t want)
{
    ssize_t len = want;
    char *p = fy_salloc(s, &len);
    if (!p)
        die(prog, name, (int)-len);
    return p;
}

static inline void release(const char *prog, const char *name, fy_stream *s, const void *p)
{
    int r = fy_sfree(s, (void *)p);
    if (r != 0)
        die(prog, name, -r);
}

/* Gives back an output region holding `used` bytes (of those allocated). */
static inline void finish_out(const char *prog, const char *name, fy_stream *s, char *p, ssize_t used)
{
    ssize_t len = used;
    p = fy_srealloc(s, p, &len);
    if (!p)
        die(prog, name, (int)-len);
    release(prog, name, s, p);
}

/* Newlines in p[0..len), line by line with memchr. */
static inline long long count_newlines(const char *p, ssize_t len)
{
    long long n = 0;
    const char *end = p + len;
    while ((p = memchr(p, '\n', (size_t)(end - p)))) {
        n++;
        p++;
    }
    return n;
}

#endif
