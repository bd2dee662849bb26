/* exit() while another thread is blocked in fgets(stdin) (a pipe that
 * stays open and empty): the exit-time flush must not wait for the
 * stream the reader holds, and the output buffered in stdout and in a
 * file still reaches its place. popen, which flushes in ferry, must not
 * wait for it either. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <pthread.h>

static void *reader(void *arg)
{
    (void)arg;
    char buf[100];
    if (fgets(buf, sizeof buf, stdin))
        printf("read a line: unexpected\n");
    return NULL;
}

int main(void)
{
    FILE *f = fopen("left-open", "w");
    fprintf(f, "buffered in a file\n");
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    /* Give the reader time to block inside fgets. */
    usleep(200 * 1000);
    printf("buffered in stdout, then exit\n");
    FILE *g = fopen("left-open", "r");
    printf("the file is %s before exit\n", g && fgetc(g) == EOF ? "empty" : "not empty");
    if (g)
        fclose(g);
    FILE *p = popen("echo from a child", "r");
    char line[100];
    if (p && fgets(line, sizeof line, p))
        printf("popen: %s", line);
    if (p)
        printf("pclose: %d\n", pclose(p));
    exit(0);
}
