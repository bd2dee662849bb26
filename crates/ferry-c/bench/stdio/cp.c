/* cp SRC DST: fread and fwrite in BUFSIZ pieces. */
#include <stdio.h>
#include "../bench.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        usage("cp", "SRC DST");
    FILE *in = fopen(argv[1], "r");
    if (!in)
        die("cp", argv[1], errno);
    FILE *out = fopen(argv[2], "w");
    if (!out)
        die("cp", argv[2], errno);
    static char buf[BUFSIZ];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            die("cp", argv[2], errno);
    if (ferror(in))
        die("cp", argv[1], errno);
    if (fclose(out) != 0)
        die("cp", argv[2], errno);
    fclose(in);
    return 0;
}
