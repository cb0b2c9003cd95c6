#!/usr/bin/env bash
# bench (a): start-up, `lunet -e 'print(1)'` beside `lua5.4 -e 'print(1)'`
# Wall time and CPU (hyperfine -N, in rounds that alternate the two: lunet, lua5.4, lunet, ...;
# the median of every run is the figure) and peak RSS (GNU time, alternating too). Goal (issue
# 17): lunet's median at most 2x lua5.4's.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init startup

ROUNDS=10 RUNS=10 WARMUP=2 RSS_RUNS=7
[[ $QUICK == 1 ]] && ROUNDS=2 RUNS=5 WARMUP=1 RSS_RUNS=3

say "(a) start-up, $ROUNDS rounds of $RUNS runs each"
round_cmd lunet $RUNS $WARMUP "$LUNET" -e 'print(1)'
round_cmd lua $RUNS $WARMUP lua5.4 -e 'print(1)'
time_rounds $ROUNDS lunet lua
rss_rounds $RSS_RUNS lunet lua

label() { case $1 in lunet) echo "lunet -e 'print(1)'" ;; lua) echo "lua5.4 -e 'print(1)'" ;; esac; }
echo "(a) start-up                                  median ms  mean ms    ± sd   CPU ms  peak RSS MB"
for k in lua lunet; do
  printf '    %-42s %9s %8s %7s %8s %12s\n' "$(label $k)" "$(or_dash "${T_MEDIAN[$k]:-}")" \
    "$(or_dash "${T_AVG[$k]:-}")" "$(or_dash "${T_DEV[$k]:-}")" "$(or_dash "${T_CPUS[$k]:-}")" "$(mb "${RSS[$k]:-}")"
done
ratio_goal "lunet/lua5.4 start-up (median wall)" "${T_MEDIAN[lunet]:-}" "${T_MEDIAN[lua]:-}" '<=' 2
echo "    ${TIMER:-}; $ROUNDS alternating rounds of $RUNS runs (after $WARMUP warm-up runs each);"
echo "    peak RSS: ${RSS_HOW:-n/a}, the median of $RSS_RUNS alternating runs"

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (a) Start-up: \`-e 'print(1)'\`"
  echo "| Command | Median ms | Mean ms | ± sd | CPU ms | Peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|"
  for k in lua lunet; do
    echo "| \`$(label $k)\` | $(or_dash "${T_MEDIAN[$k]:-}") | $(or_dash "${T_AVG[$k]:-}") | $(or_dash "${T_DEV[$k]:-}") | $(or_dash "${T_CPUS[$k]:-}") | $(mb "${RSS[$k]:-}") |"
  done
  echo
  echo "- ${TIMER:-}; the two commands take turns in $ROUNDS rounds of $RUNS runs each (after $WARMUP"
  echo "  warm-up runs each round), so that drift in the machine's other work falls on both; the median"
  echo "  of all runs is the figure the goal uses, mean and standard deviation are over the same runs,"
  echo "  CPU is the mean user+sys. Peak RSS: ${RSS_HOW:-n/a}, the median of $RSS_RUNS runs, alternating."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
