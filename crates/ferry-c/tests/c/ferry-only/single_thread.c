/* A FILE that reads a large file leaves the process single-threaded, so
 * the inline getc stays lock-free (glibc's __libc_single_threaded rule).
 * Mapped streams hold a read lease whose breaks ferry hears on a thread
 * of its own; that thread must only appear for fy_sopen, never for
 * fopen, fdopen, freopen or standard input. And fy_set_pipe_size grows
 * a pipe only when asked, and refuses what is not a pipe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/single_threaded.h>
#include <ferry/asi.h>

#include "check.h"

#define SIZE (4 << 20)

static long count_a(FILE *f)
{
    long n = 0;
    int c;
    while ((c = getc(f)) != EOF)
        n += c == 'a';
    return n;
}

int main(void)
{
    FILE *w = fopen("big", "w");
    CHECK(w != NULL);
    for (int i = 0; i < SIZE; i++)
        putc('a' + i % 26, w);
    CHECK(fclose(w) == 0);
    CHECK(__libc_single_threaded);

    FILE *r = fopen("big", "r");
    CHECK(r != NULL);
    CHECK(count_a(r) == (SIZE + 25) / 26);
    CHECK(__libc_single_threaded);
    CHECK(freopen("big", "r", r) != NULL);
    CHECK(count_a(r) == (SIZE + 25) / 26);
    CHECK(fclose(r) == 0);

    int fd = open("big", O_RDONLY);
    CHECK(fd >= 0);
    r = fdopen(fd, "r");
    CHECK(r != NULL);
    CHECK(count_a(r) == (SIZE + 25) / 26);
    CHECK(fclose(r) == 0);

    CHECK(freopen("big", "r", stdin) != NULL);
    CHECK(count_a(stdin) == (SIZE + 25) / 26);
    CHECK(__libc_single_threaded);

    /* The pipe keeps its size until asked. */
    int p[2];
    CHECK(pipe(p) == 0);
    int before = fcntl(p[1], F_GETPIPE_SZ);
    FILE *pw = fdopen(p[1], "w");
    CHECK(pw != NULL);
    CHECK(fputs("x", pw) >= 0 && fflush(pw) == 0);
    CHECK(fcntl(p[1], F_GETPIPE_SZ) == before);
    ssize_t got = fy_set_pipe_size(pw, 1 << 20);
    /* An unprivileged caller may be held to /proc/sys/fs/pipe-max-size. */
    CHECK(got >= (1 << 20) || got == -EPERM);
    if (got > 0)
        CHECK(fcntl(p[1], F_GETPIPE_SZ) == got);
    CHECK(fclose(pw) == 0);
    close(p[0]);

    FILE *file = fopen("big", "r");
    CHECK(file != NULL);
    CHECK(fy_set_pipe_size(file, 1 << 20) == -EINVAL);
    CHECK(fclose(file) == 0);
    CHECK(__libc_single_threaded);

    /* A mapped stream may start the lease thread: that is fy_sopen's. */
    puts("ok");
    return 0;
}
