#!/usr/bin/env bash
# Times ferry's tools beside the GNU tools on the same cached inputs:
# interleaved rounds (every command once per round, order rotated), each
# input warmed right before its command, median of the rounds printed with
# the ratio. The asf benchmark suite supersedes it but for `wc -w` in a UTF-8
# locale (docs/BENCHMARKS.md, "Scripts").
#
#   scripts/gnu-compare.sh [ROUNDS] [SIZE_MIB]      (CASES="wc_l cmp" for some)
set -euo pipefail
rounds=${1:-5}
size=${2:-1024}
ferry=${FERRY:-target/release/ferry}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
[ -x "$ferry" ] || cargo build --release -p ferry-cli >/dev/null
# Inputs: text of ~60-byte lines, random bytes, an identical pair.
python3 - "$dir" "$size" <<'PY'
import random, sys
d, size = sys.argv[1], int(sys.argv[2]) << 20
random.seed(7)
words = [''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(random.randint(1, 10))) for _ in range(5000)]
block = []
n = 0
while n < 8 << 20:
    line = ' '.join(random.choice(words) for _ in range(random.randint(3, 12))) + '\n'
    block.append(line); n += len(line)
block = ''.join(block).encode()[: 8 << 20]
with open(f'{d}/text', 'wb') as f:
    for _ in range(size // len(block)):
        f.write(block)
PY
head -c $((size << 20)) /dev/urandom > "$dir/rand"
cp "$dir/rand" "$dir/rand2"
# Warm the inputs, and let earlier writes reach the disk first: copies that
# write a GiB are otherwise timed against whatever writeback is under way.
warm() { sync; for f in "$@"; do cat "$f" > /dev/null; done; }
declare -A T
gnu_wc_l() { wc -l "$dir/text"; }
ferry_wc_l() { "$ferry" wc -l "$dir/text"; }
gnu_wc_w_C() { LC_ALL=C wc -w "$dir/text"; }
ferry_wc_w_C() { LC_ALL=C "$ferry" wc -w "$dir/text"; }
gnu_wc_w_UTF8() { LC_ALL=C.UTF-8 wc -w "$dir/text"; }
ferry_wc_w_UTF8() { LC_ALL=C.UTF-8 "$ferry" wc -w "$dir/text"; }
gnu_cmp() { cmp "$dir/rand" "$dir/rand2"; }
ferry_cmp() { "$ferry" cmp "$dir/rand" "$dir/rand2"; }
gnu_cat_to_file() { cat "$dir/rand" > "$dir/out"; }
ferry_cat_to_file() { "$ferry" cat "$dir/rand" > "$dir/out"; }
gnu_cat_to_pipe() { cat "$dir/rand" | cat > /dev/null; }
ferry_cat_to_pipe() { "$ferry" cat "$dir/rand" | cat > /dev/null; }
gnu_cut_c1_10() { cut -c1-10 "$dir/text"; }
ferry_cut_c1_10() { "$ferry" cut -c1-10 "$dir/text"; }
gnu_cp() { cp "$dir/rand" "$dir/out"; }
ferry_cp() { "$ferry" cp "$dir/rand" "$dir/out"; }
inputs_cut_c1_10="text"; inputs_cp="rand"
inputs_wc_l="text"; inputs_wc_w_C="text"; inputs_wc_w_UTF8="text"
inputs_cmp="rand rand2"; inputs_cat_to_file="rand"; inputs_cat_to_pipe="rand"
names=(wc_l wc_w_C wc_w_UTF8 cmp cut_c1_10 cat_to_file cat_to_pipe cp)
# CASES="cmp cut_c1_10" runs only those.
if [ -n "${CASES:-}" ]; then read -r -a names <<< "$CASES"; fi
for ((r = 0; r < rounds; r++)); do
  for name in "${names[@]}"; do
    v="inputs_$name"; files=(); for i in ${!v}; do files+=("$dir/$i"); done
    order=(gnu ferry); (( r % 2 )) && order=(ferry gnu)
    for who in "${order[@]}"; do
      warm "${files[@]}"
      s=$(date +%s.%N); "${who}_$name" > /dev/null 2>&1 || true; e=$(date +%s.%N)
      T[$name.$who]+="$(echo "$e - $s" | bc) "
      rm -f "$dir/out"
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '| case (%s MiB, %s rounds) | GNU median s | ferry median s | ferry speed-up |\n|---|---|---|---|\n' "$size" "$rounds"
for name in "${names[@]}"; do
  g=$(echo "${T[$name.gnu]}" | median); f=$(echo "${T[$name.ferry]}" | median)
  printf '| %s | %.3f | %.3f | %.2f× |\n' "$name" "$g" "$f" "$(echo "$g / $f" | bc -l)"
done
