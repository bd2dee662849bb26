/*
 * ferry/transfer.h — a whole input moved to an output by the kernel's
 * copy paths, no byte through user space where it can be helped.
 *
 *     fy_transfer_stats st;
 *     if (fy_transfer(in, STDOUT_FILENO, &st) != 0)
 *         err(1, "%s", st.failed_side == FY_TRANSFER_READ ? "read" : "write");
 *
 * fy_transfer copies everything from in_fd (from its offset to its end)
 * to out_fd (at its offset) and leaves both offsets past what it copied,
 * as a read/write loop would. The path is the first that applies:
 *
 *     regular file -> regular file   copy_file_range (two threads from
 *                                    64 MiB: on ext4 one of them reads
 *                                    into the output's mapped pages)
 *     regular file -> pipe           splice, through a private pipe
 *     pipe         -> pipe           splice
 *     regular file -> anything       sendfile
 *     anything     -> anything       read/write, page-aligned buffer
 *
 * It returns 0, or -1 with errno set. A pipe or socket whose reader has
 * gone is EPIPE, never a SIGPIPE death; a write past RLIMIT_FSIZE is
 * EFBIG, never SIGXFSZ (the signal is blocked in the calling thread for
 * the call). stats may be NULL; otherwise it is filled in on failure too:
 * bytes is then what is known to have arrived at out_fd, failed_side the
 * side that failed.
 *
 * in_fd and out_fd are the kernel's descriptors. A ferry stream on
 * either (a FILE of ferry/stdio.h, a descriptor ferry/unistd.h's open
 * made) is flushed first, as fflush(3) would: output it holds is written,
 * and read-ahead on a seekable input is given back, so the transfer
 * starts where the program's reads stopped and its next read, lseek or
 * ftell goes on after what was transferred. Read-ahead from a pipe or
 * terminal cannot be given back: it is not seen (as with read(2) under a
 * glibc FILE).
 */
#ifndef FERRY_TRANSFER_H
#define FERRY_TRANSFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* failed_side */
#define FY_TRANSFER_READ 1
#define FY_TRANSFER_WRITE 2

/* finished_by: the method that met the end of the input */
#define FY_METHOD_COPY_FILE_RANGE 1
#define FY_METHOD_SPLICE 2
#define FY_METHOD_SENDFILE 3
#define FY_METHOD_MAPPED 4
#define FY_METHOD_READ_WRITE 5

typedef struct fy_transfer_stats {
    uint64_t bytes;                 /* arrived at out_fd */
    /* bytes moved by each method */
    uint64_t copy_file_range_bytes;
    uint64_t splice_bytes;
    uint64_t sendfile_bytes;
    uint64_t mapped_bytes;          /* pread into the output's mapped pages */
    uint64_t read_write_bytes;      /* through a buffer in user space */
    /* system calls made, by kind */
    uint64_t copy_file_range_calls;
    uint64_t splice_calls;
    uint64_t sendfile_calls;
    uint64_t read_calls;            /* read and pread */
    uint64_t write_calls;           /* write and pwrite */
    uint64_t mapped_fills;          /* mmap + madvise + pread + munmap each */
    uint64_t other_calls;           /* fstat, lseek, fcntl, pipe2, ... */
    int failed_side;                /* 0, FY_TRANSFER_READ or FY_TRANSFER_WRITE */
    int finished_by;                /* FY_METHOD_*, 0 on failure */
} fy_transfer_stats;

int fy_transfer(int in_fd, int out_fd, fy_transfer_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
