#!/usr/bin/env bash
# bench (g): the HTTP cache, a fresh hit from memory and from disk beside a loopback GET
# needs: nginx
# Sequential GETs through a session answered by a fresh cache hit from memory
# (http.cache{ dir = false }), by a hit from disk (http.cache{ dir = TMP, memory = 1 }: no entry
# fits in memory), and by nginx without a cache, the same URL (/cached/: Cache-Control:
# max-age=3600); N for about 2 s each (more_cache.lua, which stops with a message if the cached
# runs are not hits). Goal: a memory hit at least 20x the loopback GET's requests/s.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init cache
bench_nginx

CACHE_SECONDS=2 # N is what each client does in about this long...
CACHE_PROBE=1000 # ... measured with this many requests
CACHE_REPEAT=3   # each client this many times; the median req/s is reported
[[ $QUICK == 1 ]] && CACHE_SECONDS=0.5 CACHE_PROBE=200 CACHE_REPEAT=1

CACHE_URL="$BASE/cached/small.txt"
say "(g) the cache, $CACHE_URL"
G_ROWS=()
G_ABORT=
declare -A G_N G_RPS G_US G_CPU G_RSS G_HITS G_LABEL
G_LABEL[memory]="lunet: fresh hit from memory (http.cache{ dir = false })"
G_LABEL[disk]="lunet: fresh hit from disk (http.cache{ dir = TMP, memory = 1 })"
G_LABEL[network]="lunet: GET from nginx, no cache (http.session{})"
# cache_once MODE N: one run of more_cache.lua under GNU time; sets RUN_LINE and RUN_TIME
# ("wall user sys rss") or G_ABORT with the reason.
cache_once() {
  local mode=$1 n=$2
  rm -rf "$TMP/cache-disk" "$TMP/cache.time"
  if [[ $HAVE_TIME == 1 ]]; then
    RUN_LINE=$(timeout $LIMIT "$GNU_TIME" -f '%e %U %S %M' -o "$TMP/cache.time" \
      "$LUNET" "$HERE/more_cache.lua" "$CACHE_URL" "$n" "$mode" "$TMP/cache-disk" 2>"$TMP/cache.err" </dev/null | grep '^ok=' | tail -1)
  else
    RUN_LINE=$(timeout $LIMIT "$LUNET" "$HERE/more_cache.lua" "$CACHE_URL" "$n" "$mode" "$TMP/cache-disk" \
      2>"$TMP/cache.err" </dev/null | grep '^ok=' | tail -1)
  fi
  RUN_TIME="- - - -"
  [[ -s $TMP/cache.time ]] && RUN_TIME=$(tail -1 "$TMP/cache.time")
  if [[ $RUN_LINE != ok=* ]]; then
    G_ABORT="$mode run failed: $(grep -v '^Command exited' "$TMP/cache.err" | tail -3 | tr '\n' ' ')"
    return 1
  fi
  local ok hits
  ok=$(field ok "$RUN_LINE") hits=$(field hits "$RUN_LINE")
  if [[ $mode != network && $hits != "$n" ]]; then
    G_ABORT="$mode: only $hits of $n GETs had r.cache == \"hit\""
    return 1
  fi
  if [[ $ok != "$n" ]]; then
    G_ABORT="$mode: only $ok of $n GETs were a good 200"
    return 1
  fi
  return 0
}
# cache_run MODE: a probe sets N for about CACHE_SECONDS, then CACHE_REPEAT runs; the run with
# the median requests/s is kept.
cache_run() {
  local mode=$1 n i runs=() wall
  cache_once "$mode" "$CACHE_PROBE" || return 1
  wall=$(field loop_wall "$RUN_LINE")
  n=$(calc '%d' "int($CACHE_PROBE / $wall * $CACHE_SECONDS / 1000 + 0.5) * 1000")
  ((n < CACHE_PROBE)) && n=$CACHE_PROBE
  ((n > 5000000)) && n=5000000
  for ((i = 0; i < CACHE_REPEAT; i++)); do
    cache_once "$mode" "$n" || return 1
    local rps cpu rss
    wall=$(field loop_wall "$RUN_LINE")
    rps=$(calc '%.0f' "$n / $wall")
    cpu=$(calc '%.2f' "$(field loop_cpu "$RUN_LINE") / $n * 1e6")
    read -r _ _ _ rss <<<"$RUN_TIME"
    runs+=("$rps $cpu $rss $(field hits "$RUN_LINE")")
  done
  local rps cpu rss hits
  read -r rps cpu rss hits < <(printf '%s\n' "${runs[@]}" | median)
  G_N[$mode]=$n G_RPS[$mode]=$rps G_CPU[$mode]=$cpu G_RSS[$mode]=$rss G_HITS[$mode]=$hits
  G_US[$mode]=$(calc '%.2f' "1e6 / $rps")
  G_ROWS+=("$mode")
}
if timeout $LIMIT curl -s -o /dev/null -D "$TMP/cache.head" "$CACHE_URL" && grep -qi '^cache-control: *max-age=3600' "$TMP/cache.head"; then
  for m in memory disk network; do
    cache_run $m || break
  done
