/* ferry/aio.h on both backends: round trips at offsets and at the file
 * position, the start-time end-of-file check, a FIFO nobody writes as
 * the slow device (wait times out, cancel is sticky until cleared, the
 * buffer comes back), a sticky I/O error in fy_aio_all, fy_aio_any,
 * close letting a write land, and NULL handles. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ferry/aio.h>

#include "check.h"

#define N (1 << 20)

static void one_backend(int backend)
{
    static unsigned char data[N], back[N];
    for (size_t i = 0; i < N; i++)
        data[i] = (unsigned char)(i * 13 + i / 4099 + backend);

    /* Round trip. */
    fy_aio_file *f = fy_aio_open("aio-data", O_RDWR | O_CREAT | O_TRUNC, 0600, backend);
    CHECK(f != NULL);
    fy_aio_req *w = fy_aio_write(f, 0, data, N);
    CHECK(w != NULL);
    CHECK(fy_aio_wait(w, -1) == 1);
    CHECK(fy_aio_state(w) == FY_AIO_COMPLETED && fy_aio_bytes(w) == N);
    CHECK(fy_aio_released(w) == 1);
    fy_aio_req *r = fy_aio_read(f, 100, back, N - 100);
    CHECK(r != NULL);
    CHECK(fy_aio_wait(r, 10000) == 1);
    CHECK(memcmp(back, data + 100, N - 100) == 0);
    CHECK(fy_aio_free(r) == 0 && fy_aio_free(w) == 0);
    /* Sequential: the position moves when a request starts. */
    fy_aio_req *s1 = fy_aio_read(f, -1, back, 10);
    fy_aio_req *s2 = fy_aio_read(f, -1, back + 10, 10);
    const fy_aio_req *both[2] = {s1, s2};
    CHECK(fy_aio_all(both, 2, -1) == 1);
    CHECK(memcmp(back, data, 20) == 0);
    fy_aio_free(s1);
    fy_aio_free(s2);
    /* A read past the end fails when it starts. */
    errno = 0;
    CHECK(fy_aio_read(f, N - 10, back, 11) == NULL && errno == ENXIO);
    errno = 0;
    CHECK(fy_aio_read(f, -2, back, 1) == NULL && errno == EINVAL);
    errno = 0;
    CHECK(fy_aio_read(f, 0, NULL, 1) == NULL && errno == EFAULT);

    /* Close with a write in flight: it lands. */
    w = fy_aio_write(f, N, data, N);
    CHECK(w != NULL);
    CHECK(fy_aio_close(f) == 0);
    CHECK(fy_aio_done(w) == 1);
    fy_aio_free(w);
    struct stat st;
    CHECK(stat("aio-data", &st) == 0 && st.st_size == 2 * N);

    /* A FIFO nobody writes: the slow device. */
    unlink("aio-fifo");
    CHECK(mkfifo("aio-fifo", 0600) == 0);
    fy_aio_file *p = fy_aio_open("aio-fifo", O_RDWR, 0, backend);
    CHECK(p != NULL);
    static unsigned char small[64];
    r = fy_aio_read(p, -1, small, 5);
    CHECK(r != NULL);
    CHECK(fy_aio_done(r) == 0);
    CHECK(fy_aio_wait(r, 30) == 0);
    CHECK(fy_aio_state(r) == FY_AIO_IN_FLIGHT);
    int wfd = open("aio-fifo", O_WRONLY);
    CHECK(wfd >= 0);
    CHECK(write(wfd, "hello", 5) == 5);
    CHECK(fy_aio_wait(r, -1) == 1);
    CHECK(memcmp(small, "hello", 5) == 0);
    fy_aio_free(r);

    /* Cancel: sticky until cleared; the buffer comes back. */
    r = fy_aio_read(p, -1, small, 64);
    CHECK(fy_aio_cancel(r) == 0);
    for (int i = 0; i < 3; i++) {
        errno = 0;
        CHECK(fy_aio_done(r) == -1 && errno == ECANCELED);
    }
    const fy_aio_req *one[1] = {r};
    errno = 0;
    CHECK(fy_aio_all(one, 1, 10) == -1 && errno == ECANCELED);
    CHECK(fy_aio_clear(r) == 0);
    /* Done for the program only once the buffer is its own again. */
    CHECK(fy_aio_wait(r, -1) == 1 && fy_aio_state(r) == FY_AIO_CLEARED);
    CHECK(fy_aio_released(r) == 1);
    CHECK(fy_aio_free(r) == 0);

    /* A deadline: a read nobody feeds fails ETIMEDOUT, sticky (the
     * wait's own time running out is 0, not this). */
    CHECK(fy_aio_set_timeout(p, 20) == 0);
    r = fy_aio_read(p, -1, small, 8);
    CHECK(r != NULL);
    errno = 0;
    CHECK(fy_aio_wait(r, -1) == -1 && errno == ETIMEDOUT);
    errno = 0;
    CHECK(fy_aio_done(r) == -1 && errno == ETIMEDOUT);
    CHECK(fy_aio_state(r) == FY_AIO_FAILED);
    CHECK(fy_aio_free(r) == 0);
    CHECK(fy_aio_set_timeout(p, -1) == 0);

    /* A cancel after some bytes arrived: fy_aio_bytes says how many once
     * the buffer is back, and they are in it (they are gone from the
     * FIFO: before, fy_aio_bytes said -1 and they were lost). */
    memset(small, 0, sizeof small);
    r = fy_aio_read(p, -1, small, 64);
    CHECK(r != NULL);
    CHECK(write(wfd, "partial", 7) == 7);
    int queued = 7;
    for (int i = 0; i < 5000 && queued > 0; i++) {
        CHECK(ioctl(wfd, FIONREAD, &queued) == 0);
        if (queued > 0)
            usleep(1000);
    }
    CHECK(queued == 0);
    CHECK(fy_aio_cancel(r) == 0);
    for (int i = 0; i < 10000 && fy_aio_released(r) != 1; i++)
        usleep(1000);
    CHECK(fy_aio_released(r) == 1);
    CHECK(fy_aio_bytes(r) == 7);
    CHECK(memcmp(small, "partial", 7) == 0);
    CHECK(fy_aio_free(r) == 0);

    /* Any: a pending read and a finished write. */
    fy_aio_file *g = fy_aio_open("aio-data", O_RDWR, 0, backend);
    CHECK(g != NULL);
    fy_aio_req *pending = fy_aio_read(p, -1, small, 3);
    fy_aio_req *fast = fy_aio_write(g, 0, "x", 1);
    const fy_aio_req *two[2] = {pending, fast};
    CHECK(fy_aio_any(two, 2, -1) == 1);
    CHECK(fy_aio_any(two, 1, 20) == -2);
    CHECK(fy_aio_any(two, 0, 20) == -2);
    CHECK(fy_aio_all(two, 2, 20) == 0);
    /* Closing the FIFO's file cancels its read in flight. */
    CHECK(fy_aio_close(p) == 0);
    errno = 0;
    CHECK(fy_aio_done(pending) == -1 && errno == ECANCELED);
    CHECK(fy_aio_released(pending) == 1);
    fy_aio_free(pending);
    fy_aio_free(fast);
    CHECK(fy_aio_close(g) == 0);
    close(wfd);

    /* A sticky I/O error: a read on a file open for writing only. */
    fy_aio_file *wo = fy_aio_open("aio-data", O_WRONLY, 0, backend);
    r = fy_aio_read(wo, 0, back, 100);
    CHECK(r != NULL);
    errno = 0;
    CHECK(fy_aio_wait(r, -1) == -1 && errno == EBADF);
    w = fy_aio_write(wo, 0, "y", 1);
    CHECK(fy_aio_wait(w, -1) == 1);
    const fy_aio_req *mixed[2] = {w, r};
    for (int i = 0; i < 2; i++) {
        errno = 0;
        CHECK(fy_aio_all(mixed, 2, -1) == -1 && errno == EBADF);
    }
    CHECK(fy_aio_any(mixed, 2, -1) == 0);
    CHECK(fy_aio_state(r) == FY_AIO_FAILED && fy_aio_bytes(r) == 0); /* none moved */
    fy_aio_clear(r);
    CHECK(fy_aio_all(mixed, 2, -1) == 1);
    fy_aio_free(r);
    fy_aio_free(w);
    CHECK(fy_aio_close(wo) == 0);
}

