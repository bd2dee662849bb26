/* fmemopen mode by mode (r r+ w w+ a a+, with and without b), against
 * glibc: start position, reads at the end, writes that fit, fill the
 * buffer exactly and overflow (what is stored, where the NUL goes, the
 * return values, ferror, errno), fflush and fclose, fseek past the size
 * and before 0, size 0 and a NULL buffer. Every observation is printed;
 * the buffer in full, in hex (bytes after the NUL too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#define SIZE 8

static const char *modes[] = {"r", "r+", "w", "w+", "a", "a+",
                              "rb", "r+b", "wb", "w+b", "ab", "a+b"};
#define NMODES (sizeof modes / sizeof modes[0])

static unsigned char mem[SIZE + 4];

static void dump(const char *what)
{
    printf("  %s:", what);
    for (int i = 0; i < SIZE + 2; i++)
        printf(" %02x", mem[i]);
    printf("\n");
}

/* "abc" NUL "wxyz" in 8 bytes, and two guard bytes after them. */
static void fill(int with_nul)
{
    memcpy(mem, with_nul ? "abc\0wxyz" : "abcdefgh", SIZE);
    mem[SIZE] = 0xee;
    mem[SIZE + 1] = 0xee;
    mem[SIZE + 2] = 0xee;
}

static FILE *open_mode(const char *mode, int with_nul)
{
    fill(with_nul);
    errno = 0;
    FILE *f = fmemopen(mem, SIZE, mode);
    if (!f) {
        printf("  fmemopen NULL errno %d\n", errno);
        return NULL;
    }
    printf("  open ftell %ld\n", ftell(f));
    return f;
}

static void show(FILE *f, const char *what, long rv)
{
    int e = errno;
    printf("  %s = %ld errno %d ferror %d feof %d ftell %ld\n", what, rv, e,
           ferror(f), feof(f), ftell(f));
    errno = 0;
}

static void closing(FILE *f)
{
    errno = 0;
    int r = fclose(f);
    printf("  fclose = %d errno %d\n", r, errno);
    dump("after fclose");
}

static void reads(FILE *f)
{
    unsigned char got[32];
    errno = 0;
    size_t n = fread(got, 1, sizeof got, f);
    printf("  fread = %zu:", n);
    for (size_t i = 0; i < n; i++)
        printf(" %02x", got[i]);
    printf("\n");
    show(f, "after fread", (long)n);
    show(f, "getc", getc(f));
}

/* Writes `len` bytes of `data`, flushes, closes; the buffer each time. */
static void write_case(const char *mode, int with_nul, const char *data, size_t len,
                       int unbuffered)
{
    printf("%s write %zu%s%s:\n", mode, len, with_nul ? "" : " no-nul",
           unbuffered ? " unbuffered" : "");
    FILE *f = open_mode(mode, with_nul);
    if (!f)
        return;
    if (unbuffered)
        setvbuf(f, NULL, _IONBF, 0);
    errno = 0;
    size_t n = fwrite(data, 1, len, f);
    show(f, "fwrite", (long)n);
    dump("before fflush");
    errno = 0;
    show(f, "fflush", fflush(f));
    dump("after fflush");
    errno = 0;
    show(f, "fputc", fputc('Z', f));
    show(f, "fflush", fflush(f));
    dump("after 2nd fflush");
    closing(f);
}

static void seek_case(const char *mode, int with_nul)
{
    printf("%s seeks%s:\n", mode, with_nul ? "" : " no-nul");
    FILE *f = open_mode(mode, with_nul);
    if (!f)
        return;
    errno = 0;
    show(f, "fseek 2 SET", fseek(f, 2, SEEK_SET));
    show(f, "fseek 9 SET", fseek(f, 9, SEEK_SET));
    show(f, "fseek 8 SET", fseek(f, 8, SEEK_SET));
    show(f, "fseek -1 SET", fseek(f, -1, SEEK_SET));
    show(f, "fseek -3 CUR", fseek(f, -3, SEEK_CUR));
    show(f, "fseek 5 CUR", fseek(f, 5, SEEK_CUR));
    show(f, "fseek 0 END", fseek(f, 0, SEEK_END));
    show(f, "fseek 1 END", fseek(f, 1, SEEK_END));
    show(f, "fseek -1 END", fseek(f, -1, SEEK_END));
    show(f, "fseek -20 END", fseek(f, -20, SEEK_END));
    show(f, "fseek 1 whence 7", fseek(f, 1, 7));
    show(f, "fseek 1 SET", fseek(f, 1, SEEK_SET));
    show(f, "fputc", fputc('Q', f));
    show(f, "fseek 6 SET", fseek(f, 6, SEEK_SET));
    dump("after seek flush");
    show(f, "getc", getc(f));
    closing(f);
}

