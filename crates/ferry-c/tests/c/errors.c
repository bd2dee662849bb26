/* Errors: glibc's errno values and return values. */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

static void try_open(const char *path, const char *mode)
{
    errno = 0;
    FILE *f = fopen(path, mode);
    printf("fopen(%s, %s): %s %s\n", path, mode, f ? "ok" : "NULL", f ? "" : strerror(errno));
    if (f) {
        char b[4];
        errno = 0;
        size_t n = fread(b, 1, 4, f);
        printf("  fread %zu err %d eof %d errno %s\n", n, ferror(f), feof(f), strerror(errno));
        fclose(f);
    }
}

int main(void)
{
    FILE *f = fopen("file", "w");
    fputs("x", f);
    fclose(f);
    try_open("missing", "r");
    try_open("missing/x", "w");
    try_open("file/x", "r");
    try_open(".", "r");
    try_open(".", "w");
    try_open(".", "r+");
    try_open("/proc/version", "w");
    try_open("file", "z");
    try_open("file", "");
    try_open("file", "rb");
    try_open("", "r");
    errno = 0;
    f = fdopen(12345, "r");
    printf("fdopen bad fd: %p %s\n", (void *)f, strerror(errno));
    int fd = dup(1);
    errno = 0;
    f = fdopen(fd, "q");
    printf("fdopen bad mode: %p %s\n", (void *)f, strerror(errno));
    close(fd);
    /* A FILE whose descriptor was closed behind its back. */
    f = fopen("file", "r");
    close(fileno(f));
    errno = 0;
    char b[4];
    size_t got = fread(b, 1, 4, f);
    printf("read from closed fd: %zu err %d errno %s\n", got, ferror(f), strerror(errno));
    fclose(f);
    f = fopen("out", "w");
    close(fileno(f));
    fputs("lost?", f);
    errno = 0;
    int fl = fflush(f);
    printf("fflush to closed fd: %d errno %s err %d\n", fl, strerror(errno), ferror(f));
    errno = 0;
    fl = fclose(f);
    printf("fclose: %d errno %s\n", fl, strerror(errno));
    return 0;
}
