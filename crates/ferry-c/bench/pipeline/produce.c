/* A producer for pipelines: LINES lines of text through printf and
 * fputs, then blocks of bytes through fwrite and putchar, to standard
 * output. With LINES 0 it writes lines until it is killed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long state = 88172645463325252ULL;
static unsigned next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (unsigned)state;
}

int main(int argc, char **argv) {
    long lines = argc > 1 ? atol(argv[1]) : 1000;
    if (argc > 2) state ^= strtoull(argv[2], 0, 10);
    char word[64];
    for (long i = 0; lines == 0 || i < lines; i++) {
        int n = 1 + next() % 40;
        for (int k = 0; k < n; k++) word[k] = 'a' + next() % 26;
        word[n] = 0;
        if (i % 3 == 0)
            printf("%ld %s %u\n", i, word, next());
        else {
            fputs(word, stdout);
            fputs("\n", stdout);
        }
    }
    static char block[100000];
    for (int b = 0; b < 20; b++) {
        size_t len = 1 + next() % sizeof block;
        for (size_t k = 0; k < len; k++) block[k] = (char)(1 + next() % 255);
        if (fwrite(block, 1, len, stdout) != len) return 3;
        putchar('\n');
    }
    return fclose(stdout) == 0 ? 0 : 4;
}
