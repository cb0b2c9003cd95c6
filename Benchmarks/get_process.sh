#!/usr/bin/env bash
# bench (b): one GET as a whole process: `lunet -e 'http.get(URL)'` and `lunet GET URL` beside curl and HTTPie
# needs: nginx
# Wall time and CPU (hyperfine -N: stdin and stdout on /dev/null, so the one-shot `lunet GET URL`
# prints the body only, as when redirected), in rounds that alternate the commands (curl, lunet -e,
# lunet GET, HTTPie, curl, ...); the median of every run is the figure. Peak RSS from GNU time, the
# median of alternating runs. Goals (issue 17): each lunet command at most 1.2x curl's median, HTTPie
# at least 20x the one-shot lunet's, each lunet command's peak RSS at most 1.3x curl's.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init get_process
bench_nginx

ROUNDS=5 RUNS=40 WARMUP=3     # curl and both lunet commands, per round
HTTPIE_RUNS=3 HTTPIE_WARMUP=1 # HTTPie (~0.25 s a run), per round
RSS_RUNS=7
if [[ $QUICK == 1 ]]; then
  ROUNDS=2 RUNS=10 WARMUP=1 HTTPIE_RUNS=2 HTTPIE_WARMUP=1 RSS_RUNS=3
fi

# Both lunet commands must really GET the file, or their timings mean nothing (and their goals FAIL).
SPOILED_E= SPOILED_GET=
"$LUNET" -e "local r = http.get('$URL') assert(r.status == 200 and #r.body == 13)" >/dev/null 2>"$TMP/lunet.err" ||
  { say "lunet -e cannot GET $URL: $(cat "$TMP/lunet.err")"; SPOILED_E=1; }
[[ $("$LUNET" GET "$URL" </dev/null 2>"$TMP/lunet.err") == "hello, world" ]] ||
  { say "lunet GET $URL does not print the body when redirected: $(cat "$TMP/lunet.err")"; SPOILED_GET=1; }

say "(b) one GET per process, $ROUNDS rounds"
round_cmd curl $RUNS $WARMUP curl -s -o /dev/null "$URL"
round_cmd lunet_e $RUNS $WARMUP "$LUNET" -e "http.get('$URL')"
round_cmd lunet_get $RUNS $WARMUP "$LUNET" GET "$URL"
# --ignore-stdin: HTTPie reads a non-terminal stdin as the request body (hyperfine's is /dev/null).
round_cmd httpie $HTTPIE_RUNS $HTTPIE_WARMUP http --ignore-stdin GET "$URL"
KEYS=(curl lunet_e lunet_get httpie)
time_rounds $ROUNDS "${KEYS[@]}"
rss_rounds $RSS_RUNS "${KEYS[@]}"

label() {
  case $1 in
  curl) echo "curl -s -o /dev/null URL" ;;
  lunet_e) echo "lunet -e 'http.get(URL)'" ;;
  lunet_get) echo "lunet GET URL" ;;
  httpie) echo "http --ignore-stdin GET URL" ;;
  esac
}
note() { case $1 in lunet_get) echo " (body to /dev/null)" ;; httpie) echo " (HTTPie)" ;; esac; }
echo "(b) one GET of the file, whole process         median ms  mean ms    ± sd   CPU ms  peak RSS MB"
for k in "${KEYS[@]}"; do
  printf '    %-42s %9s %8s %7s %8s %12s\n' "$(label $k)$(note $k)" "$(or_dash "${T_MEDIAN[$k]:-}")" \
    "$(or_dash "${T_AVG[$k]:-}")" "$(or_dash "${T_DEV[$k]:-}")" "$(or_dash "${T_CPUS[$k]:-}")" "$(mb "${RSS[$k]:-}")"
done
ratio_goal "lunet -e 'http.get(URL)'/curl (median wall)" "${T_MEDIAN[lunet_e]:-}" "${T_MEDIAN[curl]:-}" '<=' 1.2 "$SPOILED_E"
ratio_goal "lunet GET URL/curl (median wall)" "${T_MEDIAN[lunet_get]:-}" "${T_MEDIAN[curl]:-}" '<=' 1.2 "$SPOILED_GET"
ratio_goal "HTTPie/lunet GET URL (median wall)" "${T_MEDIAN[httpie]:-}" "${T_MEDIAN[lunet_get]:-}" '>=' 20 "$SPOILED_GET"
ratio_goal "lunet -e 'http.get(URL)'/curl peak RSS" "${RSS[lunet_e]:-}" "${RSS[curl]:-}" '<=' 1.3 "$SPOILED_E"
ratio_goal "lunet GET URL/curl peak RSS" "${RSS[lunet_get]:-}" "${RSS[curl]:-}" '<=' 1.3 "$SPOILED_GET"
echo "    ${TIMER:-}; $ROUNDS alternating rounds of $RUNS runs (HTTPie $HTTPIE_RUNS) after $WARMUP warm-up"
echo "    runs each ($HTTPIE_WARMUP); peak RSS: ${RSS_HOW:-n/a}, the median of $RSS_RUNS alternating runs"

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (b) One GET as a whole process"
  echo "| Command | Median ms | Mean ms | ± sd | CPU ms | Peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|"
  for k in "${KEYS[@]}"; do
    echo "| \`$(label $k)\`$(note $k) | $(or_dash "${T_MEDIAN[$k]:-}") | $(or_dash "${T_AVG[$k]:-}") | $(or_dash "${T_DEV[$k]:-}") | $(or_dash "${T_CPUS[$k]:-}") | $(mb "${RSS[$k]:-}") |"
  done
  echo
  echo "- ${TIMER:-}. The commands take turns in $ROUNDS rounds (curl, \`lunet -e\`, \`lunet GET\`, HTTPie),"
  echo "  $RUNS runs each a round after $WARMUP warm-up runs (HTTPie: $HTTPIE_RUNS after $HTTPIE_WARMUP), so that drift in the"
  echo "  machine's other work falls on all of them; the median of all runs is the figure the goals use,"
  echo "  mean and standard deviation are over the same runs, CPU is the mean user+sys. hyperfine runs"
  echo "  each command with stdin and stdout on \`/dev/null\`: the one-shot \`lunet GET URL\` prints the"
  echo "  body only, as when redirected, and HTTPie is told \`--ignore-stdin\` (it would read a"
  echo "  non-terminal stdin as the body). Peak RSS: ${RSS_HOW:-n/a}, the median of $RSS_RUNS runs, alternating."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
