/* Writing to a pipe whose reader has gone. glibc's write(2) gets the
 * kernel's SIGPIPE: with the default action the process dies of it (so
 * `prog | head` ends quietly), with a handler the handler runs and the
 * write fails with EPIPE, and ignored it is only the EPIPE error. Each
 * case runs in a child; the parent prints how it ended. (bzip2 -c into a
 * closed pipe died so under glibc and printed "Broken pipe" under ferry.) */
#include <stdio.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

static volatile sig_atomic_t caught;

static void on_pipe(int sig)
{
    (void)sig;
    caught++;
}

/* mode 0: default action, 1: a handler, 2: ignored, 3: blocked. */
static void child(int mode, int buffering, int use_printf)
{
    int p[2];
    if (pipe(p) != 0)
        _exit(100);
    close(p[0]);
    if (mode == 1)
        signal(SIGPIPE, on_pipe);
    if (mode == 2)
        signal(SIGPIPE, SIG_IGN);
    if (mode == 3) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGPIPE);
        sigprocmask(SIG_BLOCK, &s, NULL);
    }
    FILE *f = fdopen(p[1], "w");
    if (!f)
        _exit(101);
    setvbuf(f, NULL, buffering, 0);
    errno = 0;
    int r = use_printf ? fprintf(f, "%s %d\n", "some bytes", 42) : fputs("some bytes\n", f);
    int e1 = errno;
    int fl = fflush(f);
    int e2 = errno;
    printf("    write %d errno %s, fflush %d errno %s, ferror %d, handler ran %s\n",
           r < 0 ? -1 : 0, e1 ? strerror(e1) : "0", fl, e2 ? strerror(e2) : "0", ferror(f),
           caught ? "yes" : "no");
    if (mode == 3) {
        sigset_t pending;
        sigpending(&pending);
        printf("    SIGPIPE pending: %d\n", sigismember(&pending, SIGPIPE));
    }
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    static const char *modes[] = {"default", "handler", "ignored", "blocked"};
    static const int bufs[] = {_IOFBF, _IOLBF, _IONBF};
    static const char *bufname[] = {"full", "line", "none"};
    for (int m = 0; m < 4; m++)
        for (int b = 0; b < 3; b++)
            for (int pf = 0; pf < 2; pf++) {
                printf("%s, %s buffering, %s:\n", modes[m], bufname[b], pf ? "fprintf" : "fputs");
                fflush(stdout);
                pid_t pid = fork();
                if (pid == 0)
                    child(m, bufs[b], pf);
                int st;
                waitpid(pid, &st, 0);
                if (WIFSIGNALED(st))
                    printf("  died of signal %d\n", WTERMSIG(st));
                else
                    printf("  exit %d\n", WEXITSTATUS(st));
            }
    return 0;
}
