/* <stdio_ext.h>: __fpending, __fpurge, __freading, __fwriting,
 * __freadable, __fwritable, __flbf, __fbufsize, _flushlbf, __fsetlocking,
 * on files in every fopen mode, through reads, ungetc, writes of several
 * sizes, fflush, seeks and purges, in each setvbuf mode, and on the std
 * streams (stdout a pipe, or a file with "file" as the second argument).
 *
 * <stdio_ext.h> is included after <stdio.h> here, and so after the
 * force-included ferry/stdio.h (stdio_ext_first.c has the other order).
 * Every report goes to stderr (unbuffered in both builds), so stdout's
 * own buffer holds only what a case puts there.
 *
 * Buffer sizes differ (glibc's is st_blksize, 4 KiB; ferry's 128 KiB), so
 * __fbufsize prints as 0, 1 or "buf", and pending output stays under 4 KiB
 * (a larger write is flushed before it is counted). */
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

static const char *bufclass(size_t n)
{
    return n == 0 ? "0" : n == 1 ? "1" : "buf";
}

static void show(const char *what, FILE *f)
{
    fprintf(stderr, "%-26s rd=%d wr=%d rable=%d wable=%d lbf=%d pend=%zu buf=%s\n", what,
            __freading(f) != 0, __fwriting(f) != 0, __freadable(f) != 0, __fwritable(f) != 0,
            __flbf(f) != 0, __fpending(f), bufclass(__fbufsize(f)));
}

static void show_at(const char *what, FILE *f)
{
    show(what, f);
    fprintf(stderr, "%-26s   tell=%ld\n", "", ftell(f));
}

