/* Files: every fopen mode, reads, writes, seeks, ungetc, append, long
 * lines, interleaved reading and writing. Run in a fresh directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

static void show(const char *what, FILE *f)
{
    printf("%s: tell %ld eof %d err %d\n", what, ftell(f), feof(f), ferror(f));
}

static void dump(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("dump %s: %s\n", path, strerror(errno));
        return;
    }
    int c;
    long n = 0;
    unsigned long h = 5381;
    while ((c = fgetc(f)) != EOF) {
        h = h * 33 + (unsigned)c;
        n++;
    }
    printf("dump %s: %ld bytes hash %lu\n", path, n, h);
    fclose(f);
}

int main(void)
{
    /* w, then r: bytes of every value, fputc/putc/fwrite/fputs/puts. */
    FILE *f = fopen("a", "w");
    for (int i = 0; i < 256; i++)
        fputc(i, f);
    for (int i = 0; i < 100000; i++)
        putc('a' + i % 26, f);
    fwrite("fwrite\n", 1, 7, f);
    fputs("fputs\n", f);
    show("written", f);
    fclose(f);
    dump("a");

    f = fopen("a", "r");
    unsigned char buf[70000];
    size_t n = fread(buf, 1, 300, f);
    printf("fread %zu first %d last %d\n", n, buf[0], buf[299]);
    n = fread(buf, 7, 10000, f);
    printf("fread items %zu\n", n);
    show("after fread", f);
    n = fread(buf, 1, sizeof buf, f);
    printf("fread rest %zu\n", n);
    show("at end", f);
    printf("getc at end %d\n", getc(f));
    clearerr(f);
    show("cleared", f);

    /* ungetc at offset 0, seek after ungetc. */
    rewind(f);
    printf("ungetc %d\n", ungetc('Z', f));
    printf("getc %d\n", getc(f));
    printf("tell %ld\n", ftell(f));
    printf("getc %d\n", getc(f));
    ungetc('Q', f);
    printf("seek %d\n", fseek(f, 10, SEEK_CUR));
    printf("after seek getc %d tell %ld\n", getc(f), ftell(f));
    ungetc(getc(f), f);
    printf("same byte back: tell %ld getc %d\n", ftell(f), getc(f));
    printf("seek end %d tell %ld\n", fseek(f, -3, SEEK_END), ftell(f));
    printf("getc %d %d %d %d\n", getc(f), getc(f), getc(f), getc(f));
    errno = 0;
    int sr = fseek(f, -1, SEEK_SET);
    printf("seek negative %d errno %s\n", sr, strerror(errno));
    printf("seek bad whence %d\n", fseek(f, 0, 42));
    fpos_t pos;
    fseek(f, 1234, SEEK_SET);
    fgetpos(f, &pos);
    getc(f);
    getc(f);
    fsetpos(f, &pos);
    printf("fsetpos back: tell %ld getc %d\n", ftell(f), getc(f));
    /* Writing a read-only stream. */
    printf("fputc on r: %d ", fputc('x', f));
    printf("errno %s err %d\n", strerror(errno), ferror(f));
    fclose(f);

    /* Reading a write-only stream. */
    f = fopen("b", "w");
    printf("getc on w: %d ", getc(f));
    printf("errno %s err %d\n", strerror(errno), ferror(f));
    clearerr(f);
    char small[8];
    printf("fread on w: %zu err %d\n", fread(small, 1, 8, f), ferror(f));
    fclose(f);

    /* Long lines: getline and getdelim past any buffer. */
    f = fopen("long", "w");
    for (int k = 0; k < 3; k++) {
        for (long i = 0; i < 3000000L * (k + 1) / 2; i++)
            putc('0' + (i + k) % 10, f);
        putc('\n', f);
    }
    fputs("tail;with;semicolons", f);
    fclose(f);
    f = fopen("long", "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) != -1)
        printf("getline %zd first %c last %d cap>=len %d\n", len, line[0], line[len - 1],
               cap > (size_t)len);
    show("getline end", f);
    rewind(f);
    fseek(f, -20, SEEK_END);
    while ((len = getdelim(&line, &cap, ';', f)) != -1)
        printf("getdelim %zd [%s]\n", len, line);
    rewind(f);
    char shortbuf[10];
    printf("fgets [%s]\n", fgets(shortbuf, sizeof shortbuf, f));
    printf("fgets n=1 [%s]\n", fgets(shortbuf, 1, f));
    fseek(f, -5, SEEK_END);
    printf("fgets end [%s]\n", fgets(shortbuf, sizeof shortbuf, f));
    printf("fgets eof %p\n", (void *)fgets(shortbuf, sizeof shortbuf, f));
    free(line);
    fclose(f);

    /* Append mode with seeks: writes always land at the end. */
    f = fopen("app", "w");
    fputs("0123456789", f);
    fclose(f);
    f = fopen("app", "a");
    show("a opened", f);
    fputs("AB", f);
    fseek(f, 0, SEEK_SET);
    fputs("CD", f);
    show("a written", f);
    fclose(f);
    dump("app");
    f = fopen("app", "a+");
    show("a+ opened", f);
    printf("a+ reads from %c\n", getc(f));
    fseek(f, 2, SEEK_SET);
    fputs("EF", f);
    fseek(f, 0, SEEK_SET);
    char all[64] = {0};
    fread(all, 1, sizeof all - 1, f);
    printf("a+ contents [%s]\n", all);
    fclose(f);

    /* r+ and w+: reading and writing with fseek between them. */
    f = fopen("rw", "w+");
    fputs("hello world\n", f);
    fseek(f, 0, SEEK_SET);
    printf("w+ read [%c%c%c]\n", getc(f), getc(f), getc(f));
    fseek(f, 0, SEEK_CUR);
    fputs("LO", f);
    fseek(f, 0, SEEK_SET);
    memset(all, 0, sizeof all);
    fread(all, 1, 20, f);
    printf("w+ contents [%s]\n", all);
    fclose(f);
    f = fopen("rw", "r+");
    fseek(f, 6, SEEK_SET);
    fputs("WORLD", f);
    fflush(f);
    fseek(f, 0, SEEK_SET);
    memset(all, 0, sizeof all);
    fread(all, 1, 20, f);
    printf("r+ contents [%s]\n", all);
    for (int i = 0; i < 5000; i++) {
        fseek(f, (i * 7) % 12, SEEK_SET);
        int c = getc(f);
        fseek(f, (i * 5) % 12, SEEK_SET);
        putc(c == EOF ? '?' : c, f);
    }
    fclose(f);
    dump("rw");

    /* x: exclusive create. */
    f = fopen("rw", "wx");
    printf("wx on existing: %p %s\n", (void *)f, strerror(errno));
    f = fopen("new", "wxe");
    printf("wxe on new: %d\n", f != NULL);
    fclose(f);

    /* Lines read and written through the windows, mixed with every other
     * call: getline, fgets, getc, ungetc, fread, ftell and fseek between
     * them; fputs runs of short strings, then fwrite, putc, fseek. */
    f = fopen("lines", "w");
    for (int i = 0; i < 3000; i++) {
        fputs("line ", f);
        fputs(i % 7 ? "short" : "", f);
        fprintf(f, " %d", i);
        fputs("\n", f);
        if (i % 500 == 0) {
            printf("fputs tell %ld\n", ftell(f));
            putc('#', f);
            fwrite("w\n", 1, 2, f);
        }
    }
    fseek(f, 3, SEEK_SET);
    fputs("E", f);
    fclose(f);
    f = fopen("lines", "r");
    line = malloc(16);
    cap = 16;
    for (int i = 0; i < 2000; i++) {
        switch (i % 6) {
        case 0:
            len = getline(&line, &cap, f);
            printf("%d getline %zd [%.*s] tell %ld\n", i, len, (int)(len > 0 ? len - 1 : 0), line, ftell(f));
            break;
        case 1: {
            int c = getc(f);
            ungetc(c, f);
            len = getline(&line, &cap, f);
            printf("%d getc+ungetc+getline %c %zd\n", i, c, len);
            break;
        }
        case 2:
            printf("%d fgets [%s]\n", i, fgets(small, sizeof small, f) ? small : "(null)");
            break;
        case 3: {
            char b[5] = {0};
            size_t k = fread(b, 1, 4, f);
            len = getdelim(&line, &cap, ' ', f);
            printf("%d fread %zu [%s] getdelim %zd [%s]\n", i, k, b, len, len > 0 ? line : "");
            break;
        }
        case 4:
            fseek(f, -3, SEEK_CUR);
            len = getline(&line, &cap, f);
            printf("%d fseek-3 getline %zd\n", i, len);
            break;
        default:
            ungetc('U', f);
            len = getline(&line, &cap, f);
            printf("%d ungetc U getline %zd [%c]\n", i, len, line[0]);
        }
    }
    show("lines end", f);
    fclose(f);
    free(line);
    return 0;
}
