/*
 * ferry/exchange.h — buffer exchange (fbufs' uf_* calls): buffers change
 * hands instead of bytes being copied into buffers the program chose.
 *
 *     void *buf;
 *     ssize_t n;
 *     while ((n = fy_uf_read(in, &buf, 65536)) > 0)   // ferry picks buf
 *         if (fy_uf_write(out, buf, n) < 0)            // buf is gone now
 *             err(1, "write");
 *
 *     unsigned char *p = fy_uf_allocate(len);          // fill in place
 *     make_data(p, len);
 *     fy_uf_write(out, p, len);                        // p is gone now
 *
 * Every buffer comes from the process's exchange pool: page aligned, and
 * all of them together under a cap (FERRY_EXCHANGE_CAP in the
 * environment, bytes with an optional K, M or G, read at the first call;
 * default 256M). Past the cap an allocation fails at once with ENOMEM; a
 * length larger than the largest buffer (1 MiB) is EINVAL.
 *
 * Ownership, call by call:
 *
 *   fy_uf_read(fd, &buf, nbytes)   reads up to nbytes (one read(2); at
 *       most 1 MiB) into a buffer ferry picks; *buf is the caller's, the
 *       return value its length. 0 is the end of the input (*buf NULL,
 *       nothing to give back); nbytes 0 is EINVAL. -1 with errno on
 *       failure (*buf NULL).
 *   fy_uf_get(len, &buf)           an empty buffer with room for at least
 *       len bytes; returns its whole capacity (all of it writable).
 *   fy_uf_allocate(size)           a buffer of size bytes; NULL + errno.
 *   fy_uf_write(fd, buf, nbytes)   writes bytes buf .. buf+nbytes, which
 *       must lie inside one live ferry buffer, and takes that whole buffer
 *       (from fy_uf_read, fy_uf_get or fy_uf_allocate) over, success or
 *       failure: from the call on, the caller must not touch any of it.
 *       A pointer that is not inside a live ferry buffer is EINVAL (and
 *       nothing is written: never a silent copy). All nbytes are written
 *       (short writes continued, EINTR retried, a non-blocking descriptor
 *       waited for); a pipe or socket without a reader is EPIPE, never a
 *       SIGPIPE death. Returns nbytes, or -1 with errno.
 *   fy_uf_write_counted(fd, buf, nbytes, &sent)   fy_uf_write, and
 *       sent (if not NULL) is set to the bytes known to have arrived:
 *       nbytes on success, those before the error on failure (a reader
 *       that went away part way, a full disk, RLIMIT_FSIZE: EFBIG, never
 *       a SIGXFSZ death).
 *       Inside a mapping from fy_uf_mmap, only the bytes written are
 *       used: the mapping stays the caller's (its bytes never change), so
 *       a loop may write it piece by piece, and gives it back with
 *       fy_uf_deallocate.
 *   fy_uf_deallocate(buf, size)    gives back a buffer the caller holds:
 *       buf is its start, size at most its size. 0, or -1 with EINVAL for
 *       anything else — a pointer that is not a live buffer's start, a
 *       buffer already given back (a double deallocate), a buffer already
 *       written.
 *   fy_uf_mmap(fd, offset, len)    bytes offset .. offset+len of the
 *       regular file fd, mapped read-only under ferry's read lease (their
 *       bytes never change while mapped, whoever writes the file: see
 *       ferry/buf.h). NULL + errno (EAGAIN: the file is open for writing
 *       somewhere, so no lease; EINVAL: len 0). Not counted in the cap.
 *
 * Debug mode: with FERRY_EXCHANGE_PROTECT=1 in the environment, a
 * buffer's pages turn read-only when it is written or given back, and
 * writable again only when ferry hands the memory out anew. A program
 * that writes through a pointer it kept after fy_uf_write or
 * fy_uf_deallocate dies of SIGSEGV at that write, instead of changing
 * bytes on their way out. Each hand-over then costs an mprotect.
 *
 * Thread safety: every call may be made from any thread; a buffer is
 * handed from thread to thread as the program likes.
 */
#ifndef FERRY_EXCHANGE_H
#define FERRY_EXCHANGE_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

ssize_t fy_uf_read(int fd, void **bufp, size_t nbytes);
ssize_t fy_uf_get(size_t len, void **bufp);
ssize_t fy_uf_write(int fd, const void *buf, size_t nbytes);
ssize_t fy_uf_write_counted(int fd, const void *buf, size_t nbytes, size_t *sent);
void *fy_uf_allocate(size_t size);
int fy_uf_deallocate(void *buf, size_t size);
const void *fy_uf_mmap(int fd, off_t offset, size_t len);

#ifdef __cplusplus
}
#endif

#endif
