/* A line-buffered stream writes through the last newline of what it is
 * given and keeps the partial line after it (ferry wrote it all at once);
 * an unbuffered one writes everything. The descriptor's offset shows what
 * has been written. (setvbuf's size is not compared: ferry keeps its own
 * buffers, so a tiny _IOFBF buffer does not make it write sooner.) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long here(int fd)
{
    return (long)lseek(fd, 0, SEEK_CUR);
}

int main(void)
{
    int modes[] = {_IONBF, _IOLBF, _IOFBF};
    const char *names[] = {"_IONBF", "_IOLBF", "_IOFBF"};
    for (int m = 0; m < 3; m++) {
        FILE *f = fopen("out", "w+");
        setvbuf(f, NULL, modes[m], 1 << 16);
        fputs("ab\ncd", f);
        long a = here(fileno(f));
        fprintf(f, "e\nf\ng");
        long b = here(fileno(f));
        fputs("h", f);
        long c = here(fileno(f));
        fputs("\n", f);
        long d = here(fileno(f));
        fseek(f, 1, SEEK_SET);
        fputc('B', f);
        rewind(f);
        char r[32] = {0};
        fread(r, 1, sizeof r - 1, f);
        fclose(f);
        printf("%s: offsets %ld %ld %ld %ld, file:", names[m], a, b, c, d);
        for (char *p = r; *p; p++)
            putchar(*p == '\n' ? '|' : *p);
        putchar('\n');
    }
    return 0;
}
