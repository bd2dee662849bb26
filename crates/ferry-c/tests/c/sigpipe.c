/* Writing to a pipe or socket whose reader has gone: a C program dies of
 * SIGPIPE (unless it ignores the signal: then the write fails with EPIPE),
 * through every kind of stream. Each case runs in a child; the parent
 * prints how the child ended. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int broken_pipe(void)
{
    int p[2];
    if (pipe(p) != 0)
        exit(90);
    close(p[0]);
    return p[1];
}

static void report(const char *what, void (*child)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        child();
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st))
        printf("%s: killed by signal %d\n", what, WTERMSIG(st));
    else
        printf("%s: exit %d\n", what, WEXITSTATUS(st));
}

static void fdopen_fflush(void)
{
    FILE *f = fdopen(broken_pipe(), "w");
    fputs("x\n", f);
    fflush(f);
    _exit(3);
}

static void stdout_lines(void)
{
    dup2(broken_pipe(), 1);
    for (int i = 0; i < 100000; i++)
        printf("line %d\n", i);
    exit(4); /* exit's flush raises it at the latest */
}

static void stderr_unbuffered(void)
{
    dup2(broken_pipe(), 2);
    fputs("to stderr\n", stderr);
    _exit(5);
}

static void ignored(void)
{
    signal(SIGPIPE, SIG_IGN);
    FILE *f = fdopen(broken_pipe(), "w");
    fputs("x\n", f);
    errno = 0;
    int r = fflush(f);
    int e = errno;
    printf("  ignored: fflush %d, EPIPE %d, ferror %d\n", r, e == EPIPE, ferror(f) != 0);
    fclose(f);
    exit(6);
}

static volatile sig_atomic_t caught;

static void on_pipe(int sig)
{
    (void)sig;
    caught++;
}

/* One failed write, one signal (not one from the write and another from
 * the library). */
static void handled_once(void)
{
    signal(SIGPIPE, on_pipe);
    FILE *f = fdopen(broken_pipe(), "w");
    fputs("x\n", f);
    int r = fflush(f);
    printf("  handled: fflush %d, handler ran %d time(s)\n", r, (int)caught);
    fclose(f);
    exit(9);
}

static void socket_peer_gone(void)
{
    int s[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
        _exit(91);
    close(s[1]);
    FILE *f = fdopen(s[0], "w");
    fputs("x\n", f);
    fflush(f);
    _exit(7);
}

static void popen_reader_gone(void)
{
    FILE *f = popen("exec true", "w");
    /* The child exits without reading: the write end breaks. */
    sleep(0);
    for (int i = 0; i < 100000 && !ferror(f); i++)
        fputs("to a reader that is gone\n", f);
    pclose(f);
    _exit(8);
}

int main(void)
{
    report("fdopen + fflush", fdopen_fflush);
    report("stdout, fully buffered", stdout_lines);
    report("stderr, unbuffered", stderr_unbuffered);
    report("SIGPIPE ignored", ignored);
    report("SIGPIPE handled", handled_once);
    report("socket whose peer closed", socket_peer_gone);
    report("popen writer", popen_reader_gone);
    return 0;
}
