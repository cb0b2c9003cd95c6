#!/usr/bin/env bash
# bench (c): N sequential GETs: a lunet session beside LuaSocket, libcurl from C and wrk -c1
# needs: nginx
# Clients: a lunet session (sequential.lua), LuaSocket's socket.http.request (a new connection per
# GET; luasocket_sequential.lua), a raw LuaSocket keep-alive loop (luasocket_keepalive.lua),
# libcurl alone from C (curl_floor.c, the floor under lunet) and wrk with one connection (the C
# ceiling). Each runs SEQ_REPEAT times under GNU time; the run with the median loop CPU is shown.
# Goals: lunet's CPU per request at most each LuaSocket client's.
#   BENCH_REQUESTS=N   requests per client (default 10000; 1000 with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init sequential
bench_nginx

REQUESTS=${BENCH_REQUESTS:-10000}
SEQ_REPEAT=3 WRK_SECONDS=3
[[ $QUICK == 1 ]] && REQUESTS=${BENCH_REQUESTS:-1000} SEQ_REPEAT=1 WRK_SECONDS=1

say "(c) $REQUESTS sequential GETs per client"
C_ROWS=()
declare -A C_RPS C_CPU C_PCPU C_RSS C_OK C_LABEL
# seq_run KEY LABEL CMD...: the command prints "ok=N loop_wall=S loop_cpu=S"; runs SEQ_REPEAT
# times under GNU time, keeps the run with the median loop CPU.
seq_run() {
  local key=$1 label=$2 i line runs=()
  shift 2
  for ((i = 0; i < SEQ_REPEAT; i++)); do
    if [[ $HAVE_TIME == 1 ]]; then
      line=$(timeout $LIMIT "$GNU_TIME" -f '%e %U %S %M' -o "$TMP/seq.time" "$@" 2>"$TMP/seq.err" </dev/null | tail -1)
      [[ $line == ok=* ]] || { say "$key failed: $line $(tail -3 "$TMP/seq.err")"; return; }
      runs+=("$line $(tail -1 "$TMP/seq.time")")
    else
      local t0 t1
      t0=$(date +%s%N)
      line=$(timeout $LIMIT "$@" 2>"$TMP/seq.err" </dev/null | tail -1)
      t1=$(date +%s%N)
      [[ $line == ok=* ]] || { say "$key failed: $line $(tail -3 "$TMP/seq.err")"; return; }
      runs+=("$line $(calc '%.3f' "($t1 - $t0) / 1e9") - - -")
    fi
  done
  # fields: ok=N loop_wall=S loop_cpu=S wall user sys rss
  local pick
  pick=$(printf '%s\n' "${runs[@]}" | sed 's/[a-z_]*=//g' | sort -g -k3 | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }')
  local ok lwall lcpu wall user sys rss
  read -r ok lwall lcpu wall user sys rss <<<"$pick"
  [[ $lwall == nil ]] && lwall=$wall # no wall clock inside: the whole process's
  C_OK[$key]=$ok
  C_RPS[$key]=$(calc '%.0f' "$REQUESTS / $lwall")
  C_CPU[$key]=$(calc '%.1f' "$lcpu / $REQUESTS * 1e6")
  if [[ $user != - ]]; then
    C_PCPU[$key]=$(calc '%.1f' "($user + $sys) / ($REQUESTS + 1) * 1e6")
    C_RSS[$key]=$rss
  else
    C_PCPU[$key]=- C_RSS[$key]=-
  fi
  C_LABEL[$key]=$label
  C_ROWS+=("$key")
}
seq_run lunet "lunet: session, keep-alive (Benchmarks/sequential.lua)" \
  "$LUNET" "$HERE/sequential.lua" "$URL" "$REQUESTS"
if lua5.4 -e 'require "socket"' 2>/dev/null; then
  seq_run ls_http "lua5.4 + LuaSocket socket.http.request, a new connection per GET" \
    lua5.4 "$HERE/luasocket_sequential.lua" "$URL" "$REQUESTS"
  seq_run ls_keep "lua5.4 + LuaSocket raw keep-alive loop, one connection" \
    lua5.4 "$HERE/luasocket_keepalive.lua" "$URL" "$REQUESTS"
else
  say "LuaSocket missing; skipping its rows"
fi
# libcurl alone, from C, driven like an event loop drives it: the floor under lunet.
CC=$(command -v cc || command -v gcc || command -v clang || true)
if [[ -n $CC ]] && timeout $LIMIT "$CC" -O2 -o "$TMP/curl_floor" "$HERE/curl_floor.c" -lcurl 2>"$TMP/cc.err"; then
  seq_run floor "C + libcurl multi, one handle reset per request (Benchmarks/curl_floor.c): the floor" \
    "$TMP/curl_floor" "$URL" "$REQUESTS"
else
  say "cannot build Benchmarks/curl_floor.c (a C compiler and libcurl's headers are needed); no libcurl floor row"