static void read_case(const char *mode, int with_nul)
{
    printf("%s reads%s:\n", mode, with_nul ? "" : " no-nul");
    FILE *f = open_mode(mode, with_nul);
    if (!f)
        return;
    reads(f);
    show(f, "fseek 5 SET", fseek(f, 5, SEEK_SET));
    reads(f);
    closing(f);
}

/* The program writes, rewinds, reads back what it wrote. */
static void update_case(const char *mode)
{
    printf("%s update:\n", mode);
    FILE *f = open_mode(mode, 1);
    if (!f)
        return;
    errno = 0;
    show(f, "fprintf", fprintf(f, "%d", 42));
    show(f, "fflush", fflush(f));
    dump("after fflush");
    show(f, "fprintf", fprintf(f, "%s", "+"));
    show(f, "rewind", 0);
    rewind(f);
    show(f, "after rewind", 0);
    reads(f);
    show(f, "fseek 1 SET", fseek(f, 1, SEEK_SET));
    show(f, "fputs", fputs("#", f));
    show(f, "fseek 0 CUR", fseek(f, 0, SEEK_CUR));
    dump("after fseek");
    closing(f);
}

/* Data with a NUL as its last byte: no NUL is added after it. */
static void nul_data_case(const char *mode)
{
    printf("%s nul data:\n", mode);
    FILE *f = open_mode(mode, 1);
    if (!f)
        return;
    memset(mem + 4, 'k', 4);
    show(f, "fwrite", (long)fwrite("AB\0", 1, 3, f));
    show(f, "fflush", fflush(f));
    dump("after fflush");
    show(f, "fwrite", (long)fwrite("CD", 1, 2, f));
    show(f, "fflush", fflush(f));
    dump("after fflush");
    closing(f);
}

/* glibc's "w+" writes a NUL at buf[0] even for size 0, a byte outside
 * the buffer it was given; ferry does not. The buffer starts with a NUL
 * here, so both leave the same bytes. */
static void size_zero(const char *mode, int null_buf)
{
    printf("%s size 0%s:\n", mode, null_buf ? " NULL" : "");
    fill(1);
    mem[0] = 0;
    errno = 0;
    FILE *f = fmemopen(null_buf ? NULL : mem, 0, mode);
    if (!f) {
        printf("  fmemopen NULL errno %d\n", errno);
        return;
    }
    show(f, "open", 0);
    show(f, "getc", getc(f));
    show(f, "fputc", fputc('x', f));
    show(f, "fflush", fflush(f));
    show(f, "fseek 0 SET", fseek(f, 0, SEEK_SET));
    show(f, "fseek 1 SET", fseek(f, 1, SEEK_SET));
    errno = 0;
    int r = fclose(f);
    printf("  fclose = %d errno %d\n", r, errno);
    dump("after fclose");
}

static void null_buf(const char *mode)
{
    printf("%s NULL buffer:\n", mode);
    errno = 0;
    FILE *f = fmemopen(NULL, SIZE, mode);
    if (!f) {
        printf("  fmemopen NULL errno %d\n", errno);
        return;
    }
    show(f, "open", 0);
    show(f, "fputs", fputs("hello", f));
    show(f, "fflush", fflush(f));
    show(f, "fseek 0 SET", fseek(f, 0, SEEK_SET));
    char line[16] = "";
    errno = 0;
    char *s = fgets(line, sizeof line, f);
    printf("  fgets %s [%s]\n", s ? "ok" : "NULL", s ? line : "");
    show(f, "after fgets", 0);
    show(f, "fseek 0 END", fseek(f, 0, SEEK_END));
    show(f, "fseek 9 SET", fseek(f, 9, SEEK_SET));
    show(f, "fputs", fputs("12345", f));
    show(f, "fflush", fflush(f));
    errno = 0;
    int r = fclose(f);
    printf("  fclose = %d errno %d\n", r, errno);
}

/* Writes of more than glibc's 8 KiB FILE buffer: it fills the buffer,
 * flushes it and gives whole blocks to the cookie during the fwrite, so
 * fwrite's count shows the truncation. */
static char big[30000], data[40000];

