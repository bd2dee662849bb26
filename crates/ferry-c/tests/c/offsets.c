/* The descriptor's offset at the points POSIX 2.5.1 names (fflush, fseek,
 * fclose, exit), and handing an open file description from a stream to
 * another handle and back: dup + fdopen, fork with the child writing,
 * the parent reading after the child, O_APPEND, read streams handing over
 * to read(2). Every case prints the offsets it sees and the file's bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long here(int fd)
{
    return (long)lseek(fd, 0, SEEK_CUR);
}

static void show(const char *path)
{
    char buf[256];
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        n = 0;
    buf[n] = 0;
    printf("  %s holds %zd bytes: ", path, n);
    for (ssize_t i = 0; i < n; i++)
        putchar(buf[i] == '\n' ? '|' : buf[i]);
    putchar('\n');
}

static void after_fflush(void)
{
    FILE *f = fopen("w1", "w");
    fputs("AAAA\n", f);
    printf("after_fflush: before fflush %ld\n", here(fileno(f)));
    fflush(f);
    printf("  after fflush %ld\n", here(fileno(f)));
    fputs("BB\n", f);
    fseek(f, 0, SEEK_CUR);
    printf("  after fseek(0, SEEK_CUR) %ld\n", here(fileno(f)));
    fseek(f, 2, SEEK_SET);
    printf("  after fseek(2, SEEK_SET) %ld\n", here(fileno(f)));
    fputs("c", f);
    fclose(f);
    show("w1");
}

static void dup_fdopen(void)
{
    FILE *f = fopen("w2", "w");
    fputs("AAAA\n", f);
    fflush(f);
    FILE *g = fdopen(dup(fileno(f)), "w");
    fputs("BBBB\n", g);
    fclose(g);
    printf("dup_fdopen: after the other stream's fclose %ld\n", here(fileno(f)));
    /* f goes on where g left the offset. */
    fputs("CCCC\n", f);
    fflush(f);
    printf("  after f wrote again %ld, ftell %ld\n", here(fileno(f)), ftell(f));
    fclose(f);
    show("w2");
}

static void fork_child_writes(void)
{
    FILE *f = fopen("w3", "w+");
    fputs("parent\n", f);
    fflush(f);
    pid_t p = fork();
    if (p == 0) {
        fputs("child\n", f);
        exit(0);
    }
    waitpid(p, NULL, 0);
    printf("fork_child_writes: after the child %ld\n", here(fileno(f)));
    /* The parent reads what both wrote. */
    fseek(f, 0, SEEK_SET);
    char line[64];
    while (fgets(line, sizeof line, f))
        printf("  read: %s", line);
    fclose(f);
    show("w3");
}

static void fork_child_closes(void)
{
    FILE *f = fopen("w4", "w");
    fputs("one\n", f);
    fflush(f);
    pid_t p = fork();
    if (p == 0) {
        fputs("two\n", f);
        fclose(f);
        _exit(0);
    }
    waitpid(p, NULL, 0);
    printf("fork_child_closes: after the child %ld, ftell %ld\n", here(fileno(f)), ftell(f));
    fputs("three\n", f);
    fclose(f);
    show("w4");
}

static void appending(void)
{
    int fd = open("w5", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    write(fd, "0123456789\n", 11);
    close(fd);
    FILE *f = fopen("w5", "a");
    fputs("more\n", f);
    fflush(f);
    printf("appending: after fflush %ld\n", here(fileno(f)));
    write(fileno(f), "raw\n", 4);
    fputs("last\n", f);
    fclose(f);
    show("w5");
    f = fopen("w5", "a+");
    fputs("plus\n", f);
    fflush(f);
    printf("  a+ after fflush %ld\n", here(fileno(f)));
    fclose(f);
    show("w5");
}

static void read_hand_over(void)
{
    int fd = open("r1", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    write(fd, "line1\nline2\nline3\nline4\n", 24);
    close(fd);
    char line[64], raw[64];
    FILE *f = fopen("r1", "r");
    fgets(line, sizeof line, f);
    fflush(f);
    printf("read_hand_over: after fgets + fflush %ld\n", here(fileno(f)));
    ssize_t n = read(fileno(f), raw, 6);
    printf("  read(2) gives %.*s", (int)(n > 0 ? n : 0), raw);
    fseek(f, 0, SEEK_CUR);
    printf("  after fseek(0, SEEK_CUR) %ld\n", here(fileno(f)));
    fgets(line, sizeof line, f);
    printf("  fgets then gives %s", line);
    fclose(f);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    after_fflush();
    dup_fdopen();
    fork_child_writes();
    fork_child_closes();
    appending();
    read_hand_over();
    return 0;
}
