#!/usr/bin/env bash
# Fetches the source of the third-party C programs that ferry-c's
# real-program tests (crates/ferry-c/tests/c_abi/real/) and
# scripts/stdio-conformance.sh build unmodified, from Debian's archive,
# once, into ${XDG_CACHE_HOME:-~/.cache}/ferry;
# checks each tarball's sha256 against the one recorded here, unpacks it
# and prints the unpacked directory, one a line, in the order asked.
#
#   scripts/real-sources.sh NAME...      NAME: bzip2 lua ed coreutils
#   scripts/real-sources.sh all          every one (CI prefetches so)
#
# No third-party source is kept in ferry's repository. Needs curl, tar,
# sha256sum. A download that fails, or a tarball whose sum differs, is an
# error (exit 1, the reason on stderr): the tests that need the source
# then fail saying so, they do not pass without it.
set -euo pipefail

cache=${XDG_CACHE_HOME:-$HOME/.cache}/ferry
pool=https://deb.debian.org/debian/pool/main

# name → pool path, sha256 of the tarball, directory it unpacks to.
# bzip2 and Lua are the upstream releases as published (the same sums as
# upstream's); ed and coreutils are the GNU releases Debian 12 ships.
source_of() {
    case $1 in
    bzip2) echo "b/bzip2/bzip2_1.0.8.orig.tar.gz ab5a03176ee106d3f0fa90e381da478ddae405918153cca248e682cd0c4a2269 bzip2-1.0.8" ;;
    lua) echo "l/lua5.4/lua5.4_5.4.4.orig.tar.gz 164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61 lua-5.4.4" ;;
    ed) echo "e/ed/ed_1.19.orig.tar.gz 8e5c3e7c84972e73957ff396b8318a21795f86547dd1fe4ec4232a9e6e44ca1d ed-1.19" ;;
    coreutils) echo "c/coreutils/coreutils_9.1.orig.tar.xz 61a1f410d78ba7e7f37a5a4f50e6d1320aca33375484a3255eddf17a38580423 coreutils-9.1" ;;
    *) echo "real-sources.sh: unknown source '$1' (bzip2 lua ed coreutils)" >&2; return 1 ;;
    esac
}

fetch() {
    local spec path sum dir tarball tmp
    spec=$(source_of "$1")
    read -r path sum dir <<<"$spec"
    tarball=$cache/${path##*/}
    # A directory is trusted only once its tarball checked out (the mark
    # is written last, so an interrupted unpack is done again).
    if [ -f "$cache/$dir/.ferry-verified-$sum" ]; then
        echo "$cache/$dir"
        return
    fi
    mkdir -p "$cache"
    if [ ! -f "$tarball" ] || ! echo "$sum  $tarball" | sha256sum -c --status; then
        tmp=$tarball.part.$$
        if ! curl -sSfL --retry 3 --connect-timeout 20 -o "$tmp" "$pool/$path"; then
            rm -f "$tmp"
            echo "real-sources.sh: cannot download $pool/$path (no network?), and $tarball is not in the cache" >&2
            return 1
        fi
        if ! echo "$sum  $tmp" | sha256sum -c --status; then
            echo "real-sources.sh: $pool/$path has sha256 $(sha256sum "$tmp" | cut -d' ' -f1), expected $sum" >&2
            rm -f "$tmp"
            return 1
        fi
        mv "$tmp" "$tarball"
    fi
    tar -C "$cache" -xf "$tarball"
    touch "$cache/$dir/.ferry-verified-$sum"
    echo "$cache/$dir"
}

[ $# -gt 0 ] || { echo "usage: $0 NAME... | all" >&2; exit 2; }
if [ "$1" = all ]; then
    set -- bzip2 lua ed coreutils
fi
for n in "$@"; do
    fetch "$n"
done