/* The file's bytes on disk, read past any stream. */
static void disk(const char *path)
{
    char buf[8192];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (fd >= 0)
        close(fd);
    if (n < 0) {
        fprintf(stderr, "  disk %s: none\n", path);
        return;
    }
    if (n > 60) {
        fprintf(stderr, "  disk %s: %zd bytes, ends [%.*s]\n", path, n, 20, buf + n - 20);
        return;
    }
    fprintf(stderr, "  disk %s: [%.*s]\n", path, (int)n, buf);
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static const char TEXT[] = "first line\nsecond line\nthird\n";

static void modes(void)
{
    const char *modes[] = {"r", "w", "a", "r+", "w+", "a+"};
    char what[64];
    for (int i = 0; i < 6; i++) {
        const char *m = modes[i];
        put_file("m.txt", TEXT);
        FILE *f = fopen("m.txt", m);
        snprintf(what, sizeof what, "%s: open", m);
        show_at(what, f);
        if (__freadable(f)) {
            int c = getc(f);
            c = getc(f);
            snprintf(what, sizeof what, "%s: getc %c", m, c == EOF ? '-' : c);
            show_at(what, f);
            ungetc(c, f);
            snprintf(what, sizeof what, "%s: ungetc same", m);
            show_at(what, f);
            ungetc('Z', f);
            snprintf(what, sizeof what, "%s: ungetc Z", m);
            show_at(what, f);
            char line[64];
            fgets(line, sizeof line, f);
            snprintf(what, sizeof what, "%s: fgets %.3s", m, line);
            show_at(what, f);
            fflush(f);
            snprintf(what, sizeof what, "%s: fflush", m);
            show_at(what, f);
            char ten[10];
            size_t got = fread(ten, 1, sizeof ten, f);
            snprintf(what, sizeof what, "%s: fread %zu", m, got);
            show_at(what, f);
            ungetc('Q', f);
            __fpurge(f);
            snprintf(what, sizeof what, "%s: fpurge reading", m);
            show_at(what, f);
            fprintf(stderr, "  then getc %d eof %d\n", getc(f), feof(f) != 0);
            rewind(f);
            snprintf(what, sizeof what, "%s: rewind", m);
            show_at(what, f);
            while (getc(f) != EOF) {
            }
            snprintf(what, sizeof what, "%s: at eof", m);
            show_at(what, f);
            fseek(f, 0, SEEK_CUR);
        }
        if (__fwritable(f)) {
            static char big[3000];
            memset(big, 'b', sizeof big);
            size_t sizes[] = {1, 9, 90, 900, 2000};
            for (int k = 0; k < 5; k++) {
                fwrite(big, 1, sizes[k], f);
                snprintf(what, sizeof what, "%s: fwrite %zu", m, sizes[k]);
                show_at(what, f);
            }
            fflush(f);
            snprintf(what, sizeof what, "%s: fflush", m);
            show_at(what, f);
            putc('p', f);
            fputs("ut", f);
            fprintf(f, "%d", 42);
            snprintf(what, sizeof what, "%s: putc fputs printf", m);
            show_at(what, f);
            __fpurge(f);
            snprintf(what, sizeof what, "%s: fpurge writing", m);
            show_at(what, f);
            fputs("END", f);
            fclose(f);
            disk("m.txt");
        } else {
            fclose(f);
        }
    }
}

/* A fresh read-write stream: neither reading nor writing until used. */
static void fresh(void)
{
    put_file("m.txt", TEXT);
    FILE *f = fopen("m.txt", "r+");
    ftell(f);
    show("r+ ftell fresh", f);
    fflush(f);
    show("r+ fflush fresh", f);
    fseek(f, 0, SEEK_SET);
    show("r+ fseek fresh", f);
    fclose(f);
    f = fopen("m.txt", "r+");
    ungetc('u', f);
    show("r+ ungetc fresh", f);
    fclose(f);
    f = fopen("m.txt", "r+");
    fputs("HE", f);
    rewind(f);
    show("r+ write rewind", f);
    fprintf(stderr, "  getc %c\n", getc(f));
    show("r+ getc", f);
    fseek(f, 0, SEEK_CUR);
    fputs("L", f);
    show("r+ write after seek", f);
    fclose(f);
    disk("m.txt");
    /* A write larger than either buffer, then more. */
    f = fopen("big.txt", "w+");
    static char big[10000];
    memset(big, 'x', sizeof big);
    fwrite(big, 1, sizeof big, f);
    fflush(f);
    show("w+ 10000 flushed", f);
    fputs("abc", f);
    show("w+ then abc", f);
    __fpurge(f);
    show_at("w+ purged", f);
    fclose(f);
    disk("big.txt");
}

static void buffering(void)
{
    const int mode[] = {_IONBF, _IOLBF, _IOFBF};
    const char *name[] = {"unbuffered", "line", "full"};
    for (int i = 0; i < 3; i++) {
        char what[64];
        FILE *f = fopen("v.txt", "w");
        setvbuf(f, NULL, mode[i], 0);
        fputs("ab", f);
        snprintf(what, sizeof what, "%s: ab", name[i]);
        show(what, f);
        disk("v.txt");
        fputs("c\nd", f);
        snprintf(what, sizeof what, "%s: c\\nd", name[i]);
        show(what, f);
        disk("v.txt");
        putc('e', f);
        putc('\n', f);
        putc('f', f);
        snprintf(what, sizeof what, "%s: putc e \\n f", name[i]);
        show(what, f);
        disk("v.txt");
        _flushlbf();
        snprintf(what, sizeof what, "%s: _flushlbf", name[i]);
        show(what, f);
        disk("v.txt");
        fputs("gh", f);
        __fpurge(f);
        snprintf(what, sizeof what, "%s: gh purged", name[i]);
        show(what, f);
        fclose(f);
        disk("v.txt");
    }
    /* setlinebuf after use; reading a line-buffered input. */
    put_file("in.txt", TEXT);
    FILE *in = fopen("in.txt", "r");
    setvbuf(in, NULL, _IOLBF, 0);
    show("line input", in);
    fprintf(stderr, "  getc %c\n", getc(in));
    show("line input getc", in);
    fclose(in);
}

static void locking(FILE *f, const char *name)
{
    int a = __fsetlocking(f, FSETLOCKING_QUERY);
    int b = __fsetlocking(f, FSETLOCKING_BYCALLER);
    int c = __fsetlocking(f, FSETLOCKING_QUERY);
    int d = __fsetlocking(f, 7);
    int e = __fsetlocking(f, FSETLOCKING_BYCALLER);
    int g = __fsetlocking(f, FSETLOCKING_INTERNAL);
    int h = __fsetlocking(f, FSETLOCKING_QUERY);
    fprintf(stderr, "fsetlocking %s: %d %d %d %d %d %d %d\n", name, a, b, c, d, e, g, h);
    /* Still usable (BYCALLER with the caller's locks). */
    __fsetlocking(f, FSETLOCKING_BYCALLER);
    flockfile(f);
    fputs("", f);
    funlockfile(f);
    __fsetlocking(f, FSETLOCKING_INTERNAL);
}

static void std_streams(void)
{
    show("stdin", stdin);
    show("stdout", stdout);
    show("stderr", stderr);
    int c = getchar();
    fprintf(stderr, "stdin getc %c\n", c);
    show("stdin after getc", stdin);
    ungetc('!', stdin);
    __fpurge(stdin);
    show("stdin purged", stdin);
    fprintf(stderr, "  then getc %d\n", getchar());

    fputs("kept 1\n", stdout);
    show("stdout kept", stdout);
    fflush(stdout);
    show("stdout flushed", stdout);
    fputs("purged\nfrom stdout", stdout);
    show("stdout to purge", stdout);
    __fpurge(stdout);
    show("stdout purged", stdout);
    fputs("kept 2\n", stdout);
    setlinebuf(stdout);
    fputs("kept 3\nand", stdout);
    show("stdout line", stdout);
    _flushlbf();
    show("stdout _flushlbf", stdout);
    fputs(" 4\n", stdout);
    show("stdout line done", stdout);
    locking(stdout, "stdout");
}

int main(int argc, char **argv)
{
    int to_file = argc > 2 && strcmp(argv[2], "file") == 0;
    if (to_file) {
        int fd = open("stdout.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        close(fd);
    }
    modes();
    fresh();
    buffering();
    FILE *f = fopen("l.txt", "w");
    locking(f, "file");
    fclose(f);
    std_streams();
    fflush(stdout);
    if (to_file)
        disk("stdout.txt");
    return 0;
}
