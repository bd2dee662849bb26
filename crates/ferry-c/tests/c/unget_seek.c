/* ungetc against fflush, fseek and ftell, and seeks that fail.
 *
 * glibc's fflush of a read stream discards the bytes pushed back with
 * ungetc (a pipe keeps them) and goes on where the stream was before them;
 * a byte pushed back at offset 0 of a stream not yet used leaves ftell at
 * 0, of one that has read or seeked makes ftell fail. A seek that fails
 * (a negative or huge offset, a bad whence, a pipe) sets errno, not the
 * error indicator, and leaves the position where it was.
 *
 * (Where glibc's descriptor offset after such an fflush is where its read
 * buffer ended less the bytes pushed back, not the stream's position, the
 * offsets are not printed.) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long here(int fd)
{
    return (long)lseek(fd, 0, SEEK_CUR);
}

static void make(const char *path, int n)
{
    FILE *f = fopen(path, "w");
    for (int i = 0; i < n; i++)
        fputc('a' + i % 26, f);
    fclose(f);
}

static void next(FILE *f, const char *what)
{
    int c = getc(f);
    long t = ftell(f);
    printf("  %s: next %d ftell %ld eof %d err %d\n", what, c, t, feof(f) != 0, ferror(f) != 0);
}

static void pushed_back_then_fflush(void)
{
    FILE *f = fopen("in", "r");
    getc(f);
    getc(f);
    getc(f);
    printf("another byte pushed back: ungetc %d\n", ungetc('X', f));
    long t = ftell(f);
    printf("  ftell %ld\n", t);
    printf("  fflush %d\n", fflush(f));
    /* (glibc's ftell is off by one from here on) */
    printf("  after fflush: next %c\n", getc(f));
    fclose(f);

    f = fopen("in", "r");
    getc(f);
    getc(f);
    getc(f);
    printf("the same byte pushed back: ungetc %d\n", ungetc('c', f));
    int r = fflush(f);
    printf("  fflush %d, offset %ld\n", r, here(fileno(f)));
    next(f, "after fflush");
    fclose(f);

    /* Two pushed back, read again by fread. */
    f = fopen("in", "r");
    getc(f);
    ungetc('1', f);
    ungetc('2', f);
    char buf[8] = {0};
    size_t n = fread(buf, 1, 5, f);
    t = ftell(f);
    printf("fread after two ungetc: %zu %s ftell %ld\n", n, buf, t);
    fclose(f);

    /* Pushed back, then fseek relative to it. */
    f = fopen("in", "r");
    for (int i = 0; i < 5; i++)
        getc(f);
    ungetc('R', f);
    printf("fseek(-1, SEEK_CUR) after ungetc: %d\n", fseek(f, -1, SEEK_CUR));
    next(f, "after");
    fclose(f);
}

static void pushed_back_at_zero(void)
{
    FILE *f = fopen("in", "r");
    printf("ungetc at offset 0: %d\n", ungetc('W', f));
    errno = 0;
    long t = ftell(f);
    printf("  ftell %ld errno %d err %d\n", t, errno, ferror(f) != 0);
    errno = 0;
    int r = fseek(f, 0, SEEK_CUR);
    printf("  fseek(0, SEEK_CUR) %d errno %d\n", r, errno);
    next(f, "after");
    fclose(f);
}

static void memory_stream(void)
{
    char b[] = "0123456789";
    FILE *f = fmemopen(b, 10, "r");
    getc(f);
    getc(f);
    ungetc('X', f);
    long t = ftell(f);
    printf("fmemopen ungetc: ftell %ld\n", t);
    printf("  fflush %d\n", fflush(f));
    printf("  next %c\n", getc(f));
    fclose(f);
}

