/* cat FILE: fread and fwrite in BUFSIZ pieces. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        usage("cat", "FILE");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("cat", argv[1], errno);
    static char buf[BUFSIZ];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            die("cat", "write error", errno);
    if (ferror(in))
        die("cat", argv[1], errno);
    if (fflush(stdout) != 0)
        die("cat", "write error", errno);
    fclose(in);
    return 0;
}
