/* sort -g's comparison of two keys in the C library's long double, as GNU
   sort's general_numcompare makes it (x86-64: a 64-bit mantissa and
   exponents to +-4932, where a double has 53 bits and +-308). Rust has no
   long double, so the conversion and the comparison are made here. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of a long double's value (x86's 80-bit format fills 10 of
   its 16; the rest are padding, left zero here). */
#if LDBL_MANT_DIG == 64
#define VALUE_BYTES 10
#else
#define VALUE_BYTES sizeof(long double)
#endif

/* Keys that do not convert sort first (equal among themselves), then
   NaNs, ordered by their bytes, then numbers; -0 equals +0. */
int ferry_sort_general(const char *sa, const char *sb) {
    char *ea;
    char *eb;
    long double a = strtold(sa, &ea);
    long double b = strtold(sb, &eb);
    if (sa == ea)
        return sb == eb ? 0 : -1;
    if (sb == eb)
        return 1;
    if (a < b)
        return -1;
    if (a > b)
        return 1;
    if (a == b)
        return 0;
    if (b == b)
        return -1;
    if (a == a)
        return 1;
    unsigned char x[sizeof a];
    unsigned char y[sizeof b];
    memset(x, 0, sizeof x);
    memset(y, 0, sizeof y);
    memcpy(x, &a, VALUE_BYTES);
    memcpy(y, &b, VALUE_BYTES);
    return memcmp(x, y, sizeof x);
}
