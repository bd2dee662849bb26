/* scanf from stdin (a pipe) and fscanf from a file. */
#include <stdio.h>
#include <string.h>
#include <errno.h>

int main(void)
{
    int a = 0, b = 0, x = 0, o = 0, n = 0;
    double d = 0, e = 0;
    char w[32] = "", br[32] = "", rest[64] = "";
    int r = scanf("%d %i %x %i %lf %lf %31s [%31[a-z]] %63[^\n]%n", &a, &b, &x, &o, &d, &e, w, br, rest, &n);
    printf("scanf %d: %d %d %d %d %g %g %s %s [%s] n=%d\n", r, a, b, x, o, d, e, w, br, rest, n);
    int i1 = 0, i2 = 0;
    char c = 0;
    r = scanf("%d", &i1);
    printf("scanf %d: %d\n", r, i1);
    r = scanf("%d", &i2);
    printf("mismatch %d: %d next %c\n", r, i2, getchar());
    r = scanf("%*s %d %c", &i1, &c);
    printf("suppressed %d: %d %c\n", r, i1, c);
    long long big = 0;
    double huge = 0;
    r = scanf("%lld %lf", &big, &huge);
    printf("overflow %d: %lld %g errno %d\n", r, big, huge, errno == ERANGE);
    char tail[8];
    r = scanf("%7s", tail);
    printf("tail %d: %s\n", r, tail);
    r = scanf("%7s", tail);
    printf("at end %d eof %d\n", r, feof(stdin));

    FILE *f = fopen("nums", "w");
    for (int i = 0; i < 50000; i++)
        fprintf(f, "%d %.2f %s\n", i, i / 4.0, i % 2 ? "odd" : "even");
    fputs("  12", f);
    fclose(f);
    f = fopen("nums", "r");
    long sum = 0;
    double dsum = 0;
    int k;
    double v;
    char s[8];
    int lines = 0;
    while (fscanf(f, "%d %lf %7s", &k, &v, s) == 3) {
        sum += k;
        dsum += v;
        lines++;
    }
    printf("fscanf lines %d sum %ld dsum %.2f eof %d\n", lines, sum, dsum, feof(f));
    rewind(f);
    r = fscanf(f, "%d", &k);
    printf("after rewind %d %d tell %ld\n", r, k, ftell(f));
    fseek(f, -4, SEEK_END);
    r = fscanf(f, "%d", &k);
    printf("last %d %d eof %d\n", r, k, feof(f));
    r = fscanf(f, "%d", &k);
    printf("past end %d\n", r);
    fclose(f);
    return 0;
}
