# Sourced by the floor scripts: prints the table of timings kept in the
# associative array T (key -> space-separated seconds), one row per key.
#
#   median_table TITLE KEY...
median_table() {
    local title=$1 k
    shift
    echo "| program ($title) | median s | all runs |"
    echo "|---|---|---|"
    for k in "$@"; do
        echo "| $k | $(tr ' ' '\n' <<<"${T[$k]}" | grep . | sort -n |
            awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}') | ${T[$k]}|"
    done
}
