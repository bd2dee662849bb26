/* ferry/transfer.h's endpoints and fy_between: a file range into a
 * socket as fixed 512-byte records padded at the end (case 4), a ferry
 * buffer into a pipe, two plain descriptors by the kernel's path, and
 * the errors (a memory endpoint as destination, a pipe as a file range,
 * bad arguments, a reader that has gone), and case switching into a
 * non-blocking pipe whose reader is slow, in the stats. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ferry/buf.h>
#include <ferry/transfer.h>

#include "check.h"

#define N 100003

static unsigned char data[N];

struct drain {
    int fd;
    unsigned char *got;
    size_t len;
};

static void *drain(void *arg)
{
    struct drain *d = arg;
    d->got = malloc(4 * N);
    CHECK(d->got != NULL);
    ssize_t n;
    while ((n = read(d->fd, d->got + d->len, 4 * N - d->len)) > 0)
        d->len += (size_t)n;
    CHECK(n == 0);
    return NULL;
}

/* Reads fd to its end 16 KiB at a time, pausing 1 ms between reads. */
static void *slow_drain(void *arg)
{
    struct drain d0 = *(struct drain *)arg, *d = arg;
    (void)d0;
    d->got = malloc(41 * N);
    CHECK(d->got != NULL);
    ssize_t n;
    while ((n = read(d->fd, d->got + d->len, 16384)) > 0) {
        d->len += (size_t)n;
        CHECK(d->len <= 40 * (size_t)N);
        usleep(1000);
    }
    CHECK(n == 0);
    return NULL;
}

static int temp_file(void)
{
    char name[] = "between-XXXXXX";
    int fd = mkstemp(name);
    CHECK(fd >= 0);
    unlink(name);
    CHECK(write(fd, data, N) == N);
    return fd;
}

