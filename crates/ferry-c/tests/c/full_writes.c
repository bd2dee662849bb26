/* Writes to /dev/full through every write call: the call whose buffer
 * could not be written out reports it (EOF or a short count, errno
 * ENOSPC, ferror set), as glibc's — ferry's never did: the failure of a
 * full buffer written in the background was lost, and only fflush or
 * fclose ever failed. (Where in the output the failure comes depends on
 * the buffer size, so only whether it came is printed.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define TOTAL (4 << 20)

static void run(int how)
{
    const char *names[] = {"fputs", "fputc", "fwrite", "fprintf", "putc"};
    FILE *f = fopen("/dev/full", "w");
    if (!f) {
        printf("no /dev/full\n");
        return;
    }
    int failed = 0, e = 0;
    for (long done = 0; done < TOTAL && !failed;) {
        int r;
        switch (how) {
        case 0:
            r = fputs("a line of text\n", f) < 0;
            done += 15;
            break;
        case 1:
            r = fputc('x', f) == EOF;
            done += 1;
            break;
        case 2:
            r = fwrite("a line of text\n", 1, 15, f) != 15;
            done += 15;
            break;
        case 3:
            r = fprintf(f, "line %ld\n", done) < 0;
            done += 10;
            break;
        default:
            r = putc('y', f) == EOF;
            done += 1;
            break;
        }
        if (r) {
            failed = 1;
            e = errno;
        }
    }
    printf("%s: failed %d, ENOSPC %d, ferror %d\n", names[how], failed, e == ENOSPC, ferror(f) != 0);
    fclose(f);
}

int main(void)
{
    for (int how = 0; how < 5; how++)
        run(how);
    return 0;
}
