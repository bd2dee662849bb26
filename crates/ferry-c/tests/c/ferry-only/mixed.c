/* stdio, emulated Unix I/O and ASI on one stream (built with
 * -include ferry/stdio.h -include ferry/unistd.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ferry/asi.h>

#include "check.h"

int main(void)
{
    /* A file of 0..255 repeated. */
    FILE *f = fopen("data", "w");
    for (int i = 0; i < 300000; i++)
        putc(i & 255, f);
    fclose(f);

    /* Reading: fread 10, read 5, salloc continues at 15, getc after it. */
    f = fopen("data", "r");
    unsigned char b[16];
    CHECK(fread(b, 1, 10, f) == 10 && b[9] == 9);
    CHECK(read(fileno(f), b, 5) == 5 && b[0] == 10 && b[4] == 14);
    ssize_t len = 3;
    unsigned char *r = fy_salloc(f, &len);
    CHECK(r && len == 3 && r[0] == 15 && r[2] == 17);
    CHECK(getc(f) == 18);
    CHECK(ftell(f) == 19);
    CHECK(lseek(fileno(f), 0, SEEK_CUR) == 19);
    CHECK(fy_sfree(f, r) == 0);
    CHECK(fy_sfree(f, r) == -EINVAL);
    /* ungetc, then read(2) sees the pushed-back byte first. */
    CHECK(ungetc('Z', f) == 'Z');
    CHECK(read(fileno(f), b, 2) == 2 && b[0] == 'Z' && b[1] == 19);
    /* A region far ahead with sallocat, then stdio goes on after it. */
    len = 100;
    r = fy_sallocat(f, &len, 1000, SEEK_SET);
    CHECK(r && len == 100 && r[0] == (1000 & 255));
    CHECK(getc(f) == (1100 & 255));
    fy_sfree(f, r);
    /* pread does not move the offset. */
    CHECK(pread(fileno(f), b, 4, 256) == 4 && b[0] == 0 && b[3] == 3);
    CHECK(ftell(f) == 1101);
    fclose(f);

    /* Writing: fputs, write(2), an ASI region, printf, in that order. */
    f = fopen("mixed-out", "w");
    fputs("stdio ", f);
    CHECK(write(fileno(f), "unix ", 5) == 5);
    len = 4;
    char *w = fy_salloc(f, &len);
    CHECK(w && len == 4);
    memcpy(w, "asi ", 4);
    CHECK(fy_sfree(f, w) == 0);
    fprintf(f, "printf %d\n", 42);
    fclose(f);
    f = fopen("mixed-out", "r");
    char line[64];
    CHECK(fgets(line, sizeof line, f) && strcmp(line, "stdio unix asi printf 42\n") == 0);
    fclose(f);

    /* A descriptor from open(2) is a stream too: write, lseek, read, dup. */
    int fd = open("via-open", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, "hello world", 11) == 11);
    CHECK(lseek(fd, 6, SEEK_SET) == 6);
    char five[6] = {0};
    CHECK(read(fd, five, 5) == 5 && strcmp(five, "world") == 0);
    int fd2 = dup(fd);
    CHECK(fd2 >= 0 && lseek(fd2, 0, SEEK_CUR) == 11);
    CHECK(pwrite(fd2, "W", 1, 6) == 1);
    CHECK(close(fd) == 0);
    CHECK(lseek(fd2, 0, SEEK_SET) == 0);
    char all[12] = {0};
    CHECK(read(fd2, all, 11) == 11 && strcmp(all, "hello World") == 0);
    CHECK(close(fd2) == 0);
    FILE *g = fopen("via-open", "r");
    CHECK(fgets(all, sizeof all, g) && strcmp(all, "hello World") == 0);
    fclose(g);
    /* fdopen of such a descriptor shares the stream. */
    fd = open("via-open", O_RDONLY);
    CHECK(read(fd, five, 2) == 2);
    g = fdopen(fd, "r");
    CHECK(getc(g) == 'l');
    fclose(g);
    printf("ok\n");
    return 0;
}
