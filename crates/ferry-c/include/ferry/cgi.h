/*
 * ferry/cgi.h — a C program behind `ferry serve --ipc-cgi PREFIX=PROGRAM`.
 *
 * The server starts the program (one per worker, again if it dies) with
 * its standard input and output connected to two ferry ipc channels, and
 * sends it the requests below PREFIX in order; the program answers each
 * in turn. A reply's body is written into the program's own pool (a
 * sealed memfd the server maps read-only) and goes from there to the
 * client: the server never copies it. A body kept with fy_cgi_keep goes
 * again in any later reply by reference, never written anew.
 *
 *     static int page(const fy_cgi_request *req, fy_cgi_reply *r, void *ctx)
 *     {
 *         const char *path = fy_cgi_var(req, "PATH_INFO");
 *         fy_cgi_header(r, "Content-Type", "text/plain");
 *         fy_cgi_write(r, "hello ", 6);
 *         if (path)
 *             fy_cgi_write(r, path, strlen(path));
 *         return 0;                          // nonzero: a 500
 *     }
 *     int main(void) { return fy_cgi_serve(page, NULL) ? 1 : 0; }
 *
 * Standard output is the replies' channel: fy_cgi_serve points
 * descriptor 1 at standard error first, so a stray printf goes to the
 * server's log, not into the channel (stdio's buffer is not flushed into
 * it either: write nothing to stdout before calling it).
 *
 *   fy_cgi_serve(h, ctx)    calls h(request, reply, ctx) for each request
 *       until the server closes the channel: 0 then; -1 + errno if the
 *       program was not started by ferry serve or the channel broke.
 *   fy_cgi_var(req, name)   a meta-variable (RFC 3875: REQUEST_METHOD,
 *       PATH_INFO, QUERY_STRING, CONTENT_TYPE, HTTP_*, ...) as a C string,
 *       or NULL if the request has none.
 *   fy_cgi_body_len(req)    the request body's length.
 *   fy_cgi_body_iov(req, iov, max)   the body's pieces in place
 *       (read-only): up to max into iov; returns how many there are.
 *   fy_cgi_body_read(req, off, buf, n)   copies up to n bytes from off.
 *   fy_cgi_status(r, code, reason)   the status (200..599; default 200).
 *   fy_cgi_header(r, name, value)    a header line (EINVAL for a name
 *       that is not a token or a value with a control byte). The server
 *       sets Content-Length, Date, Server and the connection's headers.
 *   fy_cgi_write(r, buf, n)          appends n bytes (copied into the pool).
 *   fy_cgi_alloc(r, &size)   a free slot of the pool to fill in place
 *       (size bytes); then
 *   fy_cgi_commit(r, slot, n)        appends its first n bytes, or
 *   fy_cgi_keep(r, slot, n)          keeps them: a fy_cgi_kept body;
 *   fy_cgi_kept_join(a, b)   b appended to a (b freed): a kept body of
 *       many slots; returns a.
 *   fy_cgi_append(r, kept)   appends a kept body, by reference.
 *   fy_cgi_kept_free(kept)   frees it (replies on their way keep theirs).
 *
 * The request and reply handles are valid during the handler's call
 * only. Every call returns 0 / a pointer, or -1 / NULL with errno. No
 * call lets a Rust panic through.
 */
#ifndef FERRY_CGI_H
#define FERRY_CGI_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct FyCgiRequest fy_cgi_request;
typedef struct FyCgiReply fy_cgi_reply;
typedef struct FyCgiKept fy_cgi_kept;

typedef int (*fy_cgi_handler)(const fy_cgi_request *req, fy_cgi_reply *reply, void *ctx);

int fy_cgi_serve(fy_cgi_handler handler, void *ctx);
const char *fy_cgi_var(const fy_cgi_request *req, const char *name);
size_t fy_cgi_body_len(const fy_cgi_request *req);
int fy_cgi_body_iov(const fy_cgi_request *req, struct iovec *iov, int max);
ssize_t fy_cgi_body_read(const fy_cgi_request *req, size_t off, void *buf, size_t n);
int fy_cgi_status(fy_cgi_reply *r, int code, const char *reason);
int fy_cgi_header(fy_cgi_reply *r, const char *name, const char *value);
int fy_cgi_write(fy_cgi_reply *r, const void *buf, size_t n);
void *fy_cgi_alloc(fy_cgi_reply *r, size_t *size);
int fy_cgi_commit(fy_cgi_reply *r, void *slot, size_t n);
fy_cgi_kept *fy_cgi_keep(fy_cgi_reply *r, void *slot, size_t n);
fy_cgi_kept *fy_cgi_kept_join(fy_cgi_kept *a, fy_cgi_kept *b);
int fy_cgi_append(fy_cgi_reply *r, const fy_cgi_kept *kept);
void fy_cgi_kept_free(fy_cgi_kept *kept);

#ifdef __cplusplus
}
#endif

#endif
