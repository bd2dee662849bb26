/*
 * ferry/unistd.h — emulated Unix I/O on ferry streams (the paper's
 * "emulated Unix I/O" interface module).
 *
 * open() of a regular file gives a descriptor that names a ferry stream;
 * read, write, lseek, pread, pwrite, close and dup on it go through the
 * stream's buffers, and so does read(fileno(f)) for a ferry/stdio.h FILE.
 * Mixing works: fread 10 bytes, read 5, then fy_salloc continues at byte
 * 15; a write by one interface is seen by the others. Writes to such a
 * descriptor are buffered like a FILE's and reach the file at close,
 * fsync-free exit, lseek-free flush points (fflush, fy_sflush) — other
 * processes see them then. Descriptors of anything else (terminals,
 * pipes, sockets, devices) and numbers the library did not open go
 * straight to the system.
 */
#ifndef FERRY_UNISTD_H
#define FERRY_UNISTD_H

#include <unistd.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

int fy__open(const char *path, int flags, mode_t mode);
ssize_t fy_read(int fd, void *buf, size_t n);
ssize_t fy_write(int fd, const void *buf, size_t n);
off_t fy_lseek(int fd, off_t off, int whence);
ssize_t fy_pread(int fd, void *buf, size_t n, off_t off);
ssize_t fy_pwrite(int fd, const void *buf, size_t n, off_t off);
int fy_close(int fd);
int fy_dup(int fd);

static inline int fy_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
#ifdef O_TMPFILE
    int wants_mode = flags & (O_CREAT | O_TMPFILE);
#else
    int wants_mode = flags & O_CREAT;
#endif
    if (wants_mode) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return fy__open(path, flags, mode);
}

#ifdef __cplusplus
}
#endif

#undef open
#define open fy_open
#undef read
#define read fy_read
#undef write
#define write fy_write
#undef lseek
#define lseek fy_lseek
#undef pread
#define pread fy_pread
#undef pwrite
#define pwrite fy_pwrite
#undef close
#define close fy_close
#undef dup
#define dup fy_dup

#endif
