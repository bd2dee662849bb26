/* ferry/aio.h says the kernel has let go of a request's buffer "once
 * fy_aio_done/fy_aio_wait returned 1". After fy_aio_cancel and
 * fy_aio_clear of a request the kernel still runs (a blocking write into
 * a FIFO on the thread pool: a worker is inside write(2)), fy_aio_done
 * returns 1 at once — the Cleared state counts as done — while
 * fy_aio_released still says 0. A program that trusts the header reuses
 * the buffer, and its new bytes go out through the "finished" write. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ferry/aio.h>

#define N (1 << 20)

static int one(int backend)
{
    unlink("fifo");
    if (mkfifo("fifo", 0600) != 0) { perror("mkfifo"); return 2; }
    int rd = open("fifo", O_RDONLY | O_NONBLOCK);
    if (rd < 0) { perror("open"); return 2; }
    fy_aio_file *f = fy_aio_open("fifo", O_WRONLY, 0, backend);
    if (!f) { perror("fy_aio_open"); return 2; }
    fcntl(rd, F_SETFL, 0);
    unsigned char *buf = malloc(N);
    memset(buf, 'A', N);
    fy_aio_req *r = fy_aio_write(f, -1, buf, N);
    if (!r) { perror("fy_aio_write"); return 2; }
    usleep(200 * 1000);
    fy_aio_cancel(r);
    fy_aio_clear(r);
    int done = fy_aio_done(r);
    int released = fy_aio_released(r);
    int bad = 0;
    if (done == 1) {
        /* The header says the buffer is the program's again. */
        memset(buf, 'B', N);
    }
    /* Drain the FIFO until the request lets go, counting B's. */
    size_t bs = 0, total = 0;
    static unsigned char in[65536];
    fcntl(rd, F_SETFL, O_NONBLOCK);
    for (;;) {
        int rel = fy_aio_released(r) == 1;
        ssize_t n = read(rd, in, sizeof in);
        if (n > 0) {
            total += (size_t)n;
            for (ssize_t i = 0; i < n; i++)
                bs += in[i] == 'B';
            continue;
        }
        if (rel)
            break;
        usleep(1000);
    }
    if (done == 1 && released == 0) {
        printf("backend %d: fy_aio_done 1 after cancel+clear while fy_aio_released 0; "
               "%zu of %zu bytes read were written by the program after done said 1\n",
               backend, bs, total);
        bad = 1;
    }
    fy_aio_free(r);
    fy_aio_close(f);
    close(rd);
    free(buf);
    return bad;
}

int main(void)
{
    int bad = one(FY_AIO_THREADS);
    bad |= one(FY_AIO_URING);
    if (bad)
        return 1;
    printf("ok\n");
    return 0;
}
