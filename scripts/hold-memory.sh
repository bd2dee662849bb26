#!/usr/bin/env bash
# Runs a command with the VM's free page reporting paused, then restores it.
#
# On this kind of VM the balloon driver reports free memory to the host
# (virtio-balloon free page reporting), and the host takes it back; the next
# first touch of such a page faults in the host. A program that fills 1 GiB
# of new page cache then takes 0.3 s or 1.3 s depending on how much of the
# free memory was reported just before or while it ran — a 2–4× swing that
# lands on whichever program runs after the reporter wakes, not on the one
# doing more work. With reporting paused the same write takes 0.28–0.33 s
# every time (docs/BENCHMARKS.md, "Measuring on this VM: free page reporting
# and hold-memory.sh" (2026-11-23, 1a45c9e)). Measure file-writing programs
# under this script, or read their figures with that swing in mind.
#
#   scripts/hold-memory.sh COMMAND [ARG...]
#
# Needs root. Pausing works by raising the reporting order above the largest
# free block the kernel keeps, so no block qualifies; the old order is put
# back when the command ends, however it ends. Where the kernel has no free
# page reporting the command just runs.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
knob=/sys/module/page_reporting/parameters/page_reporting_order
if [ ! -w "$knob" ]; then
    [ -e "$knob" ] && echo "$0: cannot write $knob (not root?); running without pausing" >&2
    exec "$@"
fi
old=$(cat "$knob")
restore() { echo "$old" > "$knob"; }
trap restore EXIT INT TERM
# MAX_PAGE_ORDER is 10 on x86-64; no free block is of order 11.
echo 11 > "$knob"
status=0
"$@" || status=$?
exit "$status"
