/* ferry/exchange.h: buffers exchanged, not bytes copied — round trips
 * through a pipe and a socketpair, a mapped file written piece by piece,
 * the end of input, and the errors: a pointer that is not a ferry buffer,
 * a double deallocate, a closed pipe (EPIPE, no SIGPIPE death), a file
 * past RLIMIT_FSIZE (EFBIG with the count that fit, no SIGXFSZ death). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <ferry/exchange.h>

#include "check.h"

#define N 500009

static unsigned char data[N];

struct side {
    int fd;
    size_t got;
    int same;
};

/* Writes all of data to fd in ferry buffers of varying sizes, closes fd. */
static void *produce(void *arg)
{
    int fd = *(int *)arg;
    size_t done = 0, k = 0;
    while (done < N) {
        size_t len = 1 + (k * 7919) % 70000;
        if (len > N - done)
            len = N - done;
        unsigned char *p;
        if (k % 2 == 0) {
            p = fy_uf_allocate(len);
            CHECK(p != NULL && ((uintptr_t)p & 4095) == 0);
        } else {
            void *b;
            ssize_t cap = fy_uf_get(len, &b);
            CHECK(cap >= (ssize_t)len && b != NULL);
            p = b;
        }
        memcpy(p, data + done, len);
        CHECK(fy_uf_write(fd, p, len) == (ssize_t)len);
        done += len;
        k++;
    }
    close(fd);
    return NULL;
}

/* Reads fd to its end with fy_uf_read, comparing with data. */
static void *consume(void *arg)
{
    struct side *s = arg;
    void *buf;
    ssize_t n;
    s->same = 1;
    while ((n = fy_uf_read(s->fd, &buf, 65536)) > 0) {
        CHECK(buf != NULL && n <= 65536);
        if (s->got + (size_t)n > N || memcmp(buf, data + s->got, (size_t)n) != 0)
            s->same = 0;
        s->got += (size_t)n;
        CHECK(fy_uf_deallocate(buf, (size_t)n) == 0);
    }
    CHECK(n == 0 && buf == NULL);
    return NULL;
}

static void round_trip(int rfd, int wfd)
{
    pthread_t t;
    struct side s = {rfd, 0, 0};
    CHECK(pthread_create(&t, NULL, consume, &s) == 0);
    produce(&wfd);
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(s.got == N && s.same);
}

