/* printf of every conversion, flag, width, precision and length, to a
 * file, to stdout and through the buffer's edge. */
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <wchar.h>
#include <errno.h>
#include <sys/types.h>

static void all(FILE *f)
{
    int n;
    n = fprintf(f, "[%d|%i|%u|%o|%x|%X|%c|%s|%%]\n", -42, 42, 42u, 42u, 255u, 255u, 'q', "str");
    fprintf(f, "ret %d\n", n);
    fprintf(f, "[%5d|%-5d|%05d|%+d|% d|%+.3d|%.0d|%#o|%#x|%#X|%#.0o]\n", 7, 7, 7, 7, 7, 7, 0, 8u, 255u, 255u, 0u);
    fprintf(f, "[%hhd|%hhu|%hd|%hu|%ld|%lu|%lld|%llu]\n", (signed char)-3, (unsigned char)250, (short)-300,
            (unsigned short)65000, LONG_MIN, ULONG_MAX, LLONG_MIN, ULLONG_MAX);
    fprintf(f, "[%jd|%ju|%zd|%zu|%td|%tx]\n", INTMAX_MIN, UINTMAX_MAX, (ssize_t)-5, (size_t)5, (ptrdiff_t)-9, (ptrdiff_t)255);
    fprintf(f, "[%f|%F|%e|%E|%g|%G|%a|%A]\n", 3.14159, -2.5, 12345.678, 0.000123, 1e-5, 1e20, 1.0, -0.5);
    fprintf(f, "[%.0f|%.10f|%10.3f|%-10.2e|%+g|%#g|%#.0f|%08.2f]\n", 2.5, 1.0 / 3, 3.14159, 314.159, 2.0, 2.0, 3.0, -1.5);
    fprintf(f, "[%f|%f|%f|%e|%g|%F]\n", INFINITY, -INFINITY, NAN, INFINITY, -NAN, INFINITY);
    fprintf(f, "[%Lf|%Le|%Lg|%La]\n", 1.0L / 3, 1e300L * 1e300L, LDBL_MAX, 1.0L);
    fprintf(f, "[%g|%g|%g|%.17g|%.0e|%e]\n", DBL_MIN, DBL_MAX, 0.0, 0.1, 5e-324, -0.0);
    fprintf(f, "[%*d|%-*d|%.*f|%*.*s]\n", 6, 1, 6, 2, 3, 2.0, 8, 3, "abcdef");
    fprintf(f, "[%10s|%-10s|%.2s|%s]\n", "hi", "hi", "hello", "");
    fprintf(f, "[%lc|%ls|%5lc]\n", (wint_t)'w', L"wide", (wint_t)'z');
    fprintf(f, "[%p|%p]\n", (void *)0, (void *)0x1234);
    int cnt = 0;
    fprintf(f, "abc%n|", &cnt);
    fprintf(f, "n=%d\n", cnt);
    fprintf(f, "%1$s %2$d %1$s\n", "pos", 9);
    errno = 2;
    fprintf(f, "%m after errno 2\n");
}

int main(void)
{
    FILE *f = fopen("out", "w");
    all(f);
    /* Across the buffer's edge: many prints, and single huge ones. */
    for (int i = 0; i < 20000; i++)
        fprintf(f, "%d:%s:%08x:%.3e\n", i, i % 3 ? "abc" : "", (unsigned)i * 2654435761u, i * 1.5);
    fprintf(f, "%70000d|\n", 5);
    fprintf(f, "%s|\n", "");
    char big[200000];
    memset(big, 'b', sizeof big - 1);
    big[sizeof big - 1] = 0;
    printf("big ret %d\n", fprintf(f, "<%s>", big));
    fclose(f);
    f = fopen("out", "r");
    long n = 0;
    unsigned long h = 5381;
    int c;
    while ((c = getc(f)) != EOF) {
        h = h * 33 + (unsigned)c;
        n++;
    }
    fclose(f);
    printf("file: %ld bytes hash %lu\n", n, h);
    all(stdout);
    fflush(stdout);
    all(stderr);
    /* printf on a stream opened for reading only. */
    f = fopen("out", "r");
    printf("fprintf on r: %d err %d\n", fprintf(f, "x%d", 1), ferror(f));
    fclose(f);
    /* vprintf and dprintf. */
    dprintf(1, "dprintf %d\n", 5);
    printf("printf %s\n", "done");
    return 0;
}
