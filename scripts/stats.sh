# Summaries of repeated measurements, shared by the benchmark scripts;
# sourced, not run.

# median VALUES...: their median, to three decimals.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
        END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f\n", m }'
}

# spread DIVISOR DECIMALS VALUES...: "lowest-highest" of the values, each
# divided by DIVISOR (1 to keep them as they are, 1e6 for pps in Mpps).
spread() {
    local div=$1 dec=$2
    shift 2
    printf '%s\n' "$@" | sort -g | awk -v d="$div" -v f="%.${dec}f-%.${dec}f" \
        'NR == 1 { lo = $1 } { hi = $1 } END { printf f, lo / d, hi / d }'
}
