#!/usr/bin/env bash
# C stdio loops on glibc and on ferry/stdio.h, side by side: the same
# source compiled twice, run interleaved, medians of RUNS.
# Usage: scripts/c-stdio-compare.sh FILE [RUNS]   (a text file, warm)
# (A quick check of two loops; `ferry-bench asf-c` is the full experiment.)
set -euo pipefail
cd "$(dirname "$0")/.."
file=$1
runs=${2:-5}
cargo build --release -q -p ferry-c
lib=$PWD/target/release
inc=$PWD/crates/ferry-c/include
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/getc.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    long n = 0, l = 0; int c;
    while ((c = getc(f)) != EOF) { n++; if (c == '\n') l++; }
    printf("%ld %ld\n", n, l);
    return 0;
}
C
cat > "$work/fread1k.c" <<'C'
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    char buf[1024]; size_t k; long n = 0; unsigned s = 0;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) { n += k; s += (unsigned char)buf[0]; }
    printf("%ld %u\n", n, s);
    return 0;
}
C
for p in getc fread1k; do
    cc -O2 -o "$work/${p}_glibc" "$work/$p.c"
    cc -O2 -I"$inc" -include ferry/stdio.h -o "$work/${p}_ferry" "$work/$p.c" \
        -L"$lib" -lferry -Wl,-rpath,"$lib"
    cmp <("$work/${p}_glibc" "$file") <("$work/${p}_ferry" "$file")
done
for ((i = 0; i < runs; i++)); do
    cat "$file" > /dev/null
    for p in getc_glibc getc_ferry fread1k_glibc fread1k_ferry; do
        s=$(date +%s%N); "$work/$p" "$file" > /dev/null; e=$(date +%s%N)
        echo "$p $(( (e - s) / 1000000 ))"
    done
done | awk '{t[$1]=t[$1]" "$2} END {for (k in t) print k, t[k]}' | sort | while read -r name rest; do
    med=$(echo $rest | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    echo "$name median_ms $med runs:$rest"
done
