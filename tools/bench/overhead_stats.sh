# Shared by the overhead runners (sourced, not run): the statistics of
# interleaved rounds and the table that prints them.
#
# Samples are space-separated numbers, one per round, in round order, kept
# in two associative arrays named `times` and `cpu_times`, keyed by variant.

median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
minimum() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | head -1; }
# Each round's value over the same round's baseline: the variants of one
# round run seconds apart, so a change in the machine's load cancels out.
round_ratios() {
  paste -d' ' <(tr ' ' '\n' <<<"$1" | grep -v '^$') <(tr ' ' '\n' <<<"$2" | grep -v '^$') | awk '{ printf "%s ", $1 / $2 }'
}
# median_ratio ARRAY VARIANT BASELINE: the median of the per-round ratios.
median_ratio() {
  local -n samples=$1
  median "$(round_ratios "${samples[$2]}" "${samples[$3]}")"
}
# print_overhead_table CPU_HEADING CPU_SUBHEADING VARIANT...: median, minimum
# and median per-round ratio to the first variant, elapsed and CPU.
print_overhead_table() {
  local cpu_heading=$1 cpu_subheading=$2
  shift 2
  local baseline=$1 variant kind line
  printf '%-9s %9s %9s %9s   %9s %9s %9s\n' variant elapsed minimum "per-round" "$cpu_heading" minimum "per-round"
  printf '%-9s %9s %9s %9s   %9s %9s %9s\n' "" "(median)" "" "ratio" "$cpu_subheading" "" "ratio"
  for variant in "$@"; do
    line=$(printf '%-9s' "$variant")
    for kind in times cpu_times; do
      local -n samples=$kind
      line+=$(printf ' %9.3f %9.3f %9.3f  ' "$(median "${samples[$variant]}")" "$(minimum "${samples[$variant]}")" \
        "$(median_ratio "$kind" "$variant" "$baseline")")
    done
    echo "$line"
  done
}