int main(void)
{
    one_backend(FY_AIO_URING);
    one_backend(FY_AIO_THREADS);
    one_backend(FY_AIO_AUTO);

    /* NULL handles and bad arguments. */
    errno = 0;
    CHECK(fy_aio_open(NULL, O_RDONLY, 0, FY_AIO_AUTO) == NULL && errno == EFAULT);
    errno = 0;
    CHECK(fy_aio_open("aio-data", O_RDONLY, 0, 7) == NULL && errno == EINVAL);
    errno = 0;
    CHECK(fy_aio_open("no-such-file", O_RDONLY, 0, FY_AIO_AUTO) == NULL && errno == ENOENT);
    errno = 0;
    CHECK(fy_aio_read(NULL, 0, "", 0) == NULL && errno == EINVAL);
    CHECK(fy_aio_done(NULL) == -1 && errno == EINVAL);
    CHECK(fy_aio_wait(NULL, 0) == -1);
    CHECK(fy_aio_cancel(NULL) == -1 && fy_aio_clear(NULL) == -1);
    CHECK(fy_aio_free(NULL) == -1 && fy_aio_close(NULL) == -1);
    errno = 0;
    CHECK(fy_aio_set_timeout(NULL, 5) == -1 && errno == EINVAL);
    CHECK(fy_aio_all(NULL, 1, 0) == -1 && errno == EINVAL);
    const fy_aio_req *nul[1] = {NULL};
    CHECK(fy_aio_any(nul, 1, 0) == -1 && errno == EINVAL);
    puts("ok");
    return 0;
}