static void big_write(const char *what, size_t size, size_t first, size_t len, int seek_first)
{
    memset(big, 'z', sizeof big);
    FILE *f = fmemopen(big, size, "w");
    if (seek_first)
        fseek(f, 0, SEEK_SET);
    errno = 0;
    size_t a = first ? fwrite(data, 1, first, f) : 0;
    size_t b = fwrite(data, 1, len, f);
    int e = errno;
    printf("%s: %zu %zu errno %d ferror %d ftell %ld", what, a, b, e, ferror(f), ftell(f));
    errno = 0;
    int r = fflush(f);
    printf(" fflush %d errno %d ftell %ld", r, errno, ftell(f));
    r = fclose(f);
    size_t n = 0;
    while (n < sizeof big && big[n] != 'z')
        n++;
    printf(" fclose %d stored %zu nul %d\n", r, n, n < sizeof big && n > 0 && big[n - 1] == 0);
}

static void big_writes(void)
{
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = 'a' + i % 25;
    big_write("fresh 20000 into 10000", 10000, 0, 20000, 0);
    big_write("fresh 20000 into 30000", 30000, 0, 20000, 0);
    big_write("100 then 20000 into 10000", 10000, 100, 20000, 0);
    big_write("100 then 9000 into 10000", 10000, 100, 9000, 0);
    big_write("seek then 9000 into 8500", 8500, 0, 9000, 1);
    big_write("fresh 8192 into 8000", 8000, 0, 8192, 0);
    big_write("fresh 16384 into 30000", 30000, 0, 16384, 0);
    big_write("5000 then 5000 into 30000", 30000, 5000, 5000, 0);
}

/* Line buffered: what runs through the last newline reaches the buffer
 * at once; a failed flush there makes fputs fail but fwrite count every
 * item (glibc's xsputn returns EOF). */
static void line_buffered(void)
{
    printf("line buffered:\n");
    fill(1);
    FILE *f = fmemopen(mem, SIZE, "w");
    setvbuf(f, NULL, _IOLBF, 0);
    show(f, "fputs", fputs("ab\ncd", f));
    dump("after fputs");
    show(f, "fputs", fputs("ef", f));
    dump("after fputs");
    show(f, "fwrite", (long)fwrite("gh\nij\n", 1, 6, f));
    dump("after fwrite");
    show(f, "fputs", fputs("k\n", f));
    closing(f);
}

/* Line reads, then seeks past the size: with unread bytes in glibc's
 * buffer the position stays; fscanf, ungetc; "a+" read to the end, then
 * a write (it goes to the end of the contents). */
static void reads_then_seeks(void)
{
    printf("reads then seeks:\n");
    char text[16] = "line1\nline2\nxyz";
    FILE *f = fmemopen(text, sizeof text, "r");
    char l[32];
    char *s = fgets(l, sizeof l, f);
    printf("  fgets [%s]\n", s ? s : "NULL");
    show(f, "fseek 20 SET", fseek(f, 20, SEEK_SET));
    show(f, "getc", getc(f));
    show(f, "fseek 3 SET", fseek(f, 3, SEEK_SET));
    show(f, "getc", getc(f));
    show(f, "fseek 30 SET", fseek(f, 30, SEEK_SET));
    show(f, "getc", getc(f));
    int n = 0;
    char w[8] = "";
    rewind(f);
    show(f, "fscanf", fscanf(f, "line%d %7s", &n, w));
    printf("  n %d w %s\n", n, w);
    show(f, "ungetc", ungetc('Q', f));
    show(f, "getc", getc(f));
    closing(f);

    fill(1);
    f = fmemopen(mem, SIZE, "a+");
    show(f, "getc", getc(f));
    show(f, "fputc", fputc('Z', f));
    show(f, "fflush", fflush(f));
    dump("after fflush");
    show(f, "fseek 0 SET", fseek(f, 0, SEEK_SET));
    show(f, "getc", getc(f));
    show(f, "fseek 9 SET", fseek(f, 9, SEEK_SET));
    show(f, "getc", getc(f));
    closing(f);
}

int main(void)
{
    errno = 0;
    FILE *bad = fmemopen(mem, SIZE, "x");
    printf("mode x: %s errno %d\n", bad ? "FILE" : "NULL", errno);
    for (size_t i = 0; i < NMODES; i++) {
        const char *m = modes[i];
        write_case(m, 1, "12", 2, 0);
        write_case(m, 1, "1234567", 7, 0);
        write_case(m, 1, "12345678", 8, 0);
        write_case(m, 1, "123456789", 9, 0);
        write_case(m, 0, "12", 2, 0);
        write_case(m, 1, "123456789", 9, 1);
        write_case(m, 1, "1234", 4, 1);
        seek_case(m, 1);
        seek_case(m, 0);
        read_case(m, 1);
        read_case(m, 0);
        update_case(m);
        nul_data_case(m);
        size_zero(m, 0);
        size_zero(m, 1);
        null_buf(m);
    }
    big_writes();
    line_buffered();
    reads_then_seeks();
    return 0;
}
