/* Streams that write at the descriptor's own offset over a regular file —
 * fdopen "w" and "a", stdout and stderr sent to a file — seek and tell as
 * glibc's (ferry's failed with ESPIPE, and the bytes meant to overwrite
 * went to the end). And an appending stream whose file another writer
 * appended to: ftell counts from the real end, and after fflush the
 * descriptor's offset is where its write ended. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long here(int fd)
{
    return (long)lseek(fd, 0, SEEK_CUR);
}

static void show(const char *path)
{
    char b[128] = {0};
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    printf("  %s holds %zd bytes: ", path, n);
    for (ssize_t i = 0; i < n; i++)
        putchar(b[i] == '\n' ? '|' : b[i]);
    putchar('\n');
}

static void fdopen_w(void)
{
    int fd = open("w", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FILE *f = fdopen(fd, "w");
    fputs("hello world", f);
    errno = 0;
    long t = ftell(f);
    printf("fdopen w: ftell %ld errno %d\n", t, errno);
    int r = fseek(f, 6, SEEK_SET);
    printf("  fseek 6: %d, offset %ld\n", r, here(fd));
    fputs("WORLD", f);
    t = ftell(f);
    printf("  ftell %ld\n", t);
    r = fseek(f, -2, SEEK_CUR);
    printf("  fseek -2 cur: %d, offset %ld\n", r, here(fd));
    fputs("ld", f);
    r = fseek(f, 0, SEEK_END);
    t = ftell(f);
    printf("  fseek end: %d, ftell %ld\n", r, t);
    rewind(f);
    fputs("J", f);
    errno = 0;
    r = fseek(f, -100, SEEK_SET);
    printf("  fseek -100: %d errno %d err %d\n", r, errno, ferror(f) != 0);
    fclose(f);
    show("w");
}

static void fdopen_a(void)
{
    int fd = open("a", O_RDWR | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789", 10);
    lseek(fd, 2, SEEK_SET);
    FILE *f = fdopen(dup(fd), "a");
    long t = ftell(f);
    printf("fdopen a: ftell %ld, offset %ld\n", t, here(fd));
    fputs("A", f);
    t = ftell(f);
    printf("  after a byte: ftell %ld\n", t);
    fflush(f);
    t = ftell(f);
    printf("  after fflush: ftell %ld, offset %ld\n", t, here(fd));
    fclose(f);
    close(fd);
    show("a");
}

static void stdout_to_a_file(void)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        int fd = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        close(fd);
        printf("header: ....\nbody\n");
        long t = ftell(stdout);
        int r = fseek(stdout, 8, SEEK_SET);
        printf("%ld", t);
        fprintf(stderr, "  child: ftell %ld fseek %d\n", t, r);
        exit(0);
    }
    waitpid(p, NULL, 0);
    printf("stdout sent to a file:\n");
    show("out");
}

static void appending_with_another_writer(void)
{
    FILE *f = fopen("app", "w");
    fputs("0123456789", f);
    fclose(f);
    f = fopen("app", "a");
    int other = open("app", O_WRONLY | O_APPEND);
    fputs("F", f);
    write(other, "G", 1);
    fputs("H", f);
    long t = ftell(f);
    printf("appending, another writer: ftell %ld\n", t);
    fflush(f);
    long off = here(fileno(f));
    t = ftell(f);
    printf("  after fflush: offset %ld ftell %ld\n", off, t);
    write(other, "I", 1);
    fputs("J", f);
    fclose(f);
    close(other);
    show("app");
}

int main(void)
{
    fdopen_w();
    fdopen_a();
    stdout_to_a_file();
    appending_with_another_writer();
    return 0;
}
