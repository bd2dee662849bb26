/*
 * ferry/sort.h — the external sort of ferry's library (`ferry sort`'s
 * engine) from C: fixed-size records by a byte key, lines by their bytes,
 * from one descriptor to another.
 *
 *     // 100-byte records, 10-byte keys at offset 0, 256 MiB of memory:
 *     if (fy_sort_records(in, out, 100, 0, 10, 0, 256 << 20, "/var/tmp") != 0)
 *         err(1, "sort");
 *
 * The input is read from in_fd's offset to its end (mapped where it is a
 * regular file that can be, read otherwise: a pipe will do); the sorted
 * output is written to out_fd at its offset with write(2). Records are
 * ordered by the unsigned bytes key_offset .. key_offset + key_len of
 * each (memcmp's order, which is also the numeric order of an unsigned
 * big-endian integer of key_len bytes), lines by their bytes (LC_ALL=C
 * sort). The sort is stable: records or lines with equal keys keep their
 * input order.
 *
 * The input is taken a piece at a time, a piece being a third of
 * mem_budget (0: a quarter of the machine's memory); an input larger than
 * one piece is sorted in runs written to temporary files in tmpdir (NULL:
 * $TMPDIR, else /tmp), which have no name and are gone when the call
 * returns, and the runs are merged into out_fd.
 *
 * Both return 0, or -1 with errno set: EBADF for a bad descriptor, EINVAL
 * for a bad size, key, terminator or flag, and for an input that is not a
 * whole number of records; a temporary directory that is missing or full
 * gives its ENOENT or ENOSPC; ENOMEM for a budget the machine cannot
 * give. Output to a pipe whose reader has gone raises SIGPIPE unless it is
 * ignored, as write(2) does (then EPIPE). A ferry stream on either
 * descriptor (ferry/stdio.h, ferry/unistd.h) is flushed first.
 */
#ifndef FERRY_SORT_H
#define FERRY_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* flags */
#define FY_SORT_REVERSE 1u /* descending */
#define FY_SORT_UNIQUE 2u  /* only the first of each run of equal keys */

/* Records of record_size bytes (not 0); the key lies within a record. */
int fy_sort_records(int in_fd, int out_fd, size_t record_size, size_t key_offset,
                    size_t key_len, unsigned flags, uint64_t mem_budget,
                    const char *tmpdir);

/* Lines ending in terminator ('\n', or 0 as for sort -z; any byte); the
 * last line may lack it and is written with it. */
int fy_sort_lines(int in_fd, int out_fd, int terminator, unsigned flags,
                  uint64_t mem_budget, const char *tmpdir);

#ifdef __cplusplus
}
#endif

#endif