int main(void)
{
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 7 + i / 253);
    int file = temp_file();

    /* 1. Bytes [1000, 1000 + 50000) of the file into a socket as 512-byte
     * records, the last padded with 0xEE: case 4 (variable 1 MiB reads
     * into fixed 512-byte blocks), nothing copied in user space. */
    {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        struct drain d = {sv[1], NULL, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, drain, &d) == 0);
        fy_endpoint *src = fy_endpoint_file_range(file, 1000, 50000);
        fy_endpoint *dst = fy_endpoint_fd(sv[0]);
        CHECK(src && dst);
        CHECK(fy_endpoint_impose(dst, FY_BLOCK_FIXED, 512) == 0);
        fy_between_stats st;
        CHECK(fy_between(src, dst, 0xEE, &st) == 0);
        fy_endpoint_free(src);
        fy_endpoint_free(dst);
        close(sv[0]);
        CHECK(pthread_join(t, NULL) == 0);
        size_t blocks = (50000 + 511) / 512;
        CHECK(d.len == blocks * 512);
        CHECK(memcmp(d.got, data + 1000, 50000) == 0);
        for (size_t i = 50000; i < d.len; i++)
            CHECK(d.got[i] == 0xEE);
        CHECK(st.case_number == 4);
        CHECK(st.transfer.bytes == d.len);
        CHECK(st.blocks_out == blocks);
        CHECK(st.padding == blocks * 512 - 50000);
        CHECK(st.bytes_copied == 0);
        CHECK(st.transfer.failed_side == 0);
        /* The descriptor's own offset did not move. */
        CHECK(lseek(file, 0, SEEK_CUR) == N);
        free(d.got);
        close(sv[1]);
    }

    /* 2. A ferry buffer into a pipe (released before the transfer: the
     * endpoint holds its own reference). */
    {
        int p[2];
        CHECK(pipe(p) == 0);
        struct drain d = {p[0], NULL, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, drain, &d) == 0);
        fy_buf *b = fy_buf_copy(data, N);
        CHECK(b != NULL);
        fy_endpoint *src = fy_endpoint_buf(b);
        fy_buf_release(b);
        fy_endpoint *dst = fy_endpoint_fd(p[1]);
        CHECK(src && dst);
        fy_between_stats st;
        CHECK(fy_between(src, dst, FY_NO_PAD, &st) == 0);
        fy_endpoint_free(src);
        fy_endpoint_free(dst);
        close(p[1]);
        CHECK(pthread_join(t, NULL) == 0);
        CHECK(d.len == N && memcmp(d.got, data, N) == 0);
        CHECK(st.transfer.bytes == N);
        CHECK(st.case_number >= 1 && st.case_number <= 4);
        free(d.got);
        close(p[0]);
    }

    /* 3. Two plain descriptors: the kernel's path, from the file's offset. */
    {
        CHECK(lseek(file, 3, SEEK_SET) == 3);
        int p[2];
        CHECK(pipe(p) == 0);
        struct drain d = {p[0], NULL, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, drain, &d) == 0);
        fy_endpoint *src = fy_endpoint_fd(file), *dst = fy_endpoint_fd(p[1]);
        fy_between_stats st;
        CHECK(fy_between(src, dst, FY_NO_PAD, &st) == 0);
        fy_endpoint_free(src);
        fy_endpoint_free(dst);
        close(p[1]);
        CHECK(pthread_join(t, NULL) == 0);
        CHECK(d.len == N - 3 && memcmp(d.got, data + 3, N - 3) == 0);
        CHECK(st.transfer.splice_bytes == N - 3);
        CHECK(st.transfer.read_write_bytes == 0);
        free(d.got);
        close(p[0]);
    }

    /* 4. A non-blocking pipe whose reader is slow: the transfer switches
     * to buffering while the pipe is full, and the stats say so. */
    {
        char name[] = "between-big-XXXXXX";
        int big = mkstemp(name);
        CHECK(big >= 0);
        unlink(name);
        for (int i = 0; i < 40; i++)
            CHECK(write(big, data, N) == N);
        CHECK(lseek(big, 0, SEEK_SET) == 0);
        int p[2];
        CHECK(pipe(p) == 0);
        CHECK(fcntl(p[1], F_SETFL, O_NONBLOCK) == 0);
        struct drain d = {p[0], NULL, 0};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, slow_drain, &d) == 0);
        fy_endpoint *src = fy_endpoint_fd(big), *dst = fy_endpoint_fd(p[1]);
        fy_between_stats st;
        CHECK(fy_between(src, dst, FY_NO_PAD, &st) == 0);
        fy_endpoint_free(src);
        fy_endpoint_free(dst);
        close(p[1]);
        CHECK(pthread_join(t, NULL) == 0);
        CHECK(d.len == 40 * (size_t)N);
        for (int i = 0; i < 40; i++)
            CHECK(memcmp(d.got + (size_t)i * N, data, N) == 0);
        CHECK(st.transfer.bytes == 40 * (uint64_t)N);
        /* From sendfile to buffering at the first full pipe (the file is
         * smaller than the transfer's share, so it may be read ahead
         * whole and never go back). */
        CHECK(st.switches >= 1);
        CHECK(st.peak_buffer_bytes > 0);
        CHECK(st.memcpy_bytes == st.bytes_copied);
        free(d.got);
        close(p[0]);
        close(big);
    }

    /* 5. Errors. */
    {
        int p[2];
        CHECK(pipe(p) == 0);
        errno = 0;
        CHECK(fy_endpoint_file_range(p[0], 0, FY_TO_END) == NULL && errno == ESPIPE);
        errno = 0;
        CHECK(fy_endpoint_fd(-1) == NULL && errno == EBADF);
        errno = 0;
        CHECK(fy_endpoint_buf(NULL) == NULL && errno == EINVAL);
        fy_endpoint *e = fy_endpoint_fd(p[1]);
        CHECK(e != NULL);
        errno = 0;
        CHECK(fy_endpoint_impose(e, FY_BLOCK_FIXED, 0) == -1 && errno == EINVAL);
        errno = 0;
        CHECK(fy_endpoint_impose(e, 7, 512) == -1 && errno == EINVAL);
        CHECK(fy_endpoint_impose(NULL, FY_BLOCK_FIXED, 512) == -1);
        fy_buf *b = fy_buf_copy("abc", 3);
        fy_endpoint *mem = fy_endpoint_buf(b);
        fy_buf_release(b);
        fy_between_stats st;
        errno = 0;
        CHECK(fy_between(e, mem, FY_NO_PAD, &st) == -1 && errno == EINVAL);
        errno = 0;
        CHECK(fy_between(NULL, e, FY_NO_PAD, &st) == -1 && errno == EINVAL);
        errno = 0;
        CHECK(fy_between(mem, e, 300, &st) == -1 && errno == EINVAL);
        /* The reader has gone: EPIPE on the write side, no SIGPIPE death
         * (this program keeps the default disposition). */
        close(p[0]);
        fy_endpoint *src = fy_endpoint_file_range(file, 0, FY_TO_END);
        CHECK(fy_endpoint_impose(e, FY_BLOCK_VARIABLE, 4096) == 0);
        errno = 0;
        CHECK(fy_between(src, e, FY_NO_PAD, &st) == -1 && errno == EPIPE);
        CHECK(st.transfer.failed_side == FY_TRANSFER_WRITE);
        CHECK(st.transfer.bytes == 0);
        fy_endpoint_free(src);
        fy_endpoint_free(mem);
        fy_endpoint_free(e);
        fy_endpoint_free(NULL);
        close(p[1]);
    }
    close(file);
    puts("ok");
    return 0;
}
