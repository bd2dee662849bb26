/* The Alloc Stream Interface: the paper's operations and error rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <ferry/asi.h>

#include "check.h"

static fy_stream *shared;

static void *records(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 3000; i++) {
        ssize_t len = 16;
        char *p = fy_salloc(shared, &len);
        if (!p || len != 16)
            abort();
        memset(p, ' ', 16);
        int k = snprintf(p, 16, "%ld:%06d", id, i);
        p[k] = ' ';
        p[15] = '\n';
        if (fy_sfree(shared, p) != 0)
            abort();
    }
    return NULL;
}

int main(void)
{
    int err = 1;
    CHECK(fy_sopen("missing", O_RDONLY, 0, &err) == NULL && err == -ENOENT);
    CHECK(fy_sopen(".", O_WRONLY, 0, &err) == NULL && err == -EISDIR);

    /* Write mode by default for a writable stream; srealloc 200 → 20
     * (the paper's example): the next region starts at byte 21. */
    fy_stream *s = fy_sopen("out", O_WRONLY | O_CREAT | O_TRUNC, 0644, &err);
    CHECK(s && err == 0);
    ssize_t len = 200;
    char *p = fy_salloc(s, &len);
    CHECK(p && len == 200);
    memset(p, 'a', 200);
    len = 20;
    p = fy_srealloc(s, p, &len);
    CHECK(p && len == 20);
    CHECK(fy_sfree(s, p) == 0);
    len = 5;
    p = fy_salloc(s, &len);
    memcpy(p, "BCDEF", 5);
    fy_sfree(s, p);
    /* Regions freed out of order land in allocation order. */
    char *q[4];
    for (int i = 0; i < 4; i++) {
        len = 2;
        q[i] = fy_salloc(s, &len);
        q[i][0] = '0' + i;
        q[i][1] = '|';
    }
    fy_sfree(s, q[2]);
    fy_sfree(s, q[0]);
    fy_sfree(s, q[3]);
    fy_sfree(s, q[1]);
    CHECK(fy_sflush(s) == 0);
    /* Reading in write mode needs the mode switched. */
    CHECK(fy_set_stream_mode(s, 7) == -EINVAL);
    CHECK(fy_sclose(s) == 0);

    s = fy_sopen("out", O_RDONLY, 0, &err);
    len = 1000;
    const char *r = fy_salloc(s, &len);
    CHECK(r && len == 33);
    CHECK(memcmp(r, "aaaaaaaaaaaaaaaaaaaaBCDEF0|1|2|3|", 33) == 0);
    fy_sfree(s, (void *)r);
    len = 10;
    r = fy_salloc(s, &len);
    CHECK(r && len == 0);  /* end of file: a region of nothing */
    fy_sfree(s, (void *)r);
    /* Write mode on a read-only stream: the error comes back from the call. */
    len = 4;
    CHECK(fy_Salloc(s, FY_WRITE, &len) == NULL && len == -EBADF);
    len = -1;
    CHECK(fy_salloc(s, &len) == NULL && len == -EINVAL);
    len = 5;
    r = fy_SallocAt(s, FY_READ, &len, 20, SEEK_SET);
    CHECK(r && len == 5 && memcmp(r, "BCDEF", 5) == 0);
    /* Unlocked operations under the caller's lock. */
    fy_lock(s);
    len = 2;
    const char *u = fy_u_salloc(s, &len);
    CHECK(u && len == 2 && memcmp(u, "0|", 2) == 0);
    CHECK(fy_u_sfree(s, (void *)u) == 0);
    fy_unlock(s);
    CHECK(fy_sfree(s, (void *)r) == 0);
    CHECK(fy_sfree(s, (void *)r) == -EINVAL);
    CHECK(fy_sclose(s) == 0);

    /* A pipe cannot sallocat. */
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    FILE *pf = fdopen(pfd[0], "r");
    len = 1;
    CHECK(fy_sallocat(pf, &len, 0, SEEK_SET) == NULL && len == -ESPIPE);
    fclose(pf);

    /* Threads: 4 × 3000 records, each 16 bytes, all whole, in the
     * file in allocation order (each thread's records in its order). */
    shared = fy_sopen("records", O_WRONLY | O_CREAT | O_TRUNC, 0644, &err);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, records, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK(fy_sclose(shared) == 0);
    FILE *in = fopen("records", "r");
    char line[32];
    int next[4] = {0}, n = 0;
    while (fgets(line, sizeof line, in)) {
        int id = line[0] - '0', i = atoi(line + 2);
        CHECK(strlen(line) == 16 && id >= 0 && id < 4 && i == next[id]);
        next[id]++;
        n++;
    }
    CHECK(n == 12000);
    fclose(in);
    printf("ok\n");
    return 0;
}
