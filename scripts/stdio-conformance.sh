#!/usr/bin/env bash
# gnulib's stdio conformance tests (as shipped in coreutils 9.1's
# gnulib-tests/), each built twice — against glibc, and unmodified with
# -include ferry/stdio.h and libferry — and run the way gnulib runs it
# (its .sh driver where it has one, else the program alone). Prints a
# Markdown table of each test's result on both sides; docs/C_CONFORMANCE.md
# records a run and why each difference is.
#
#   scripts/stdio-conformance.sh [TEST...]     (default: every test below)
#
# The source is fetched once (scripts/real-sources.sh coreutils). Builds
# libferry (debug profile) in ${CARGO_TARGET_DIR:-target}, or takes the one in
# $FERRY_LIBDIR. Statuses: PASS,
# FAIL, SKIP (77), BUILD (does not compile or link; the log says why),
# TIMEOUT. Exit 0 when ferry passes every test glibc passes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
src=$(bash scripts/real-sources.sh coreutils)
tests_dir=$src/gnulib-tests

if [ -n "${FERRY_LIBDIR:-}" ]; then
    lib=$FERRY_LIBDIR # libferry.so built already (cargo test passes it)
else
    cargo build -q -p ferry-c
    lib=$(realpath "${CARGO_TARGET_DIR:-target}")/debug
fi
inc=$root/crates/ferry-c/include

if [ $# -gt 0 ]; then
    tests=("$@")
else
    tests=(test-fclose test-fdopen test-fflush test-fflush2 test-fgetc test-fopen
        test-fputc test-fread test-freopen test-fseek test-fseeko test-fseeko3
        test-fseeko4 test-ftell test-ftell3 test-ftello test-ftello3 test-ftello4
        test-fwrite test-getdelim test-getline test-perror test-perror2
        test-vfprintf-posix
        test-fpending test-fpurge test-freading test-freadahead test-freadptr
        test-freadptr2 test-freadseek test-fseterr)
fi

# gnulib's helpers a test links with (lib/), when it tests one of them.
helpers() {
    case $1 in
    test-fpurge) echo fpurge.c freading.c ;;
    test-freading) echo freading.c ;;
    test-freadahead) echo freadahead.c ;;
    test-freadptr | test-freadptr2) echo freadptr.c ;;
    test-freadseek) echo freadseek.c freadahead.c freadptr.c ;;
    test-fseterr) echo fseterr.c ;;
    test-fflush2) echo freading.c ;;
    esac
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The configuration these tests read: what glibc 2.36 has (gnulib's
# configure finds the same), no gnulib replacement of any stdio function.
cat > "$work/config.h" <<'EOF'
#define _GNU_SOURCE 1
#define HAVE_STDIO_EXT_H 1
#define O_BINARY 0
#define O_TEXT 0
#define HAVE___FPURGE 1
#define HAVE___FREADING 1
#define HAVE___FREADAHEAD 0
#define HAVE_DECL_FPURGE 0
#define HAVE_DECL___FPENDING 1
#define HAVE_MSVC_INVALID_PARAMETER_HANDLER 0
#define _GL_UNUSED __attribute__ ((__unused__))
#define _GL_ATTRIBUTE_PURE __attribute__ ((__pure__))
#define _GL_ATTRIBUTE_CONST __attribute__ ((__const__))
#define _GL_ATTRIBUTE_FORMAT(spec) __attribute__ ((__format__ spec))
#define _GL_ATTRIBUTE_MALLOC __attribute__ ((__malloc__))
#define _GL_ATTRIBUTE_DEALLOC(f, i)
#define _GL_ATTRIBUTE_DEALLOC_FREE
#define _GL_ARG_NONNULL(params) __attribute__ ((__nonnull__ params))
#define _GL_INLINE_HEADER_BEGIN
#define _GL_INLINE_HEADER_END
#define _GL_INLINE static inline
#define _GL_EXTERN_INLINE extern inline
#define FALLTHROUGH __attribute__ ((__fallthrough__))
EOF

build() { # side test → 0 if built
    local side=$1 t=$2 dir=$work/$1
    local extra=()
    for h in $(helpers "$t"); do extra+=("$src/lib/$h"); done
    local flags=(-std=gnu11 -O1 -w -Werror=incompatible-pointer-types -Werror=implicit-function-declaration
        -I"$work" -I"$tests_dir" -I"$src/lib")
    if [ "$side" = ferry ]; then
        flags+=(-I"$inc" -include ferry/stdio.h)
        cc "${flags[@]}" -o "$dir/$t" "$tests_dir/$t.c" "${extra[@]}" \
            -L"$lib" -lferry -Wl,-rpath,"$lib" -lm > "$dir/$t.build.log" 2>&1
    else
        cc "${flags[@]}" -o "$dir/$t" "$tests_dir/$t.c" "${extra[@]}" -lm > "$dir/$t.build.log" 2>&1
    fi
}

run_one() { # side test → status
    local side=$1 t=$2 dir=$work/$1
    mkdir -p "$dir"
    if ! build "$side" "$t"; then
        echo BUILD
        return
    fi
    local rc=0
    if [ -f "$tests_dir/$t.sh" ]; then
        (cd "$dir" && timeout -k 5 60 env srcdir="$tests_dir" EXEEXT= CHECKER= LC_ALL=C \
            sh "$tests_dir/$t.sh" > "$dir/$t.log" 2>&1) || rc=$?
    else
        (cd "$dir" && timeout -k 5 60 env LC_ALL=C "./$t" > "$dir/$t.log" 2>&1 < /dev/null) || rc=$?
    fi
    case $rc in
    0) echo PASS ;; 77) echo SKIP ;; 124 | 137) echo TIMEOUT ;; *) echo "FAIL"
    esac
}

printf '| test | glibc | ferry |\n|---|---|---|\n'
gnu=0 both=0
for t in "${tests[@]}"; do
    g=$(run_one glibc "$t")
    f=$(run_one ferry "$t")
    [ "$g" = PASS ] && gnu=$((gnu + 1)) && [ "$f" = PASS ] && both=$((both + 1))
    mark=""
    [ "$g" != "$f" ] && mark=" ←"
    printf '| %s | %s | %s%s |\n' "$t" "$g" "$f" "$mark"
    if [ "$g" = BUILD ] && [ -n "${VERBOSE:-}" ]; then
        sed 's/^/    /' "$work/glibc/$t.build.log" | grep -E 'error|undefined' | head -5 || true
    fi
    if [ "$g" != "$f" ] && [ -n "${VERBOSE:-}" ]; then
        cat "$work/ferry/$t.build.log" "$work/ferry/$t.log" 2>/dev/null | sed 's/^/    /' | head -15 || true
    fi
done
echo
echo "glibc passes $gnu of ${#tests[@]}; ferry passes $both of those $gnu."
[ "$both" -eq "$gnu" ]
