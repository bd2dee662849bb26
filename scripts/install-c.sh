#!/usr/bin/env bash
# Installs the C library: libferry.so and libferry.a into PREFIX/lib, the
# headers into PREFIX/include/ferry, and PREFIX/lib/pkgconfig/ferry.pc.
# Usage: scripts/install-c.sh PREFIX [BUILD_DIR]
#   BUILD_DIR: a directory holding an already built libferry (default:
#   build it with `cargo build --release -p ferry-c` and use target/release).
# Then: cc prog.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs ferry)
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 PREFIX [BUILD_DIR]" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mkdir -p "$1" && cd "$1" && pwd)
if [[ $# -eq 2 ]]; then
    build=$2
else
    cargo build --release -p ferry-c --manifest-path "$root/Cargo.toml"
    build=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/release
fi
for f in libferry.so libferry.a; do
    [[ -f $build/$f ]] || { echo "$0: no $f in $build" >&2; exit 1; }
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
install -d "$prefix/lib/pkgconfig" "$prefix/include/ferry"
install -m 0755 "$build/libferry.so" "$prefix/lib/"
install -m 0644 "$build/libferry.a" "$prefix/lib/"
install -m 0644 "$root"/crates/ferry-c/include/ferry/*.h "$prefix/include/ferry/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@LIBDIR@|\${prefix}/lib|" \
    -e "s|@INCLUDEDIR@|\${prefix}/include|" -e "s|@VERSION@|$version|" \
    -e "s|@RPATH@||" "$root/crates/ferry-c/ferry.pc.in" > "$prefix/lib/pkgconfig/ferry.pc"
echo "installed libferry $version into $prefix"
