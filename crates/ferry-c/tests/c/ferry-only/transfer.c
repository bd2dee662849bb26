/* ferry/transfer.h: fy_transfer between files and pipes, its stats, and
 * its errors (a bad descriptor, a pipe with no reader: EPIPE, no SIGPIPE
 * death although this program keeps the default disposition). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ferry/transfer.h>

#include "check.h"

#define N 300007

static unsigned char data[N];

static void make_input(const char *name)
{
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 31 + i / 251);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, data, N) == N);
    CHECK(close(fd) == 0);
}

/* The whole file `name` equals data[from..N). */
static void check_file(const char *name, size_t from)
{
    static unsigned char back[N + 1];
    int fd = open(name, O_RDONLY);
    CHECK(fd >= 0);
    size_t got = 0;
    ssize_t n;
    while ((n = read(fd, back + got, sizeof back - got)) > 0)
        got += (size_t)n;
    CHECK(n == 0);
    close(fd);
    CHECK(got == N - from);
    CHECK(memcmp(back, data + from, got) == 0);
}

struct drain {
    int fd;
    size_t got;
    int same;
};

/* Reads the pipe to its end, comparing with data. */
static void *drain(void *arg)
{
    struct drain *d = arg;
    unsigned char buf[65536];
    ssize_t n;
    d->same = 1;
    while ((n = read(d->fd, buf, sizeof buf)) > 0) {
        if (d->got + (size_t)n > N || memcmp(buf, data + d->got, (size_t)n) != 0)
            d->same = 0;
        d->got += (size_t)n;
    }
    return NULL;
}

/* Writes all of data into the pipe, then closes it. */
static void *feed(void *arg)
{
    int fd = *(int *)arg;
    size_t done = 0;
    while (done < N) {
        ssize_t n = write(fd, data + done, N - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    return NULL;
}

int main(void)
{
    fy_transfer_stats st;
    make_input("in");

    /* file -> file, from an offset: copy_file_range, both offsets moved. */
    int in = open("in", O_RDONLY);
    int out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(in >= 0 && out >= 0);
    CHECK(lseek(in, 7, SEEK_SET) == 7);
    CHECK(fy_transfer(in, out, &st) == 0);
    CHECK(st.bytes == N - 7 && st.failed_side == 0);
    CHECK(st.copy_file_range_bytes + st.sendfile_bytes + st.read_write_bytes == N - 7);
    CHECK(st.read_write_bytes == 0);
    CHECK(st.finished_by == FY_METHOD_COPY_FILE_RANGE);
    CHECK(st.copy_file_range_calls >= 2);
    CHECK(lseek(in, 0, SEEK_CUR) == N && lseek(out, 0, SEEK_CUR) == N - 7);
    close(out);
    check_file("out", 7);
    /* Again from the end: nothing more, and stats may be NULL. */
    out = open("out", O_WRONLY | O_APPEND);
    CHECK(fy_transfer(in, out, NULL) == 0);
    close(out);
    check_file("out", 7);

    /* file -> pipe: splice; a thread reads the other end. */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(lseek(in, 0, SEEK_SET) == 0);
    struct drain d = {p[0], 0, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, drain, &d) == 0);
    CHECK(fy_transfer(in, p[1], &st) == 0);
    close(p[1]);
    pthread_join(t, NULL);
    close(p[0]);
    CHECK(d.got == N && d.same);
    CHECK(st.bytes == N && st.splice_bytes == N && st.read_write_bytes == 0);
    CHECK(st.finished_by == FY_METHOD_SPLICE && st.splice_calls >= 2);

    /* pipe -> file: every byte, in order. */
    CHECK(pipe(p) == 0);
    int w = p[1];
    CHECK(pthread_create(&t, NULL, feed, &w) == 0);
    out = open("from-pipe", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(out >= 0);
    CHECK(fy_transfer(p[0], out, &st) == 0);
    pthread_join(t, NULL);
    close(p[0]);
    close(out);
    CHECK(st.bytes == N && st.failed_side == 0 && st.finished_by != 0);
    check_file("from-pipe", 0);

    /* A pipe with no reader: EPIPE on the write side, nothing arrived,
     * and this process is still here. */
    CHECK(pipe(p) == 0);
    close(p[0]);
    CHECK(lseek(in, 0, SEEK_SET) == 0);
    errno = 0;
    CHECK(fy_transfer(in, p[1], &st) == -1 && errno == EPIPE);
    CHECK(st.failed_side == FY_TRANSFER_WRITE && st.bytes == 0 && st.finished_by == 0);
    close(p[1]);

    /* A file into itself in append mode: refused with EINVAL before a
     * byte moves (it used to grow the file until the disk was full). */
    {
        int self_in = open("in", O_RDONLY);
        int self_out = open("in", O_WRONLY | O_APPEND);
        CHECK(self_in >= 0 && self_out >= 0);
        errno = 0;
        CHECK(fy_transfer(self_in, self_out, &st) == -1 && errno == EINVAL);
        CHECK(st.bytes == 0);
        close(self_in);
        close(self_out);
        check_file("in", 0);
    }

    /* Bad descriptors: EBADF, from a negative number and a closed one. */
    errno = 0;
    CHECK(fy_transfer(-1, 1, &st) == -1 && errno == EBADF);
    CHECK(st.bytes == 0);
    out = open("never", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(out >= 0);
    int closed = open("in", O_RDONLY); /* a number no open reuses below */
    CHECK(closed >= 0 && close(closed) == 0);
    errno = 0;
    CHECK(fy_transfer(closed, out, &st) == -1 && errno == EBADF);
    CHECK(st.failed_side == FY_TRANSFER_READ && st.bytes == 0);
    errno = 0;
    CHECK(fy_transfer(in, closed, &st) == -1 && errno == EBADF);
    CHECK(st.failed_side == FY_TRANSFER_WRITE);
    close(out);
    close(in);

    printf("ok\n");
    return 0;
}
