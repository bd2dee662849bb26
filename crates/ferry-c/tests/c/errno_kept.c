/* Calls that succeed leave errno alone where glibc's do: a stream that is
 * no terminal or cannot seek (isatty, lseek inside) must not leave
 * ENOTTY or ESPIPE behind. stdin is a pipe here, stdout too. */
#include <stdio.h>
#include <errno.h>
#include <unistd.h>

int main(void)
{
    int e[8], k = 0;
    errno = 0;
    printf("first output\n");
    e[k++] = errno;
    errno = 0;
    fflush(stdout);
    e[k++] = errno;
    errno = 0;
    FILE *f = fopen("file", "w+");
    e[k++] = errno;
    errno = 0;
    fputs("abc\n", f);
    fflush(f);
    rewind(f);
    e[k++] = errno;
    errno = 0;
    getc(f);
    e[k++] = errno;
    int p[2];
    if (pipe(p) != 0 || write(p[1], "z\n", 2) != 2)
        return 2;
    errno = 0;
    FILE *g = fdopen(p[0], "r");
    e[k++] = errno;
    errno = 0;
    getc(g);
    e[k++] = errno;
    errno = 0;
    getc(stdin);
    e[k++] = errno;
    for (int i = 0; i < k; i++)
        printf("%d ", e[i]);
    printf("\n");
    fclose(f);
    fclose(g);
    return 0;
}
