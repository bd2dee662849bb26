/*
 * ferry/aio.h — asynchronous file requests (Bonachea, "Bulk File I/O
 * Extensions to Java": AsyncFile and AsyncFileRequest), on io_uring or a
 * pool of worker threads.
 *
 *     fy_aio_file *f = fy_aio_open("data", O_RDONLY, 0, FY_AIO_AUTO);
 *     fy_aio_req *r = fy_aio_read(f, 0, buf, len);     // starts it
 *     compute();                                         // meanwhile
 *     if (fy_aio_wait(r, -1) < 0) err(1, "read");        // done, or errno
 *     fy_aio_free(r);
 *     fy_aio_close(f);
 *
 * The buffer is lent to the request: from the call that starts it until
 * the kernel has let go of it, the program must not touch it (a read may
 * write it, a write may read it). The kernel has let go once
 * fy_aio_done/fy_aio_wait returned 1 or failed with an errno other than
 * ECANCELED, once fy_aio_released returns 1, and in any case when
 * fy_aio_free returns (it waits for that). A cancelled request is over
 * for the program at once, but its buffer is lent until then.
 *
 * Checks happen when a request starts: a read past the end of a regular
 * file, or an offset past the largest, fails at once (see fy_aio_read).
 * A file that shrinks under a started read makes that request fail (EIO).
 *
 * Results, as the paper's Figure 4:
 *   fy_aio_done(r), fy_aio_wait(r, ms)   1 done, 0 still in flight (or the
 *       time ran out), -1 with errno: the request's error, or ECANCELED —
 *       sticky: every later call that includes r says it again, until
 *       fy_aio_clear(r). ms -1 (any negative) waits for ever, 0 only
 *       looks. A cleared request answers 1 only once the kernel has let
 *       go of its buffer (so 1 always means the buffer is yours).
 *   fy_aio_all(reqs, n, ms)   1 when all are done, 0 timed out, -1 the
 *       first sticky error among them (in array order).
 *   fy_aio_any(reqs, n, ms)   the index of the first done, -2 timed out
 *       (or n == 0), -1 a sticky error found first.
 *   fy_aio_cancel(r)   cancels r if in flight (nothing if it is over);
 *       the kernel may still finish it; fy_aio_bytes says how many bytes
 *       moved either way, once the buffer is back.
 *   fy_aio_close(f)    cancels f's reads in flight, waits until the
 *       kernel is done with all of f's requests (writes land), closes.
 *       Requests stay valid: free them with fy_aio_free.
 *
 * Handles: NULL is EINVAL everywhere; any other pointer must be a live
 * handle from this header (as with free(3), a freed one is undefined).
 * Every call may be made from any thread.
 */
#ifndef FERRY_AIO_H
#define FERRY_AIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fy_aio_file fy_aio_file;
typedef struct fy_aio_req fy_aio_req;

/* Backends. */
#define FY_AIO_AUTO 0     /* io_uring where allowed, else threads
                             (FERRY_AIO=threads in the environment forces them) */
#define FY_AIO_URING 1
#define FY_AIO_THREADS 2

/* States (fy_aio_state). */
#define FY_AIO_IN_FLIGHT 0
#define FY_AIO_COMPLETED 1
#define FY_AIO_FAILED 2
#define FY_AIO_CANCELLED 3
#define FY_AIO_CLEARED 4

/* open(2)'s flags and mode; NULL with errno. */
fy_aio_file *fy_aio_open(const char *path, int flags, mode_t mode, int backend);
int fy_aio_close(fy_aio_file *f);

/* Start a read of len bytes into buf, or a write of len bytes from buf,
 * at offset (-1: the file position, which moves past them at once).
 * NULL with errno: EINVAL (NULL file, offset < -1, an offset past the
 * largest file offset), EFAULT (NULL buffer with a length), ENXIO (a
 * read past the end of a regular file: all len bytes must be in the file
 * when it starts). */
fy_aio_req *fy_aio_read(const fy_aio_file *f, int64_t offset, void *buf, size_t len);
fy_aio_req *fy_aio_write(const fy_aio_file *f, int64_t offset, const void *buf, size_t len);

/* Gives each request of f started from now on timeout_ms to finish (-1,
 * any negative: no deadline, the default). One not over by then fails
 * with ETIMEDOUT (sticky, as any error). The deadline stops waiting for a
 * pipe, socket or terminal; a regular file's transfer under way runs to
 * its end. 0, or -1 with errno EINVAL (NULL file). */
int fy_aio_set_timeout(const fy_aio_file *f, long timeout_ms);

int fy_aio_done(const fy_aio_req *r);
int fy_aio_wait(const fy_aio_req *r, long timeout_ms);
int fy_aio_all(const fy_aio_req *const *reqs, size_t n, long timeout_ms);
ssize_t fy_aio_any(const fy_aio_req *const *reqs, size_t n, long timeout_ms);
int fy_aio_cancel(const fy_aio_req *r);
int fy_aio_clear(const fy_aio_req *r);
int fy_aio_state(const fy_aio_req *r);
/* Bytes the request moved, once the kernel has let go of its buffer:
 * all of them when it completed, and after an error, a cancel or its
 * deadline the bytes that moved before (a read's first bytes); -1 while
 * the kernel still holds the buffer. */
ssize_t fy_aio_bytes(const fy_aio_req *r);
/* 1 once the kernel has let go of the buffer, 0 before. */
int fy_aio_released(const fy_aio_req *r);
/* Waits until the kernel has let go of the buffer, frees the request. */
int fy_aio_free(fy_aio_req *r);

#ifdef __cplusplus
}
#endif

#endif