static void pipe_keeps_them(void)
{
    int p[2];
    pipe(p);
    write(p[1], "hello", 5);
    close(p[1]);
    FILE *f = fdopen(p[0], "r");
    getc(f);
    ungetc('Z', f);
    /* (glibc leaves errno ESPIPE from its lseek) */
    printf("pipe: fflush %d\n", fflush(f));
    int c1 = getc(f);
    int c2 = getc(f);
    printf("  next %c %c\n", c1, c2);
    fclose(f);
}

static void failed_seeks(void)
{
    FILE *f = fopen("rw", "w+");
    fputs("hello world\n", f);
    rewind(f);
    getc(f);
    struct {
        const char *what;
        long off;
        int whence;
    } bad[] = {
        {"negative, SEEK_SET", -100, SEEK_SET},
        {"negative, SEEK_CUR", -100, SEEK_CUR},
        {"negative, SEEK_END", -100, SEEK_END},
        {"bad whence", 0, 7},
        {"overflowing SEEK_CUR", LONG_MAX, SEEK_CUR},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        errno = 0;
        int r = fseek(f, bad[i].off, bad[i].whence);
        int e = errno;
        long t = ftell(f);
        printf("fseek %s: %d errno %d err %d ftell %ld\n", bad[i].what, r, e, ferror(f) != 0, t);
    }
    /* Past what the file system allows (or not: then both succeed). */
    errno = 0;
    int r = fseek(f, LONG_MAX, SEEK_SET);
    int e = errno;
    long t = ftell(f);
    printf("fseek LONG_MAX: %d errno %d err %d ftell %ld\n", r, e, ferror(f) != 0, t);
    fseek(f, 3, SEEK_SET);
    next(f, "back at 3");
    while (getc(f) != EOF) {
    }
    errno = 0;
    r = fseek(f, -1, SEEK_SET);
    e = errno;
    printf("failed seek at end of file: %d errno %d err %d eof %d\n", r, e, ferror(f) != 0, feof(f) != 0);
    fclose(f);

    int p[2];
    pipe(p);
    write(p[1], "xyz", 3);
    close(p[1]);
    FILE *pf = fdopen(p[0], "r");
    getc(pf);
    errno = 0;
    r = fseek(pf, 0, SEEK_CUR);
    e = errno;
    printf("pipe: fseek %d errno %d err %d\n", r, e, ferror(pf) != 0);
    errno = 0;
    t = ftell(pf);
    e = errno;
    printf("pipe: ftell %ld errno %d err %d\n", t, e, ferror(pf) != 0);
    printf("  next %c\n", getc(pf));
    fclose(pf);
}

/* More bytes pushed back than read, after a read at end of file, after a
 * seek, after a read of nothing: ftell fails or says 0 as glibc's does. */
static void pushed_back_past_zero(void)
{
    FILE *f = fopen("empty", "w+");
    getc(f);
    ungetc('Z', f);
    errno = 0;
    long t = ftell(f);
    printf("empty w+ after EOF: ftell %ld errno %d err %d\n", t, errno, ferror(f) != 0);
    fclose(f);
    f = fopen("empty", "r");
    getc(f);
    clearerr(f);
    ungetc('Z', f);
    errno = 0;
    t = ftell(f);
    printf("empty r after EOF: ftell %ld errno %d\n", t, errno);
    fclose(f);
    f = fopen("in", "r");
    fseek(f, 0, SEEK_SET);
    ungetc('Z', f);
    errno = 0;
    t = ftell(f);
    printf("after fseek 0: ftell %ld errno %d\n", t, errno);
    fclose(f);
    f = fopen("in", "r");
    getc(f);
    ungetc('h', f);
    ungetc('Z', f);
    t = ftell(f);
    /* (glibc's errno here is EIO; ferry's EINVAL) */
    printf("two pushed back at 1: ftell %ld\n", t);
    fclose(f);
}

int main(void)
{
    make("in", 100);
    pushed_back_then_fflush();
    pushed_back_at_zero();
    pushed_back_past_zero();
    memory_stream();
    pipe_keeps_them();
    failed_seeks();
    return 0;
}