fi
# wrk with one thread and one connection: how fast one sequential C client goes (the ceiling).
if have wrk; then
  if [[ $HAVE_TIME == 1 ]]; then
    timeout $LIMIT "$GNU_TIME" -f '%e %U %S %M' -o "$TMP/wrk.time" wrk -t1 -c1 -d${WRK_SECONDS}s "$URL" >"$TMP/wrk.out" 2>&1
  else
    timeout $LIMIT wrk -t1 -c1 -d${WRK_SECONDS}s "$URL" >"$TMP/wrk.out" 2>&1
  fi
  n=$(awk '/requests in/ { print $1 }' "$TMP/wrk.out")
  secs=$(awk '/requests in/ { sub(/s,$/, "", $4); print $4 }' "$TMP/wrk.out")
  if [[ -n $n && -n $secs ]]; then
    C_OK[wrk]=$n
    C_RPS[wrk]=$(calc '%.0f' "$n / $secs")
    C_CPU[wrk]=- C_PCPU[wrk]=- C_RSS[wrk]=-
    if [[ -s $TMP/wrk.time ]]; then
      read -r _ user sys rss <"$TMP/wrk.time"
      C_PCPU[wrk]=$(calc '%.1f' "($user + $sys) / $n * 1e6")
      C_RSS[wrk]=$rss
    fi
    C_LABEL[wrk]="wrk -t1 -c1 -d${WRK_SECONDS}s (C, one connection: the ceiling)"
    C_ROWS+=(wrk)
  else
    say "wrk failed: $(tail -3 "$TMP/wrk.out")"
  fi
fi
C_R_FLOOR=
[[ -n ${C_CPU[floor]:-} && -n ${C_CPU[ls_keep]:-} ]] && C_R_FLOOR=$(calc '%.2f' "${C_CPU[floor]} / ${C_CPU[ls_keep]}")
C_R_LUNET_FLOOR=
[[ -n ${C_CPU[lunet]:-} && -n ${C_CPU[floor]:-} ]] && C_R_LUNET_FLOOR=$(calc '%.2f' "${C_CPU[lunet]} / ${C_CPU[floor]}")

echo "(c) $REQUESTS sequential GETs                           req/s  CPU us/req  (process)  peak RSS MB"
for k in "${C_ROWS[@]}"; do
  case $k in
  lunet) l="lunet session (keep-alive)" ;;
  ls_http) l="LuaSocket socket.http.request (new conn.)" ;;
  ls_keep) l="LuaSocket raw keep-alive loop" ;;
  floor) l="C + libcurl multi (libcurl's floor)" ;;
  wrk) l="wrk -t1 -c1 (C ceiling, ${C_OK[wrk]} reqs)" ;;
  esac
  printf '    %-44s %8s %11s %10s %12s\n' "$l" "${C_RPS[$k]}" "${C_CPU[$k]}" "(${C_PCPU[$k]})" "$(mb "${C_RSS[$k]}")"
done
ratio_goal "lunet/LuaSocket keep-alive loop CPU per request" "${C_CPU[lunet]:-}" "${C_CPU[ls_keep]:-}" '<=' 1
ratio_goal "lunet/LuaSocket socket.http CPU per request" "${C_CPU[lunet]:-}" "${C_CPU[ls_http]:-}" '<=' 1
[[ -n $C_R_LUNET_FLOOR ]] && printf '    %-56s %s\n' "lunet/libcurl floor CPU = ${C_R_LUNET_FLOOR}x" "(no goal: lunet's own cost above libcurl)"
[[ -n $C_R_FLOOR ]] && printf '    %-56s %s\n' "libcurl floor/LuaSocket keep-alive = ${C_R_FLOOR}x" "(above 1: the strict goal is below libcurl's own cost)"
echo "    CPU us/req = os.clock() over the loop / requests (start-up excluded); (process) = the whole"
echo "    process's user+sys from GNU time / requests; req/s from the loop's wall time; each client"
echo "    ran $SEQ_REPEAT time(s), the run with the median loop CPU is shown."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (c) $REQUESTS sequential GETs"
  echo "| Client | Requests/s | CPU µs/request (loop) | CPU µs/request (process) | Peak RSS MB |"
  echo "|---|---:|---:|---:|---:|"
  for k in "${C_ROWS[@]}"; do
    echo "| ${C_LABEL[$k]} | ${C_RPS[$k]} | ${C_CPU[$k]} | ${C_PCPU[$k]} | $(mb "${C_RSS[$k]}") |"
  done
  echo
  [[ -n $C_R_LUNET_FLOOR ]] && echo "lunet's CPU per request is ${C_R_LUNET_FLOOR}× that of libcurl driven from C (Benchmarks/curl_floor.c)."
  [[ -n $C_R_FLOOR ]] && echo "libcurl alone costs ${C_R_FLOOR}× the raw LuaSocket keep-alive loop per request: above 1, the strict goal cannot be met by any client that drives libcurl this way."
  echo
  echo "- Each client ran $SEQ_REPEAT time(s) and the run with the median loop CPU is shown."
  echo "  \"Loop\" CPU is \`os.clock()\` around the loop divided by the requests (start-up excluded);"
  echo "  \"process\" CPU is the whole process's user+sys from GNU time. Requests/s come from the"
  echo "  loop's wall time. The scripts are in \`Benchmarks/\`. LuaSocket's \`socket.http\` sends"
  echo "  \`Connection: close\`, so it opens a connection per request; the raw keep-alive loop writes a"
  echo "  GET on one TCP connection and reads the response by \`Content-Length\`, the least a Lua"
  echo "  script can do per request, and is the stricter peer. wrk with one connection shows what one"
  echo "  sequential C client reaches on this machine. The libcurl floor is a small C program"
  echo "  (\`Benchmarks/curl_floor.c\`) that does what an event-loop host must do per request:"
  echo "  reset and configure one easy handle, add it to a multi handle, perform and poll until done."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
