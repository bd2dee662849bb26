/* An emulated-I/O call on a negative descriptor must fail at once
 * with EBADF. ferry's lookup() treats every fd <= 2 as a std stream and
 * takes stdin's FILE lock to check it (unistd.rs lookup: index fd.max(0)),
 * so while another thread waits in fgets(stdin), write(-1, ...) blocks too. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <ferry/unistd.h>
#include "../ferry-only/check.h"

static int wr;

static void *reader(void *arg) {
    (void)arg;
    char line[64];
    fgets(line, sizeof line, stdin); /* blocks: no input yet */
    return NULL;
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "hung: write(-1) waited for stdin's reader\n";
    if (write(2, msg, sizeof msg - 1) < 0) {}
    _exit(3);
}

int main(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(dup2(p[0], 0) == 0);
    wr = p[1];
    pthread_t t;
    CHECK(pthread_create(&t, NULL, reader, NULL) == 0);
    usleep(300 * 1000); /* let the reader block in fgets, holding stdin */
    signal(SIGALRM, on_alarm);
    alarm(3);
    errno = 0;
    ssize_t r = write(-1, "x", 1);
    alarm(0);
    CHECK(r == -1 && errno == EBADF);
    CHECK(write(wr, "line\n", 5) == 5);
    pthread_join(t, NULL);
    printf("ok\n");
    return 0;
}
