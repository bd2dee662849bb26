/* glibc's rule after a failed write: the buffer that could not be
 * written is dropped (the flush that failed reported it), so a later
 * fclose has nothing left to fail on. Writes to /dev/full (ENOSPC),
 * buffered, line-buffered and unbuffered; the return values, errno and
 * ferror at each step. */
#include <stdio.h>
#include <string.h>
#include <errno.h>

static void show(FILE *f, const char *what, long rv)
{
    int e = errno;
    printf("  %s = %ld errno %d ferror %d\n", what, rv, e, ferror(f));
    errno = 0;
}

static FILE *open_full(const char *name, int mode)
{
    printf("%s:\n", name);
    errno = 0;
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        printf("  fopen failed errno %d\n", errno);
        return NULL;
    }
    if (mode >= 0)
        setvbuf(f, NULL, mode, 0);
    return f;
}

static void closing(FILE *f)
{
    errno = 0;
    int r = fclose(f);
    printf("  fclose = %d errno %d\n", r, errno);
}

int main(void)
{
    /* The interpreter's sequence: write, flush fails, write, flush
     * fails, close succeeds. */
    FILE *f = open_full("fputs fflush fputs fflush fclose", -1);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        show(f, "fflush", fflush(f));
        show(f, "fputs", fputs("def", f));
        show(f, "fflush", fflush(f));
        closing(f);
    }

    /* Nothing flushed before fclose: fclose reports the failure. */
    f = open_full("fputs fclose", -1);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        closing(f);
    }

    /* A failed flush, then clearerr, then nothing more: fclose is 0. */
    f = open_full("fprintf fflush clearerr fclose", -1);
    if (f) {
        show(f, "fprintf", fprintf(f, "%d\n", 12345));
        show(f, "fflush", fflush(f));
        clearerr(f);
        show(f, "clearerr", 0);
        closing(f);
    }

    /* Failed flush, then a write that is not flushed: fclose fails. */
    f = open_full("fputs fflush fputs fclose", -1);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        show(f, "fflush", fflush(f));
        show(f, "fputc", fputc('x', f));
        closing(f);
    }

    /* fflush twice in a row: the second has nothing to write. */
    f = open_full("fputs fflush fflush fclose", -1);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        show(f, "fflush", fflush(f));
        show(f, "fflush", fflush(f));
        closing(f);
    }

    /* fflush(NULL) flushes it too. */
    f = open_full("fputs fflush(NULL) fclose", -1);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        fflush(stdout);
        errno = 0;
        int r = fflush(NULL);
        show(f, "fflush(NULL)", r);
        closing(f);
    }

    /* Line buffered: the newline's flush fails inside fputs. */
    f = open_full("line buffered", _IOLBF);
    if (f) {
        show(f, "fputs", fputs("abc\n", f));
        show(f, "fputs", fputs("def", f));
        show(f, "fflush", fflush(f));
        closing(f);
    }

    /* Unbuffered: every write fails at once. */
    f = open_full("unbuffered", _IONBF);
    if (f) {
        show(f, "fputs", fputs("abc", f));
        show(f, "fputc", fputc('x', f));
        show(f, "fwrite", (long)fwrite("xyz", 1, 3, f));
        show(f, "fflush", fflush(f));
        closing(f);
    }
    return 0;
}
