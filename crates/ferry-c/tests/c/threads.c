/* Several threads fputs to one stream: lines never interleave inside a
 * line. The program reads the file back and checks every line. */
#include <stdio.h>
#include <string.h>
#include <pthread.h>

static FILE *out;

static void *writer(void *arg)
{
    long id = (long)arg;
    char line[256];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(line, sizeof line, "thread %ld line %d %.*s\n", id, i, (int)(i % 150), 
                         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
        (void)n;
        if (i % 3 == 0)
            fputs(line, out);
        else if (i % 3 == 1)
            fprintf(out, "%s", line);
        else
            fwrite(line, 1, strlen(line), out);
    }
    return NULL;
}

int main(void)
{
    out = fopen("lines", "w");
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, writer, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    fclose(out);
    FILE *in = fopen("lines", "r");
    char line[512];
    long good = 0, bad = 0;
    int next[4] = {0};
    while (fgets(line, sizeof line, in)) {
        long id;
        int i, len = -1;
        if (sscanf(line, "thread %ld line %d %n", &id, &i, &len) == 2 && id >= 0 && id < 4 &&
            i == next[id] && strlen(line) - (size_t)len == (size_t)(i % 150) + 1 && line[strlen(line) - 1] == '\n') {
            next[id]++;
            good++;
        } else {
            bad++;
        }
    }
    fclose(in);
    printf("good %ld bad %ld\n", good, bad);
    return bad != 0;
}
