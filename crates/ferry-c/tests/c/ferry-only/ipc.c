/* ferry/ipc.h across two processes: a child made by fork receives what
 * its parent sends, over a pair and over an abstract name; the child
 * checks every byte in the pool in place, gives buffers back, and sees
 * the end; a sender killed with SIGKILL is EIO for its receiver, whose
 * buffers stay readable. Prints "ok". */
#include <ferry/ipc.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"

#define MSGS 200
#define SLOT 65536

static void fill(unsigned char *p, size_t n, int i) {
    for (size_t k = 0; k < n; k++)
        p[k] = (unsigned char)(i * 31 + k * 7);
}

static size_t len_of(int i) { return 1 + (size_t)i * 997 % (3 * SLOT); }

/* The receiving side: every message's bytes, in order, then the end. */
static int receive_all(fy_ipc_receiver *rx) {
    static unsigned char want[3 * SLOT];
    for (int i = 0; i < MSGS; i++) {
        size_t len = len_of(i), got = 0;
        fill(want, len, i);
        while (got < len) {
            const void *p;
            ssize_t n = fy_ipc_recv(rx, &p);
            if (n <= 0 || (size_t)n > len - got || memcmp(p, want + got, (size_t)n) != 0)
                return 1;
            got += (size_t)n;
            if (fy_ipc_release(rx, p) != 0)
                return 2;
        }
    }
    const void *p = (const void *)1;
    if (fy_ipc_recv(rx, &p) != 0 || p != NULL)
        return 3;
    /* Not a buffer held: refused, nothing breaks. */
    char x;
    if (fy_ipc_release(rx, &x) != -1 || errno != EINVAL)
        return 4;
    fy_ipc_receiver_close(rx);
    return 0;
}

static void send_all(fy_ipc_sender *tx) {
    static unsigned char buf[3 * SLOT];
    for (int i = 0; i < MSGS; i++) {
        size_t len = len_of(i);
        fill(buf, len, i);
        CHECK(fy_ipc_send(tx, buf, len) == (ssize_t)len);
    }
    CHECK(fy_ipc_sender_close(tx) == 0);
}

static int wait_for(pid_t pid) {
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void) {
    /* A pair, the child receiving. */
    int sv[2];
    CHECK(fy_ipc_pair(sv) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(sv[0]);
        fy_ipc_receiver *rx = fy_ipc_receiver_open(sv[1]);
        _exit(rx ? receive_all(rx) : 10);
    }
    close(sv[1]);
    fy_ipc_sender *tx = fy_ipc_sender_open(sv[0], SLOT, 4);
    CHECK(tx != NULL);
    send_all(tx);
    CHECK(wait_for(pid) == 0);

    /* An abstract name: the parent listens and receives, the child
     * connects and sends. */
    char name[64];
    snprintf(name, sizeof name, "ferry-c-test-ipc-%d", (int)getpid());
    fy_ipc_listener *l = fy_ipc_listen(name);
    CHECK(l != NULL);
    CHECK(fy_ipc_listen(name) == NULL && errno == EADDRINUSE);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int s = fy_ipc_connect(name);
        fy_ipc_sender *t = fy_ipc_sender_open(s, SLOT, 4);
        if (!t)
            _exit(10);
        send_all(t);
        _exit(0);
    }
    int s = fy_ipc_accept(l, 10000);
    CHECK(s >= 0);
    fy_ipc_listener_close(l);
    fy_ipc_receiver *rx = fy_ipc_receiver_open(s);
    CHECK(rx != NULL);
    CHECK(receive_all(rx) == 0);
    CHECK(wait_for(pid) == 0);
    CHECK(fy_ipc_connect(name) == -1 && errno == ECONNREFUSED);

    /* The sender killed: EIO after what came, which stays readable. */
    CHECK(fy_ipc_pair(sv) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(sv[1]);
        fy_ipc_sender *t = fy_ipc_sender_open(sv[0], SLOT, 4);
        if (!t || fy_ipc_send(t, "kept", 4) != 4)
            _exit(10);
        pause();
        _exit(11);
    }
    close(sv[0]);
    rx = fy_ipc_receiver_open(sv[1]);
    CHECK(rx != NULL);
    const void *p;
    CHECK(fy_ipc_recv(rx, &p) == 4);
    CHECK(kill(pid, SIGKILL) == 0);
    CHECK(wait_for(pid) == 128 + SIGKILL);
    const void *q;
    CHECK(fy_ipc_recv(rx, &q) == -1 && errno == EIO);
    CHECK(memcmp(p, "kept", 4) == 0);
    CHECK(fy_ipc_release(rx, p) == 0);
    fy_ipc_receiver_close(rx);

    /* Bad arguments: errors, no crash. */
    CHECK(fy_ipc_sender_open(-1, 0, 0) == NULL && errno == EBADF);
    CHECK(fy_ipc_listen(NULL) == NULL && errno == EINVAL);
    CHECK(fy_ipc_recv(NULL, &p) == -1 && errno == EINVAL);
    puts("ok");
    return 0;
}