else
  G_ABORT="nginx does not answer $CACHE_URL with Cache-Control: max-age=3600"
fi
if [[ -n $G_ABORT ]]; then
  G_ABORT="aborted: $G_ABORT"
  say "$G_ABORT"
fi
G_R_MEM='' G_R_DISK='' G_R_MEMDISK='' G_T1=FAIL
if [[ -z $G_ABORT && -n ${G_RPS[network]:-} ]]; then
  G_R_MEM=$(calc '%.1f' "${G_RPS[memory]} / ${G_RPS[network]}")
  G_R_DISK=$(calc '%.1f' "${G_RPS[disk]} / ${G_RPS[network]}")
  G_R_MEMDISK=$(calc '%.1f' "${G_RPS[memory]} / ${G_RPS[disk]}")
  G_T1=$(passfail "${G_RPS[memory]} >= 20 * ${G_RPS[network]}")
fi

if [[ -n $G_ABORT ]]; then
  echo "(g) the cache: $G_ABORT"
else
  echo "(g) sequential GETs of one 13-byte URL               N      req/s   us/req  CPU us/req  peak RSS MB"
  for k in "${G_ROWS[@]}"; do
    case $k in
    memory) l="lunet: fresh hit from memory" ;;
    disk) l="lunet: fresh hit from disk (memory = 1)" ;;
    network) l="lunet: GET from nginx, no cache" ;;
    esac
    printf '    %-42s %9s %10s %8s %11s %12s\n' "$l" "${G_N[$k]}" "${G_RPS[$k]}" "${G_US[$k]}" "${G_CPU[$k]}" "$(mb "${G_RSS[$k]}")"
  done
fi
goal "memory hit/network GET req/s" "${G_R_MEM:+${G_R_MEM}x}" ">= 20x" "$G_T1"
printf '    %-56s %s\n' "disk hit/network GET = $(or_dash "$G_R_DISK")x" "(no goal)"
printf '    %-56s %s\n' "memory hit/disk hit = $(or_dash "$G_R_MEMDISK")x" "(no goal)"
echo "    req/s from the loop's wall time (lunet.core.now); us/req = 1/rate; CPU us/req = os.clock()"
echo "    over the loop / N; peak RSS of the whole process (GNU time); N for about ${CACHE_SECONDS} s from a"
echo "    ${CACHE_PROBE}-GET probe; each ran $CACHE_REPEAT time(s), the median req/s is shown."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (g) The cache: a fresh hit beside a loopback GET"
  if [[ -n $G_ABORT ]]; then
    echo "The cache benchmark was $G_ABORT."
  else
    echo "| Client | N | Requests/s | µs/request | CPU µs/request | Peak RSS MB |"
    echo "|---|---:|---:|---:|---:|---:|"
    for k in "${G_ROWS[@]}"; do
      echo "| ${G_LABEL[$k]} | ${G_N[$k]} | ${G_RPS[$k]} | ${G_US[$k]} | ${G_CPU[$k]} | $(mb "${G_RSS[$k]}") |"
    done
  fi
  echo
  echo "A memory hit is $(or_dash "$G_R_MEM")× the loopback GET's requests/s; a disk hit $(or_dash "$G_R_DISK")×; a memory hit $(or_dash "$G_R_MEMDISK")× a disk hit."
  echo
  echo "- \`Benchmarks/more_cache.lua\`: one session GETs \`/cached/small.txt\` (13 bytes; an nginx"
  echo "  location that adds \`Cache-Control: max-age=3600\`) N times in a loop. A first GET fills the cache;"
  echo "  the script stops with a message unless the second and every timed GET has \`r.cache == \"hit\"\`,"
  echo "  and, for the disk row, unless the memory tier is empty at the end (\`memory = 1\` byte: no"
  echo "  entry fits, so each hit reads and checks the file). The disk cache is a fresh directory"
  echo "  under /tmp for each run."
  echo "- Requests/s from the loop's wall time (\`lunet.core.now\`); CPU µs/request is \`os.clock()\`"
  echo "  over the loop divided by N; peak RSS is the whole process's (GNU time). N is what each client"
  echo "  does in about ${CACHE_SECONDS} s, from a ${CACHE_PROBE}-GET probe. Each ran $CACHE_REPEAT time(s); the run with the"
  echo "  median requests/s is shown."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
