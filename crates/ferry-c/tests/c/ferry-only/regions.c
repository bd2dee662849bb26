/* Read regions are read-only: they are the stream's own bytes, which
 * other holders may share (a fy_buf made from a region, the page cache
 * of a mapped file). For a mapped file the pages are mapped read-only,
 * so a write through a read region faults: shown in a child process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>
#include <ferry/asi.h>
#include <ferry/buf.h>

#include "check.h"

#define SIZE (1 << 20)

int main(void)
{
    FILE *w = fopen("mapped", "w");
    CHECK(w != NULL);
    for (int i = 0; i < SIZE; i++)
        putc('a' + i % 26, w);
    CHECK(fclose(w) == 0);

    /* Held as a const pointer, as the header says: reading, freeing and
     * keeping the region need no cast; writing needs one. */
    int err;
    fy_stream *s = fy_sopen("mapped", O_RDONLY, 0, &err);
    CHECK(s != NULL);
    ssize_t len = SIZE;
    const char *p = fy_salloc(s, &len);
    CHECK(p && len == SIZE && p[0] == 'a' && p[SIZE - 1] == 'a' + (SIZE - 1) % 26);

    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        /* The rule broken on purpose: the write must not go through. */
        ((volatile char *)p)[0] = 'X';
        _exit(0);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status) && (WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS));
    CHECK(p[0] == 'a');
    /* A buffer made from the region shares its bytes (no copy): one
     * more reason they must not change. */
    fy_buf *b = fy_region_to_buf(s, p);
    CHECK(b && fy_buf_len(b) == SIZE && fy_buf_data(b)[0] == 'a');
    len = 10;
    const char *q = fy_sallocat(s, &len, 0, SEEK_SET);
    CHECK(q && len == 10 && q[9] == 'j');
    CHECK(fy_sfree(s, q) == 0);
    CHECK(fy_sclose(s) == 0);
    /* The file is unchanged. */
    FILE *r = fopen("mapped", "r");
    CHECK(r && getc(r) == 'a');
    fclose(r);
    fy_buf_release(b);
    printf("ok\n");
    return 0;
}
