/* <stdio_ext.h> included before <stdio.h>. In the suite ferry/stdio.h is
 * force-included first all the same; the test that builds this file with
 * -DFERRY_DIRECT and no -include has it come after <stdio_ext.h>, as in a
 * program that names <ferry/stdio.h> itself after the system headers.
 * Either way the calls must reach ferry's functions: glibc's would read
 * ferry's FILE as theirs (__fpurge wrote into it, and ferry crashed). */
#include <stdio_ext.h>
#include <stdio.h>
#ifdef FERRY_DIRECT
#include <ferry/stdio.h>
#endif
#include <string.h>

int main(void)
{
    FILE *f = fopen("first.txt", "w+");
    fputs("hello", f);
    printf("pending %zu writing %d reading %d\n", __fpending(f), __fwriting(f) != 0,
           __freading(f) != 0);
    __fpurge(f);
    printf("purged: pending %zu tell %ld\n", __fpending(f), ftell(f));
    fputs("kept\nline", f);
    rewind(f);
    char line[32];
    printf("reading %d: [%s]", __freading(f) != 0, fgets(line, sizeof line, f));
    ungetc('X', f);
    __fpurge(f);
    printf("after purge: getc %d tell %ld\n", getc(f), ftell(f));
    printf("readable %d writable %d lbf %d bufsize>0 %d\n", __freadable(f) != 0,
           __fwritable(f) != 0, __flbf(f) != 0, __fbufsize(f) > 0);
    int was = __fsetlocking(f, FSETLOCKING_BYCALLER);
    printf("locking %d then %d\n", was, __fsetlocking(f, FSETLOCKING_QUERY));
    fclose(f);
    /* Function pointers name ferry's functions too. */
    size_t (*pending)(FILE *) = __fpending;
    void (*purge)(FILE *) = __fpurge;
    fflush(stdout);
    fputs("dropped", stdout);
    fprintf(stderr, "stdout pending %zu\n", pending(stdout));
    purge(stdout);
    setvbuf(stdout, NULL, _IOLBF, 0);
    fputs("line buffered, no newline", stdout);
    _flushlbf();
    printf(" / stdout lbf %d pending %zu\n", __flbf(stdout) != 0, __fpending(stdout));
    return 0;
}
