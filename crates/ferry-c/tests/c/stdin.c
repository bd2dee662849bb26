/* Standard input from a pipe: getc, fgets, fread, ungetc, EOF. */
#include <stdio.h>
#include <string.h>

int main(void)
{
    long n = 0, lines = 0;
    unsigned long h = 5381;
    int c;
    for (int i = 0; i < 1000 && (c = getchar()) != EOF; i++) {
        h = h * 33 + (unsigned)c;
        n++;
    }
    if (n)
        ungetc('#', stdin);
    char buf[100];
    while (fgets(buf, sizeof buf, stdin)) {
        lines++;
        for (char *p = buf; *p; p++)
            h = h * 33 + (unsigned char)*p;
        n += (long)strlen(buf);
        if (lines == 500) {
            char big[5000];
            size_t k = fread(big, 1, sizeof big, stdin);
            n += (long)k;
            for (size_t i = 0; i < k; i++)
                h = h * 33 + (unsigned char)big[i];
        }
    }
    printf("read %ld bytes %ld fgets hash %lu eof %d err %d\n", n, lines, h, feof(stdin), ferror(stdin));
    printf("getc after eof %d\n", getchar());
    clearerr(stdin);
    printf("getc after clearerr %d\n", getchar());
    printf("ftell on a pipe %ld\n", ftell(stdin));
    return 0;
}