int main(int argc, char **argv)
{
    (void)argc;
    CHECK(chdir(argv[1]) == 0);
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 131 + i / 4099);

    /* A pipe. */
    int p[2];
    CHECK(pipe(p) == 0);
    round_trip(p[0], p[1]);
    close(p[0]);

    /* A socketpair, with an echo in between: every buffer read is
     * written back as it is, by hand-over. */
    int sv[2], ev[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, ev) == 0);
    pthread_t prod;
    CHECK(pthread_create(&prod, NULL, produce, &sv[0]) == 0);
    struct side s = {ev[1], 0, 0};
    pthread_t cons;
    CHECK(pthread_create(&cons, NULL, consume, &s) == 0);
    void *buf;
    ssize_t n;
    size_t echoed = 0;
    while ((n = fy_uf_read(sv[1], &buf, 30000)) > 0) {
        CHECK(fy_uf_write(ev[0], buf, (size_t)n) == n);
        echoed += (size_t)n;
    }
    CHECK(n == 0 && echoed == N);
    close(ev[0]);
    CHECK(pthread_join(prod, NULL) == 0 && pthread_join(cons, NULL) == 0);
    CHECK(s.got == N && s.same);
    close(sv[1]);
    close(ev[1]);

    /* A file, mapped, written piece by piece (fbufs' ftp loop), then the
     * mapping given back. */
    int f = open("in", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(f >= 0 && write(f, data, N) == N && close(f) == 0);
    f = open("in", O_RDONLY);
    const unsigned char *map = fy_uf_mmap(f, 0, N);
    CHECK(map != NULL && memcmp(map, data, N) == 0);
    int out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (size_t done = 0; done < N; done += 8192) {
        size_t c = N - done < 8192 ? N - done : 8192;
        CHECK(fy_uf_write(out, map + done, c) == (ssize_t)c);
    }
    CHECK(fy_uf_deallocate((void *)map, N) == 0);
    CHECK(fy_uf_deallocate((void *)map, N) == -1 && errno == EINVAL);
    close(out);
    out = open("out", O_RDONLY);
    size_t got = 0;
    while ((n = fy_uf_read(out, &buf, 1 << 20)) > 0) {
        CHECK(memcmp(buf, data + got, (size_t)n) == 0);
        got += (size_t)n;
        CHECK(fy_uf_deallocate(buf, (size_t)n) == 0);
    }
    CHECK(n == 0 && got == N);
    CHECK(fy_uf_mmap(f, 0, 0) == NULL && errno == EINVAL);
    CHECK(fy_uf_mmap(-1, 0, 10) == NULL && errno == EBADF);
    close(f);
    close(out);

    /* Pointers that are not ferry buffers: EINVAL, nothing written. */
    CHECK(pipe(p) == 0);
    unsigned char stack[64] = "not a ferry buffer";
    unsigned char *heap = malloc(4096);
    CHECK(fy_uf_write(p[1], stack, sizeof stack) == -1 && errno == EINVAL);
    CHECK(fy_uf_write(p[1], heap, 10) == -1 && errno == EINVAL);
    CHECK(fy_uf_write(p[1], NULL, 0) == -1 && errno == EINVAL);
    unsigned char *a = fy_uf_allocate(100);
    CHECK(a != NULL);
    /* Past the buffer's end, or starting before it: EINVAL, and the
     * buffer is still the caller's. */
    CHECK(fy_uf_write(p[1], a, 4097) == -1 && errno == EINVAL);
    CHECK(fy_uf_write(p[1], a - 1, 10) == -1 && errno == EINVAL);
    CHECK(fy_uf_deallocate(heap, 10) == -1 && errno == EINVAL);
    CHECK(fy_uf_deallocate(a + 1, 10) == -1 && errno == EINVAL);
    CHECK(fy_uf_deallocate(a, 1 << 20) == -1 && errno == EINVAL);
    free(heap);
    /* A write from inside the buffer takes the whole buffer. */
    memcpy(a, "0123456789", 10);
    CHECK(fy_uf_write(p[1], a + 3, 4) == 4);
    CHECK(fy_uf_write(p[1], a, 1) == -1 && errno == EINVAL);
    CHECK(fy_uf_deallocate(a, 100) == -1 && errno == EINVAL);
    char back[8] = {0};
    CHECK(read(p[0], back, sizeof back) == 4 && memcmp(back, "3456", 4) == 0);
    /* Double deallocate. */
    a = fy_uf_allocate(10);
    CHECK(fy_uf_deallocate(a, 10) == 0);
    CHECK(fy_uf_deallocate(a, 10) == -1 && errno == EINVAL);

    /* Bad arguments. */
    CHECK(fy_uf_read(p[0], NULL, 10) == -1 && errno == EINVAL);
    CHECK(fy_uf_read(p[0], &buf, 0) == -1 && errno == EINVAL && buf == NULL);
    CHECK(fy_uf_read(-1, &buf, 10) == -1 && errno == EBADF);
    CHECK(fy_uf_allocate((size_t)-1) == NULL && errno == EINVAL);
    CHECK(fy_uf_get((size_t)-1, &buf) == -1 && errno == EINVAL && buf == NULL);

    /* A pipe with no reader: EPIPE, and this program (default SIGPIPE
     * disposition) lives on. */
    close(p[0]);
    a = fy_uf_allocate(10);
    CHECK(fy_uf_write(p[1], a, 10) == -1 && errno == EPIPE);
    CHECK(fy_uf_deallocate(a, 10) == -1 && errno == EINVAL);
    close(p[1]);

    /* fy_uf_write_counted: all on success; past RLIMIT_FSIZE (default
     * SIGXFSZ disposition) EFBIG with exactly the bytes that fit, and the
     * program lives on. */
    char tmpl[] = "/tmp/ferry-exchange-XXXXXX";
    int lf = mkstemp(tmpl);
    CHECK(lf >= 0);
    unlink(tmpl);
    size_t sent = 1;
    a = fy_uf_allocate(5000);
    memset(a, 'x', 5000);
    CHECK(fy_uf_write_counted(lf, a, 5000, &sent) == 5000 && sent == 5000);
    struct rlimit lim = {100000, RLIM_INFINITY};
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    unsigned char *big = fy_uf_allocate(300000);
    memset(big, 'y', 300000);
    errno = 0;
    CHECK(fy_uf_write_counted(lf, big, 300000, &sent) == -1 && errno == EFBIG);
    CHECK(sent == 100000 - 5000);
    CHECK(lseek(lf, 0, SEEK_END) == 100000);
    a = fy_uf_allocate(10);
    CHECK(fy_uf_write_counted(lf, a, 10, NULL) == -1 && errno == EFBIG);
    close(lf);

    printf("ok\n");
    return 0;
}
