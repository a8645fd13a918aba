# Summaries of repeated measurements, shared by the benchmark scripts;
# sourced, not run.

# median VALUES...: their median, to three decimals.
median() {
    printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
        END { m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.3f\n", m }'
}
