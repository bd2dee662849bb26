/* A program behind `ferry serve --ipc-cgi /c=THIS` (tests/c_abi/cgi.rs):
 *   /bytes/N  N bytes 'a'..'z' over and over, built once in the pool
 *             (fy_cgi_alloc, fy_cgi_keep, fy_cgi_kept_join) and sent again
 *             by reference (fy_cgi_append);
 *   /echo     the method, PATH_INFO and QUERY_STRING, then the body as
 *             its pieces in place (fy_cgi_body_iov) and as copied
 *             (fy_cgi_body_read) — the test compares the two;
 *   /refuse   the header calls that must fail, each said in the body;
 *   /fail     the handler fails: a 500.
 */
#include <ferry/cgi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 64
static struct { size_t n; fy_cgi_kept *body; } kept[KEPT];
static int nkept;

static fy_cgi_kept *build(fy_cgi_reply *r, size_t n)
{
    fy_cgi_kept *all = NULL;
    size_t at = 0;
    do {
        size_t size;
        char *slot = fy_cgi_alloc(r, &size);
        if (!slot)
            return NULL;
        size_t take = n - at < size ? n - at : size;
        for (size_t i = 0; i < take; i++)
            slot[i] = 'a' + (at + i) % 26;
        fy_cgi_kept *k = fy_cgi_keep(r, slot, take);
        if (!k)
            return NULL;
        all = all ? fy_cgi_kept_join(all, k) : k;
        at += take;
    } while (at < n);
    return all;
}

static int bytes(fy_cgi_reply *r, size_t n)
{
    for (int i = 0; i < nkept; i++)
        if (kept[i].n == n)
            return fy_cgi_append(r, kept[i].body);
    fy_cgi_kept *k = build(r, n);
    if (!k)
        return -1;
    if (nkept < KEPT) {
        kept[nkept].n = n;
        kept[nkept++].body = k;
    }
    int rc = fy_cgi_append(r, k);
    if (nkept == KEPT && kept[KEPT - 1].body != k)
        fy_cgi_kept_free(k);
    return rc;
}

static int say(fy_cgi_reply *r, const char *s) { return fy_cgi_write(r, s, strlen(s)); }

static int echo(const fy_cgi_request *req, fy_cgi_reply *r)
{
    const char *names[] = {"REQUEST_METHOD", "PATH_INFO", "QUERY_STRING"};
    for (int i = 0; i < 3; i++) {
        const char *v = fy_cgi_var(req, names[i]);
        say(r, names[i]);
        say(r, "=");
        say(r, v ? v : "(none)");
        say(r, "\n");
    }
    if (fy_cgi_var(req, "NO_SUCH_VARIABLE") != NULL)
        return 1;
    size_t len = fy_cgi_body_len(req);
    struct iovec iov[64];
    int pieces = fy_cgi_body_iov(req, iov, 64);
    if (pieces < 0 || pieces > 64)
        return 1;
    size_t seen = 0;
    for (int i = 0; i < pieces; i++) {
        fy_cgi_write(r, iov[i].iov_base, iov[i].iov_len);
        seen += iov[i].iov_len;
    }
    if (seen != len)
        return 1;
    char *copy = malloc(len + 1);
    if (!copy)
        return 1;
    ssize_t got = 0, n;
    while ((n = fy_cgi_body_read(req, got, copy + got, 7)) > 0)
        got += n;
    fy_cgi_write(r, copy, got);
    free(copy);
    return 0;
}

static int refuse(fy_cgi_reply *r)
{
    char line[200];
    int a = fy_cgi_header(r, "X-Bad", "one\r\nInjected: yes");
    int ea = errno;
    int b = fy_cgi_header(r, "Bad Name", "x");
    int eb = errno;
    int c = fy_cgi_status(r, 99, "Low");
    int ec = errno;
    int d = fy_cgi_commit(r, line, 1);
    int ed = errno;
    fy_cgi_header(r, "Content-Type", "text/plain");
    snprintf(line, sizeof line, "%d %d %d %d %d %d %d %d\n", a, ea == EINVAL, b, eb == EINVAL, c,
             ec == EINVAL, d, ed == EINVAL);
    return say(r, line);
}

static int page(const fy_cgi_request *req, fy_cgi_reply *r, void *ctx)
{
    (void)ctx;
    const char *path = fy_cgi_var(req, "PATH_INFO");
    if (!path)
        path = "/";
    if (strncmp(path, "/bytes/", 7) == 0) {
        fy_cgi_header(r, "Content-Type", "application/octet-stream");
        return bytes(r, strtoul(path + 7, NULL, 10)) ? 1 : 0;
    }
    if (strcmp(path, "/echo") == 0) {
        /* Standard output is standard error by now: the channel is safe. */
        printf("cgi.c: echo\n");
        fflush(stdout);
        return echo(req, r);
    }
    if (strcmp(path, "/refuse") == 0)
        return refuse(r) ? 1 : 0;
    if (strcmp(path, "/fail") == 0)
        return 1;
    fy_cgi_status(r, 404, "Not Found");
    return say(r, "no such page\n") ? 1 : 0;
}

int main(void)
{
    if (fy_cgi_serve(page, NULL) != 0) {
        perror("fy_cgi_serve");
        return 1;
    }
    return 0;
}
