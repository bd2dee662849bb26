/* fflush(NULL) and the flush of line-buffered output that a read does,
 * while another thread opens, writes and closes files: a walk of the
 * open streams must never touch one that fclose has freed. Bounded: a
 * fixed number of files; the flushing threads stop when the writer is
 * done. The program then checks every file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>

#define FILES 400
#define KEEP 64

static atomic_int done;

static void *writer(void *arg)
{
    (void)arg;
    char name[32];
    for (int i = 0; i < FILES; i++) {
        snprintf(name, sizeof name, "f%d", i);
        FILE *f = fopen(name, "w");
        if (!f) {
            perror("fopen");
            exit(2);
        }
        /* Some line-buffered, so a read's line-buffered flush has work. */
        if (i % 2)
            setvbuf(f, NULL, _IOLBF, 0);
        for (int k = 0; k < 20; k++)
            fprintf(f, "file %d line %d\n", i, k);
        if (fclose(f) != 0) {
            perror("fclose");
            exit(2);
        }
    }
    atomic_store(&done, 1);
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    long n = 0;
    while (!atomic_load(&done)) {
        if (fflush(NULL) != 0) {
            perror("fflush(NULL)");
            exit(2);
        }
        n++;
    }
    return (void *)n;
}

/* Reads an unbuffered stream: each refill flushes the line-buffered
 * output streams first (glibc does that for stdout). */
static void *reader(void *arg)
{
    (void)arg;
    FILE *in = fopen("input", "r");
    if (!in) {
        perror("fopen input");
        exit(2);
    }
    setvbuf(in, NULL, _IONBF, 0);
    while (!atomic_load(&done)) {
        int c;
        while ((c = getc(in)) != EOF)
            ;
        rewind(in);
    }
    fclose(in);
    return NULL;
}

int main(void)
{
    FILE *in = fopen("input", "w");
    fputs("a few bytes to read\n", in);
    fclose(in);
    /* Streams that stay open: a walk goes through them before it reaches
     * the writer's newest one, which may be closing meanwhile. */
    FILE *keep[KEEP];
    for (int i = 0; i < KEEP; i++) {
        char name[32];
        snprintf(name, sizeof name, "keep%d", i);
        keep[i] = fopen(name, "w");
    }
    /* stdout line-buffered too (it is a pipe here). */
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t w, f, r;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&f, NULL, flusher, NULL);
    pthread_create(&r, NULL, reader, NULL);
    pthread_join(w, NULL);
    pthread_join(f, NULL);
    pthread_join(r, NULL);
    for (int i = 0; i < KEEP; i++)
        fclose(keep[i]);
    /* Every file whole. */
    int bad = 0;
    for (int i = 0; i < FILES; i++) {
        char name[32], line[64], want[64];
        snprintf(name, sizeof name, "f%d", i);
        FILE *g = fopen(name, "r");
        int k = 0;
        while (g && fgets(line, sizeof line, g)) {
            snprintf(want, sizeof want, "file %d line %d\n", i, k);
            bad += strcmp(line, want) != 0;
            k++;
        }
        bad += k != 20;
        if (g)
            fclose(g);
    }
    printf("%d files, %s\n", FILES, bad ? "damaged" : "all whole");
    return bad != 0;
}
