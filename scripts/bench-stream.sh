#!/bin/sh
# ferry-bench stream with its peers installed from Debian's packages
# (socat, iperf3, iproute2 for the veth scenario; cat and dd are
# coreutils). Run as root for the packages and the network namespaces.
#
#   scripts/bench-stream.sh [ferry-bench stream options…]
set -e
cd "$(dirname "$0")/.."
need=""
command -v socat >/dev/null || need="$need socat"
command -v iperf3 >/dev/null || need="$need iperf3"
command -v ip >/dev/null || need="$need iproute2"
if [ -n "$need" ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
fi
cargo build --release -p ferry-cli -p ferry-bench
exec target/release/ferry-bench stream "$@"
