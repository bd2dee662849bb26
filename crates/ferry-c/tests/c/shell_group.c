/* One member of a shell group `{ prog; cat; } < in 1<> out`: reads one
 * line of standard input (a regular file: the stream reads ahead) and
 * writes it through a FILE of its own over the shell's output (fdopen of
 * a dup: a buffered read-write stream), then exits without closing
 * either. At exit each descriptor's offset must be where the program's
 * stream stopped (POSIX 2.5.1): cat goes on with the next input line and
 * appends after what the program wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    char line[64];
    FILE *out = fdopen(dup(1), "r+");
    if (!out)
        return 2;
    if (fgets(line, sizeof line, stdin))
        fprintf(out, "prog: %s", line);
    exit(0);
}
