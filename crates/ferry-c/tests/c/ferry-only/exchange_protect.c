/* ferry/exchange.h's debug mode (FERRY_EXCHANGE_PROTECT=1 from the
 * harness): a write through a pointer kept after fy_uf_write or
 * fy_uf_deallocate kills the writer with SIGSEGV at once; writes before
 * the hand-over, and to the memory when ferry hands it out again, work. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <ferry/exchange.h>

#include "check.h"

/* Runs `what` in a child; returns the signal that ended it, 0 if it
 * exited 0. */
static int in_child(void (*what)(size_t), size_t len)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        what(len);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    if (WIFSIGNALED(st))
        return WTERMSIG(st);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return 0;
}

static int devnull(void)
{
    return open("/dev/null", O_WRONLY);
}

static void write_after_uf_write(size_t len)
{
    volatile unsigned char *p = fy_uf_allocate(len);
    CHECK(p != NULL);
    p[0] = 'a';
    CHECK(fy_uf_write(devnull(), (const void *)p, len) == (ssize_t)len);
    p[len - 1] = 'b'; /* must fault */
    _exit(3);
}

static void write_after_deallocate(size_t len)
{
    volatile unsigned char *p = fy_uf_allocate(len);
    CHECK(p != NULL);
    p[0] = 'a';
    CHECK(fy_uf_deallocate((void *)p, len) == 0);
    p[0] = 'b'; /* must fault */
    _exit(3);
}

static void write_after_read(size_t len)
{
    int p[2];
    CHECK(pipe(p) == 0 && write(p[1], "xyz", 3) == 3);
    void *b;
    CHECK(fy_uf_read(p[0], &b, len) == 3);
    volatile unsigned char *q = b;
    q[0] = 'X'; /* the reader's buffer is its own: writable */
    CHECK(fy_uf_write(devnull(), b, 3) == 3);
    q[1] = 'Y'; /* must fault */
    _exit(3);
}

/* Before the hand-over, and once ferry hands the memory out again. */
static void write_while_held(size_t len)
{
    unsigned char *p = fy_uf_allocate(len);
    CHECK(p != NULL);
    memset(p, 1, len);
    CHECK(fy_uf_write(devnull(), p, len) == (ssize_t)len);
    unsigned char *q = fy_uf_allocate(len);
    CHECK(q == p); /* the same slot, writable again */
    memset(q, 2, len);
    CHECK(fy_uf_deallocate(q, len) == 0);
}

int main(void)
{
    size_t lens[] = {100, 4096, 70000, 1 << 20};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        CHECK(in_child(write_after_uf_write, lens[i]) == SIGSEGV);
        CHECK(in_child(write_after_deallocate, lens[i]) == SIGSEGV);
        CHECK(in_child(write_while_held, lens[i]) == 0);
    }
    CHECK(in_child(write_after_read, 4096) == SIGSEGV);
    printf("ok\n");
    return 0;
}
