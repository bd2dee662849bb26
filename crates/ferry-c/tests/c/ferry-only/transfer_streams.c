/* fy_transfer on descriptors a ferry stream reads (ferry/unistd.h's
 * open/read/lseek, a FILE's fileno): the transfer starts where the
 * program's reads stopped, not where the stream's positional reads left
 * the kernel's offset, and the program's next read, lseek or ftell goes
 * on after what was transferred. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <ferry/transfer.h>

#include "check.h"

/* The whole file `name` equals `want`. */
static void check_file(const char *name, const char *want)
{
    char back[256];
    int fd = open(name, O_RDONLY);
    CHECK(fd >= 0);
    size_t got = 0;
    ssize_t n;
    while ((n = read(fd, back + got, sizeof back - got)) > 0)
        got += (size_t)n;
    CHECK(n == 0);
    close(fd);
    if (got != strlen(want) || memcmp(back, want, got) != 0) {
        fprintf(stderr, "%s: %.*s\n", name, (int)got, back);
        CHECK(!"the file as expected");
    }
}

int main(void)
{
    fy_transfer_stats st;
    char b[4];
    int fd = open("in", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10 && close(fd) == 0);

    /* Three bytes read through the emulated read: the transfer takes the
     * other seven, and the descriptor then stands at the end. */
    int in = open("in", O_RDONLY);
    int out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(in >= 0 && out >= 0);
    CHECK(read(in, b, 3) == 3 && memcmp(b, "012", 3) == 0);
    CHECK(write(out, "header\n", 7) == 7);
    CHECK(fy_transfer(in, out, &st) == 0);
    CHECK(st.bytes == 7 && st.failed_side == 0);
    CHECK(lseek(in, 0, SEEK_CUR) == 10);
    CHECK(read(in, b, 3) == 0);
    CHECK(lseek(out, 0, SEEK_CUR) == 14);
    CHECK(write(out, "T\n", 2) == 2);
    CHECK(close(out) == 0);
    check_file("out", "header\n3456789T\n");

    /* An emulated lseek back: the transfer starts there. */
    CHECK(lseek(in, 5, SEEK_SET) == 5);
    out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(out >= 0);
    CHECK(fy_transfer(in, out, &st) == 0 && st.bytes == 5);
    CHECK(lseek(in, 0, SEEK_CUR) == 10);
    CHECK(close(out) == 0 && close(in) == 0);
    check_file("out", "56789");

    /* A FILE that read two bytes (and buffered the rest): the transfer
     * starts after them, and the FILE is at the end afterwards. */
    FILE *f = fopen("in", "r");
    CHECK(f != NULL);
    CHECK(fgetc(f) == '0' && fgetc(f) == '1');
    out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(out >= 0);
    CHECK(fy_transfer(fileno(f), out, &st) == 0 && st.bytes == 8);
    CHECK(fgetc(f) == EOF && ftell(f) == 10);
    CHECK(close(out) == 0 && fclose(f) == 0);
    check_file("out", "23456789");

    printf("ok\n");
    return 0;
}
