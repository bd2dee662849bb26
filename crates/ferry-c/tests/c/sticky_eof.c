/* The end-of-file indicator is sticky (C11 7.21.7.1; glibc since 2.28):
 * once a read has hit the end, getc, fgets, fread, getline and fscanf
 * return EOF without reading, even after the file has grown, until
 * clearerr (or a seek). ferry's fgets, fread and getline read on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *w;

static FILE *at_end(void)
{
    w = fopen("grow", "w");
    fputs("ab\n", w);
    fflush(w);
    FILE *f = fopen("grow", "r");
    char l[16];
    while (fgets(l, sizeof l, f)) {
    }
    /* The file grows after the reader saw its end. */
    fputs("cd\n12 ef\n", w);
    fflush(w);
    return f;
}

static void done(FILE *f, const char *what, int got)
{
    printf("%s at the end: %d feof %d", what, got, feof(f) != 0);
    clearerr(f);
    char l[16] = {0};
    char *s = fgets(l, sizeof l, f);
    printf(", after clearerr: %s", s ? s : "NULL\n");
    fclose(f);
    fclose(w);
}

int main(void)
{
    FILE *f = at_end();
    done(f, "getc", getc(f));

    f = at_end();
    char l[16];
    done(f, "fgets", fgets(l, sizeof l, f) != NULL);

    f = at_end();
    done(f, "fread", (int)fread(l, 1, 3, f));

    f = at_end();
    char *line = NULL;
    size_t cap = 0;
    done(f, "getline", (int)getline(&line, &cap, f));
    free(line);
    line = NULL;
    cap = 0;

    f = at_end();
    char word[8];
    done(f, "fscanf", fscanf(f, "%7s", word));

    f = at_end();
    done(f, "getdelim", (int)getdelim(&line, &cap, ' ', f));
    free(line);

    /* A seek clears it too. */
    f = at_end();
    fseek(f, 0, SEEK_CUR);
    printf("after fseek: %c\n", getc(f));
    fclose(f);
    fclose(w);
    return 0;
}
