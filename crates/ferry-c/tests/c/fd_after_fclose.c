/* A descriptor dup'd from a FILE's outlives fclose, as with glibc: it
 * reads the file through the system. And a lookup of such a descriptor
 * racing the fclose must never touch the freed FILE. Built against
 * ferry, the descriptor calls are ferry/unistd.h's (emulated Unix I/O). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#ifdef FERRY_STDIO_H
#include <ferry/unistd.h>
#endif

#define ROUNDS 400

static atomic_int cur = -1;
static atomic_int done;

static void *closer(void *arg)
{
    (void)arg;
    char name[32];
    for (int i = 0; i < ROUNDS; i++) {
        snprintf(name, sizeof name, "f%d", i);
        FILE *f = fopen(name, "w+");
        if (!f) {
            perror("fopen");
            exit(2);
        }
        fputs("hello", f);
        fflush(f);
        int d = dup(fileno(f));
        atomic_store(&cur, d);
        sched_yield();
        fclose(f); /* the FILE goes while the other thread may use d */
        atomic_store(&cur, -1);
        close(d);
    }
    atomic_store(&done, 1);
    return NULL;
}

static void *user(void *arg)
{
    (void)arg;
    char b[8];
    while (!atomic_load(&done)) {
        int d = atomic_load(&cur);
        if (d >= 0)
            (void)!pread(d, b, 5, 0); /* data, EBADF or another file: all fine */
    }
    return NULL;
}

int main(void)
{
    /* One thread: the dup'd descriptor after fclose. */
    FILE *f = fopen("one", "w+");
    fputs("hello", f);
    fflush(f);
    int d = dup(fileno(f));
    fclose(f);
    char b[8] = {0};
    printf("lseek %ld\n", (long)lseek(d, 0, SEEK_SET));
    printf("read %zd %s\n", read(d, b, 5), b);
    printf("pread %zd\n", pread(d, b, 2, 3));
    printf("write %zd\n", write(d, "!", 1));
    printf("close %d\n", close(d));

    pthread_t a, u;
    pthread_create(&a, NULL, closer, NULL);
    pthread_create(&u, NULL, user, NULL);
    pthread_join(a, NULL);
    pthread_join(u, NULL);
    FILE *g = fopen("one", "r");
    char line[16] = {0};
    printf("file: %s\n", fgets(line, sizeof line, g) ? line : "(none)");
    fclose(g);
    printf("done\n");
    return 0;
}
