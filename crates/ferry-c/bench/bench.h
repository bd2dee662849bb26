/*
 * Shared by the `ferry-bench asf-c` programs (the ASF paper's experiment
 * in C): GNU-style error exits and wc's byte classes. Each tool has one
 * source in stdio/ (built against glibc, and unchanged against
 * ferry/stdio.h) and one rewritten on ferry/asi.h in asi/.
 */
#ifndef FERRY_BENCH_H
#define FERRY_BENCH_H

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "prog: what: reason" on stderr, exit status 2 (GNU's "trouble"). */
static inline void die(const char *prog, const char *what, int err)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
    exit(2);
}

static inline void usage(const char *prog, const char *args)
{
    fprintf(stderr, "usage: %s %s\n", prog, args);
    exit(2);
}

/* GNU wc's word rule in the C locale: printable non-space bytes make
 * words, space and \t \n \v \f \r end them, other bytes do neither. */
enum { NEUTRAL = 0, WORD = 1, SEP = 2 };

static unsigned char wc_class[256];

static inline void wc_classes(void)
{
    for (int c = 0; c < 256; c++)
        wc_class[c] = (c == ' ' || (c >= 9 && c <= 13)) ? SEP
                      : (c >= 0x21 && c <= 0x7e)        ? WORD
                                                        : NEUTRAL;
}

/* The word GNU cmp uses for a position: "char" in the C and POSIX
 * locales (as POSIX asks), "byte" in the others. */
static inline const char *cmp_unit(void)
{
    const char *l = setlocale(LC_MESSAGES, "");
    return !l || strcmp(l, "C") == 0 || strcmp(l, "POSIX") == 0 ? "char" : "byte";
}

/* cmp's report of a file that ended first, as GNU cmp words it. */
static inline int eof_on(const char *name, long long bytes, long long newlines, int last_nl)
{
    if (bytes == 0)
        fprintf(stderr, "cmp: EOF on %s which is empty\n", name);
    else if (last_nl)
        fprintf(stderr, "cmp: EOF on %s after byte %lld, line %lld\n", name, bytes, newlines);
    else
        fprintf(stderr, "cmp: EOF on %s after byte %lld, in line %lld\n", name, bytes,
                newlines + 1);
    return 1;
}

#endif
