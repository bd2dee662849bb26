/*
 * ferry/buf.h — ferry's buffers in C: immutable, shared by reference.
 *
 * A fy_buf is an owned reference to bytes that never change while any
 * reference exists; slicing and cloning make new references to the same
 * bytes (no copy). Every function that returns a handle returns an owned
 * reference: give each back once with fy_buf_release.
 *
 *     fy_bufmut *m = fy_bufmut_new(4096);         // page-aligned room
 *     size_t room;
 *     unsigned char *p = fy_bufmut_spare(m, &room);
 *     memcpy(p, "hello", 5);
 *     fy_bufmut_commit(m, 5);
 *     fy_buf *b = fy_bufmut_freeze(m);             // m is consumed
 *     fy_buf *tail = fy_buf_slice(b, 1, 4);        // "ello", same bytes
 *     fy_buf_release(b);
 *     fy_buf_release(tail);
 *
 * fy_region_to_buf turns a read region from fy_salloc into a buffer that
 * outlives the stream — a mapped file's pages stay mapped, nothing is
 * copied.
 *
 * The bytes of a fy_buf are read-only (fy_buf_data returns const): other
 * references, the read region it came from, or a mapped file's page
 * cache share them, and a mapped file's pages are mapped read-only (a
 * write faults). Only a fy_bufmut's spare room is writable, until it is
 * frozen.
 *
 * Sizes no memory can hold fail as malloc does: fy_bufmut_new and
 * fy_buf_copy return NULL, fy_bufmut_append returns -1 (the buffer is
 * unchanged), with errno ENOMEM.
 */
#ifndef FERRY_BUF_H
#define FERRY_BUF_H

#include <stddef.h>
#include <ferry/asi.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FyBuf fy_buf;
typedef struct FyBufMut fy_bufmut;

fy_bufmut *fy_bufmut_new(size_t cap);
unsigned char *fy_bufmut_spare(fy_bufmut *b, size_t *room);
int fy_bufmut_commit(fy_bufmut *b, size_t n);
int fy_bufmut_append(fy_bufmut *b, const void *data, size_t len);
size_t fy_bufmut_len(const fy_bufmut *b);
fy_buf *fy_bufmut_freeze(fy_bufmut *b);
void fy_bufmut_free(fy_bufmut *b);

fy_buf *fy_buf_copy(const void *data, size_t len);
const unsigned char *fy_buf_data(const fy_buf *b);
size_t fy_buf_len(const fy_buf *b);
fy_buf *fy_buf_slice(const fy_buf *b, size_t off, size_t len);
fy_buf *fy_buf_clone(const fy_buf *b);
void fy_buf_release(fy_buf *b);
int fy_buf_shares(const fy_buf *a, const fy_buf *b);

fy_buf *fy_region_to_buf(fy_stream *s, const void *region);

#ifdef __cplusplus
}
#endif

#endif
