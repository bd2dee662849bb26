/* fy_aio_set_timeout at its edges (run by tests/c_abi/programs.rs);
 *   by hand: cc -std=gnu11 -O1 -Wall -pthread -o /tmp/t aio_timeouts.c \
 *      -I crates/ferry-c/include -L target/release -lferry \
 *      -Wl,-rpath,$PWD/target/release && /tmp/t
 * Prints "ok" at the end when every check held. */
#include <ferry/aio.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int failed;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s (errno %d)\n", \
    __FILE__, __LINE__, #c, errno); failed = 1; } } while (0)

static void backend(int b)
{
    int p[2];
    CHECK(pipe(p) == 0);
    char path[64];
    snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    fy_aio_file *f = fy_aio_open(path, O_RDONLY, 0, b);
    CHECK(f != NULL);
    char buf[8];

    /* Huge timeouts: no early expiry. */
    long huge[] = {LONG_MAX, LONG_MAX / 1000, (long)INT_MAX * 1000L};
    for (unsigned i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        CHECK(fy_aio_set_timeout(f, huge[i]) == 0);
        fy_aio_req *r = fy_aio_read(f, -1, buf, 3);
        CHECK(r != NULL);
        CHECK(fy_aio_wait(r, 100) == 0);
        CHECK(write(p[1], "abc", 3) == 3);
        CHECK(fy_aio_wait(r, 5000) == 1);
        CHECK(fy_aio_free(r) == 0);
    }
    /* Any negative: none. */
    CHECK(fy_aio_set_timeout(f, LONG_MIN) == 0);
    fy_aio_req *r = fy_aio_read(f, -1, buf, 1);
    CHECK(fy_aio_wait(r, 100) == 0);
    CHECK(write(p[1], "z", 1) == 1);
    CHECK(fy_aio_wait(r, 5000) == 1);
    CHECK(fy_aio_free(r) == 0);
    /* Zero: ETIMEDOUT, sticky until cleared, buffer released. */
    CHECK(fy_aio_set_timeout(f, 0) == 0);
    r = fy_aio_read(f, -1, buf, 1);
    errno = 0;
    CHECK(fy_aio_wait(r, 5000) == -1 && errno == ETIMEDOUT);
    errno = 0;
    CHECK(fy_aio_wait(r, 0) == -1 && errno == ETIMEDOUT);
    CHECK(fy_aio_clear(r) == 0);
    CHECK(fy_aio_done(r) == 1);
    CHECK(fy_aio_free(r) == 0);
    /* A request queued behind one without a deadline: ETIMEDOUT at its
     * deadline (the doc: the time counts from the start). */
    CHECK(fy_aio_set_timeout(f, -1) == 0);
    fy_aio_req *first = fy_aio_read(f, -1, buf, 1);
    CHECK(fy_aio_set_timeout(f, 50) == 0);
    char buf2[1];
    fy_aio_req *second = fy_aio_read(f, -1, buf2, 1);
    errno = 0;
    int w = fy_aio_wait(second, 2000);
    if (!(w == -1 && errno == ETIMEDOUT))
        fprintf(stderr, "backend %d: queued request with a 50 ms deadline: "
                "wait(2000) = %d errno %d (want -1 ETIMEDOUT)\n", b, w, errno);
    CHECK(w == -1 && errno == ETIMEDOUT);
    CHECK(write(p[1], "qq", 2) == 2);
    CHECK(fy_aio_wait(first, 5000) == 1);
    (void)fy_aio_wait(second, 5000);
    CHECK(fy_aio_free(first) == 0);
    CHECK(fy_aio_free(second) == 0);
    CHECK(fy_aio_close(f) == 0);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    errno = 0;
    CHECK(fy_aio_set_timeout(NULL, -1) == -1 && errno == EINVAL);
    backend(FY_AIO_URING);
    backend(FY_AIO_THREADS);
    if (failed)
        return 1;
    puts("ok");
    return 0;
}
