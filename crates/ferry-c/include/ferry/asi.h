/*
 * ferry/asi.h — the Alloc Stream Interface in C (Krieger, Stumm, Unrau:
 * "The Alloc Stream Facility", Figure 5).
 *
 * salloc hands out a region of the stream's own buffer: for reading, the
 * bytes themselves (a mapped file's pages when the file is mapped); for
 * writing, room to fill. sfree gives it back. Nothing is copied between
 * the library and the program.
 *
 *     fy_stream *s = fy_sopen("data", O_RDONLY, 0, &err);
 *     ssize_t len = 1 << 20;
 *     const char *p;
 *     while ((p = fy_salloc(s, &len)) && len > 0) {
 *         use(p, len);              // the stream's buffer, no copy
 *         fy_sfree(s, p);
 *         len = 1 << 20;
 *     }
 *     if (!p) report(-len);         // a negative errno, from the call
 *     fy_sclose(s);
 *
 * Errors come back from the call: the length argument holds a negative
 * errno and NULL is returned (the paper's footnote 1); functions returning
 * int return 0 or a negative errno. errno is also set, for convenience.
 *
 * A stream is the same object as a ferry/stdio.h FILE and as the stream
 * behind a ferry/unistd.h descriptor: ASI, stdio and Unix I/O can be mixed
 * on it freely, because only the stream buffers data.
 *
 * Regions stay valid until freed, whatever else happens to the stream.
 * Write regions reach the file in the order they were allocated, whatever
 * order they are freed in; the file grows when they are freed.
 *
 * Read regions are read-only: hold the pointer as `const` (the example
 * above does; C converts `void *` to `const char *` without a cast, and
 * fy_sfree and fy_region_to_buf take `const void *`). The
 * bytes are the stream's own and may be shared: a mapped file's pages
 * are mapped read-only (a write faults, SIGSEGV), other read buffers are
 * ordinary memory that a fy_buf made by fy_region_to_buf (ferry/buf.h),
 * another region of the same buffer or the stream's next read may still
 * be using, so a write through a read region is undefined behaviour even
 * where it does not fault. To change the bytes, copy them. Only write
 * regions (write mode) are the program's to fill. (ferry does not write
 * protect every read buffer: an mprotect per refill would cost more than
 * the copy the interface exists to avoid.)
 */
#ifndef FERRY_ASI_H
#define FERRY_ASI_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One stream; the same object as a ferry/stdio.h FILE. */
typedef struct fy_file fy_stream;

/* Stream modes. */
#define FY_READ 0
#define FY_WRITE 1

/* Opens `path` with open(2) flags (O_RDONLY, O_WRONLY|O_CREAT|O_TRUNC,
 * O_RDWR, O_APPEND, O_EXCL, O_CLOEXEC) and creation mode. Read-only
 * streams start in read mode, others in write mode. NULL on failure, with
 * *error (if not NULL) set to a negative errno; 0 on success. */
fy_stream *fy_sopen(const char *path, int flags, mode_t mode, int *error);

/* Flushes and closes; 0 or a negative errno (a deferred write error, or
 * write regions never freed: -EBUSY after writing out what was freed). */
int fy_sclose(fy_stream *s);

/* Allocates *len bytes at the stream offset and advances it. Read mode:
 * the bytes of the stream, read-only (see above); fewer only at end of
 * file (0 at end of file: a non-NULL pointer that needs no sfree). Write
 * mode: room for exactly *len bytes. NULL on error with *len = -errno:
 * -EINVAL for a negative *len, -ENOMEM for a region no memory can hold
 * (a write region, or a read region of a pipe, of PTRDIFF_MAX bytes),
 * -EFBIG for a write region that would pass the largest file offset. */
void *fy_salloc(fy_stream *s, ssize_t *len);

/* Frees a region (`ptr` as salloc returned it; `const`, so a read region
 * held as a const pointer needs no cast). 0 or a negative errno
 * (-EINVAL: not a region of this stream). */
int fy_sfree(fy_stream *s, const void *ptr);

/* Shrinks or grows the most recent write region to *newlen; the next
 * allocation starts right after it. Returns the region (it may move when
 * it grows); NULL with *newlen = -errno on error. */
void *fy_srealloc(fy_stream *s, void *ptr, ssize_t *newlen);

/* Moves the offset (whence: SEEK_SET, SEEK_CUR, SEEK_END) and allocates,
 * atomically. -ESPIPE on pipes and sockets. */
void *fy_sallocat(fy_stream *s, ssize_t *len, off_t offset, int whence);

/* Writes out every freed write region. 0 or a negative errno. */
int fy_sflush(fy_stream *s);

/* Asks the kernel to make the pipe `s` reads or writes hold at least
 * `bytes` (F_SETPIPE_SZ; up to /proc/sys/fs/pipe-max-size unless
 * privileged): each write then moves up to that much instead of 64 KiB.
 * The pipe is shared with the process at its other end, so ferry never
 * resizes one unless asked. Returns the capacity set, or a negative errno
 * (-EINVAL: not a pipe; -EPERM: over the limit). */
ssize_t fy_set_pipe_size(fy_stream *s, size_t bytes);

/* Switches between FY_READ and FY_WRITE. 0 or a negative errno. */
int fy_set_stream_mode(fy_stream *s, int mode);

/* Mode-variable allocation: the mode is given on each call. */
void *fy_Salloc(fy_stream *s, int mode, ssize_t *len);
void *fy_SallocAt(fy_stream *s, int mode, ssize_t *len, off_t offset, int whence);

/* Unlocked variants: the caller holds fy_lock (or no other thread uses
 * the stream). */
void *fy_u_salloc(fy_stream *s, ssize_t *len);
int fy_u_sfree(fy_stream *s, const void *ptr);
void *fy_u_srealloc(fy_stream *s, void *ptr, ssize_t *newlen);
void *fy_u_sallocat(fy_stream *s, ssize_t *len, off_t offset, int whence);
int fy_u_sflush(fy_stream *s);
int fy_u_set_stream_mode(fy_stream *s, int mode);
void *fy_u_Salloc(fy_stream *s, int mode, ssize_t *len);
void *fy_u_SallocAt(fy_stream *s, int mode, ssize_t *len, off_t offset, int whence);

/* The stream's lock (recursive; the same lock as flockfile). */
void fy_lock(fy_stream *s);
void fy_unlock(fy_stream *s);

#ifdef __cplusplus
}
#endif

#endif
