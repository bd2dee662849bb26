/* Reads a line of standard input by fgets, runs a child that reads
 * standard input itself (head -c 100), then counts the lines that are
 * left by fgets: a reader whose descriptor 0 is read beside its stream.
 * Prints "lines N" (N varies with buffer sizes; what counts is that it
 * ends). Usage: stdin_beside */
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    char b[4096];
    long n = 0;
    if (fgets(b, sizeof b, stdin)) n++;
    if (system("head -c 100 > /dev/null") != 0) return 3;
    while (fgets(b, sizeof b, stdin)) n++;
    if (ferror(stdin)) return 4;
    printf("lines %ld\n", n);
    return 0;
}
