#!/usr/bin/env bash
# Runs GNU coreutils' own tests for the tools ferry stands in for (cut, wc,
# cat, cp), once against the installed GNU tools and once against ferry,
# and prints each test's result side by side with the pass rate, as uutils
# measures itself.
#
#   scripts/gnu-suite.sh [FERRY_BINARY] [TEST...]
#
# FERRY_BINARY defaults to target/release/ferry (built if missing). TESTs
# are paths under the coreutils source's tests/ directory (default: every
# test of cut, wc, cat and cp). The coreutils source of the installed
# version is downloaded once from Debian's archive into
# ${XDG_CACHE_HOME:-~/.cache}/ferry. Needs perl, xz, curl.
#
# A test's status is automake's: PASS (0), FAIL (1), SKIP (77: a feature
# or privilege the test needs is missing), ERROR (99); TIMEOUT after
# $GNU_SUITE_TIMEOUT seconds (default 120: a test whose program fails early
# can wait for it forever on a FIFO). The goal is that
# ferry passes every test the GNU tools pass here.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

ferry=${1:-target/release/ferry}
[ $# -gt 0 ] && shift
if [ ! -x "$ferry" ]; then
    cargo build --release -p ferry-cli
fi
ferry=$(realpath "$ferry")

version=$(cut --version | head -1 | awk '{print $NF}')
cache=${XDG_CACHE_HOME:-$HOME/.cache}/ferry
src=$cache/coreutils-$version
if [ ! -d "$src/tests" ]; then
    mkdir -p "$cache"
    tarball=$cache/coreutils_$version.orig.tar.xz
    [ -f "$tarball" ] ||
        curl -sSfL -o "$tarball" "https://deb.debian.org/debian/pool/main/c/coreutils/coreutils_$version.orig.tar.xz"
    tar -C "$cache" -xf "$tarball"
fi

if [ $# -gt 0 ]; then
    tests=("$@")
else
    tests=(misc/cut.pl misc/cut-huge-range.sh misc/wc.pl misc/wc-files0-from.pl
        misc/wc-files0.sh misc/wc-nbsp.sh misc/wc-parallel.sh misc/wc-proc.sh
        misc/cat-E.sh misc/cat-buf.sh misc/cat-proc.sh misc/cat-self.sh)
    for t in "$src"/tests/cp/*.sh; do tests+=("cp/$(basename "$t")"); done
fi

limit=${GNU_SUITE_TIMEOUT:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A stand-in for coreutils' getlimits helper (its test-only program): the
# limits the tests above read.
getlimits() {
    python3 - <<'EOF'
m = {"INT": 2**31 - 1, "UINT": 2**32 - 1, "LONG": 2**63 - 1, "ULONG": 2**64 - 1,
     "SIZE": 2**64 - 1, "SSIZE": 2**63 - 1, "UINTMAX": 2**64 - 1, "INTMAX": 2**63 - 1,
     "OFF_T": 2**63 - 1, "PID_T": 2**31 - 1, "UID_T": 2**32 - 1, "GID_T": 2**32 - 1}
for k, v in m.items():
    print(f"{k}_MAX={v}")
    print(f"{k}_OFLOW={v + 1}")
for k in ("INT", "LONG", "SSIZE", "INTMAX", "OFF_T"):
    print(f"{k}_MIN=-{m[k] + 1}")
    print(f"{k}_UFLOW=-{m[k] + 2}")
EOF
}

# One build tree per side: src/ holds every coreutils program (GNU's), and
# for ferry's side cut, wc, cat and cp are links to the ferry binary (which
# runs as the tool it is called by).
programs=$(dpkg -L coreutils | sed -n 's|^/usr/bin/||p;s|^/bin/||p' | sort -u | grep -v '\[' || true)
for side in gnu ferry; do
    mkdir -p "$work/$side/src"
    for p in $programs; do
        ln -sf "$(command -v "$p")" "$work/$side/src/$p"
    done
    getlimits > "$work/$side/limits"
    printf '#!/bin/sh\ncat %s\n' "$work/$side/limits" > "$work/$side/src/getlimits"
    chmod +x "$work/$side/src/getlimits"
done
for t in cut wc cat cp; do
    ln -sf "$ferry" "$work/ferry/src/$t"
done
built=$(echo $programs getlimits)

run_one() { # side test → status
    local side=$1 t=$2 dir=$work/$1
    local name=${t//\//-}
    local env=(srcdir="$src" abs_top_srcdir="$src" abs_top_builddir="$dir"
        abs_srcdir="$src/tests" built_programs="$built" VERSION="$version"
        PATH="$dir/src:/usr/bin:/bin" LC_ALL=C LANG=C)
    local rc=0
    case $t in
    *.pl)
        mkdir -p "$dir/pl-$name"
        (cd "$dir/pl-$name" && timeout -k 5 "$limit" env "${env[@]}" perl -w -I"$src/tests" -MCuSkip \
            -MCoreutils -MCuTmpdir="$name" -- "$src/tests/$t" \
            > "$dir/$name.log" 2>&1 9>&2) || rc=$?
        ;;
    *)
        (cd "$dir" && timeout -k 5 "$limit" env "${env[@]}" bash "$src/tests/$t" \
            > "$dir/$name.log" 2>&1 9>&2) || rc=$?
        ;;
    esac
    case $rc in
    0) echo PASS ;; 77) echo SKIP ;; 99) echo ERROR ;; 124 | 137) echo TIMEOUT ;; *) echo FAIL ;;
    esac
}

printf '| test | GNU %s | ferry |\n|---|---|---|\n' "$version"
gnu_pass=0 both=0 total=0
for t in "${tests[@]}"; do
    g=$(run_one gnu "$t")
    f=$(run_one ferry "$t")
    total=$((total + 1))
    if [ "$g" = PASS ]; then
        gnu_pass=$((gnu_pass + 1))
        [ "$f" = PASS ] && both=$((both + 1))
    fi
    mark=""
    [ "$g" = PASS ] && [ "$f" != PASS ] && mark=" ←"
    printf '| %s | %s | %s%s |\n' "$t" "$g" "$f" "$mark"
    if [ "$g" = PASS ] && [ "$f" != PASS ] && [ -n "${VERBOSE:-}" ]; then
        sed 's/^/    /' "$work/ferry/${t//\//-}.log" | tail -"${VERBOSE_LINES:-20}"
    fi
done
echo
echo "GNU passes $gnu_pass of $total; ferry passes $both of those $gnu_pass."
[ "$both" -eq "$gnu_pass" ]
