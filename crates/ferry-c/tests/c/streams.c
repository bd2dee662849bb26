/* tmpfile, popen, fmemopen, open_memstream, fdopen, freopen, setvbuf,
 * flockfile, fflush(NULL). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>

int main(void)
{
    FILE *t = tmpfile();
    fprintf(t, "temporary %d\n", 1);
    rewind(t);
    char line[64];
    printf("tmpfile: [%s]", fgets(line, sizeof line, t));
    fclose(t);

    FILE *p = popen("printf 'one\\ntwo\\n'; exit 3", "r");
    while (fgets(line, sizeof line, p))
        printf("popen r: %s", line);
    int st = pclose(p);
    printf("pclose: exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));
    fflush(stdout);
    p = popen("tr a-z A-Z", "w");
    fputs("shouted through a pipe\n", p);
    st = pclose(p);
    printf("pclose w: %d\n", WEXITSTATUS(st));

    char mem[32] = "0123456789";
    FILE *m = fmemopen(mem, 10, "r");
    printf("fmemopen r: [%c%c] ", getc(m), getc(m));
    fseek(m, -2, SEEK_END);
    printf("[%c%c] eof-next %d\n", getc(m), getc(m), getc(m));
    fclose(m);
    m = fmemopen(mem, sizeof mem, "w");
    fprintf(m, "hi %d", 5);
    fflush(m);
    printf("fmemopen w: [%s]\n", mem);
    fclose(m);

    char *buf = NULL;
    size_t size = 0;
    FILE *ms = open_memstream(&buf, &size);
    fprintf(ms, "hello %s", "memstream");
    fflush(ms);
    printf("open_memstream: [%s] size %zu\n", buf, size);
    for (int i = 0; i < 10000; i++)
        fputc('x', ms);
    fclose(ms);
    printf("open_memstream closed: size %zu strlen %zu\n", size, strlen(buf));
    free(buf);

    int fd = open("fd-file", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FILE *f = fdopen(fd, "w");
    printf("fdopen fileno same %d\n", fileno(f) == fd);
    fputs("via fdopen\n", f);
    fclose(f);
    f = fopen("fd-file", "r");
    printf("fdopen wrote: %s", fgets(line, sizeof line, f));
    fclose(f);

    f = fopen("fd-file", "r");
    f = freopen("other", "w", f);
    fputs("reopened\n", f);
    fclose(f);
    f = fopen("other", "r");
    printf("freopen: %s", fgets(line, sizeof line, f));
    fclose(f);

    f = fopen("buffered", "w");
    printf("setvbuf full %d ", setvbuf(f, NULL, _IOFBF, 1 << 16));
    printf("line %d ", setvbuf(f, NULL, _IOLBF, 0));
    printf("none %d ", setvbuf(f, NULL, _IONBF, 0));
    printf("bad %d\n", setvbuf(f, NULL, 42, 0));
    static char userbuf[BUFSIZ];
    setbuf(f, userbuf);
    setlinebuf(f);
    fputs("line buffered\n", f);
    flockfile(f);
    printf("ftrylockfile own %d\n", ftrylockfile(f));
    funlockfile(f);
    funlockfile(f);
    fclose(f);

    f = fopen("flushall", "w");
    fputs("pending", f);
    printf("fflush(NULL) %d\n", fflush(NULL));
    FILE *g = fopen("flushall", "r");
    printf("seen after fflush(NULL): %s\n", fgets(line, sizeof line, g));
    fclose(g);
    fclose(f);
    printf("fileno std %d %d %d\n", fileno(stdin), fileno(stdout), fileno(stderr));
    return 0;
}
