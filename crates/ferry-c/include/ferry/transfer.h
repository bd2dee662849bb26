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

#include <stddef.h>
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

/*
 * Endpoints and fy_between: Roadrunner's stream(in, out). An endpoint is
 * a descriptor (any kind: file, pipe, socket, terminal, device), a range
 * of a regular file, or a memory source (a ferry buffer, taken by
 * reference). Each declares its channel parameters (block type and
 * maximum block size); a caller may impose its own record size
 * (fy_endpoint_impose). fy_between picks the paper's case from the two
 * channels' parameters and moves everything: by the kernel's paths for
 * two plain descriptors, else by laying input blocks over the output's
 * blocks by reference, each output block one gathered write.
 *
 *     fy_endpoint *src = fy_endpoint_fd(in), *dst = fy_endpoint_fd(sock);
 *     fy_endpoint_impose(dst, FY_BLOCK_FIXED, 512);   // 512-byte records
 *     fy_between_stats st;
 *     if (fy_between(src, dst, 0, &st) != 0) err(1, "between");
 *     fy_endpoint_free(src); fy_endpoint_free(dst);
 *
 * A descriptor endpoint refers to the descriptor by number: keep it open
 * until the endpoint is freed. fy_between returns 0, or -1 with errno
 * set; stats may be NULL, and are filled in on failure too.
 */
typedef struct fy_endpoint fy_endpoint;

#define FY_BLOCK_VARIABLE 0
#define FY_BLOCK_FIXED 1

/* To the end of the file, for fy_endpoint_file_range's len. */
#define FY_TO_END UINT64_MAX

/* No padding of a fixed output's last block (it may be short). */
#define FY_NO_PAD (-1)

/* A descriptor, whatever it is (one fstat). NULL with errno (EBADF). */
fy_endpoint *fy_endpoint_fd(int fd);
/* Bytes [offset, offset + len) of a regular file (len FY_TO_END: to its
 * end), read at their offsets: the descriptor's offset does not move.
 * NULL with errno (EBADF; ESPIPE if not a regular file). */
fy_endpoint *fy_endpoint_file_range(int fd, uint64_t offset, uint64_t len);
/* A memory source: the bytes of a ferry buffer (ferry/buf.h), by
 * reference; the buffer may be released at once (the endpoint holds its
 * own reference). NULL with errno (EINVAL for NULL). */
struct FyBuf;
fy_endpoint *fy_endpoint_buf(const struct FyBuf *b);
/* Imposes a record size: block type FY_BLOCK_FIXED or FY_BLOCK_VARIABLE,
 * at most max_block bytes (not 0). 0, or -1 with errno EINVAL. */
int fy_endpoint_impose(fy_endpoint *e, int block_type, size_t max_block);
/* NULL is allowed. */
void fy_endpoint_free(fy_endpoint *e);

typedef struct fy_between_stats {
    fy_transfer_stats transfer;   /* bytes, methods, calls, failed side */
    int case_number;              /* the paper's case, 1-4 (0: none) */
    uint64_t blocks_in;           /* overlay: input blocks */
    uint64_t blocks_out;          /* overlay: output blocks written */
    uint64_t bytes_copied;        /* copied in user space to make a block
                                     contiguous (0 where the case has none) */
    uint64_t padding;             /* bytes of padding in the last block */
    /* Dynamic case switching (an output in O_NONBLOCK mode that stalls
     * and catches up): switches between the kernel's path, passing
     * blocks through and buffering; the most bytes of cache buffers held
     * at once; times reading ahead stopped at the transfer's share. */
    uint64_t switches;
    uint64_t peak_buffer_bytes;
    uint64_t share_waits;
    uint64_t memcpy_bytes;        /* copied from one user-space buffer to
                                     another, all told (bytes_copied and
                                     copies into a stream's buffers) */
} fy_between_stats;

/* Moves everything from src to dst. pad: FY_NO_PAD, or a byte (0-255)
 * that fills a fixed output's last block. A memory endpoint is a source
 * only (EINVAL as dst). */
int fy_between(const fy_endpoint *src, const fy_endpoint *dst, int pad,
               fy_between_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
