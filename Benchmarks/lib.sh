# Sourced by scripts/bench and by every benchmark in Benchmarks/: settings, arithmetic,
# timing, peak RSS, goal rows, the lunet binary and the loopback nginx. Never run on its own.
#
# A benchmark is an executable Benchmarks/NAME.sh whose second line is
# "# bench (LETTER): what it measures" (LETTER orders `scripts/bench --list` and the doc), with
# "# needs: nginx" in its header when it GETs from the shared server. It takes no argument and
# reads, all optional (so that it also runs alone, straight from Benchmarks/):
#   BENCH_LUNET     the lunet to measure (else LUNET_BIN, else .build/release/lunet; never built here)
#   BENCH_QUICK=1   fewer rounds and smaller inputs (a smoke test of the script)
#   BENCH_BASE, BENCH_NGINX_PID, BENCH_WWW   the driver's nginx (else bench_nginx starts one)
#   BENCH_TMP       a directory for its scratch files (else /tmp)
#   BENCH_MARKDOWN  a file to write its section of docs/benchmarks.md into
#   BENCH_TARGETS   a file to append its goal rows to (tab-separated; see `goal` below)
# It prints its rows, each beside its peer, on stdout, progress and trouble on stderr, and exits 0
# once its figures are printed, whatever the goals say.

for d in /usr/local/sbin /usr/sbin /sbin; do # nginx: CI's non-login root shell lacks sbin
  [[ :$PATH: == *:$d:* ]] || PATH=$PATH:$d
done
export PATH

BENCH_D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_D/.." && pwd)
HERE=$BENCH_D
QUICK=${BENCH_QUICK:-0}
LIMIT=120 # seconds: every measured command runs under `timeout $LIMIT`
# Test hooks for the fallbacks: BENCH_GNU_TIME= (empty) acts as if GNU time were missing,
# BENCH_HYPERFINE=0 as if hyperfine were.
GNU_TIME=${BENCH_GNU_TIME-/usr/bin/time}
USE_HYPERFINE=${BENCH_HYPERFINE:-1}
HAVE_TIME=0
[[ -n $GNU_TIME && -x $GNU_TIME ]] && HAVE_TIME=1

say() { printf '%s\n' "${BENCH_NAME:-bench}: $*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }
# calc FORMAT EXPR: awk arithmetic with printf formatting, e.g. calc '%.2f' '1/3'
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
passfail() { awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL; } # CONDITION (awk) -> PASS/FAIL
median() { sort -g | awk '{ a[NR] = $0 } END { if (NR) print a[int((NR + 1) / 2)] }'; } # of lines, by field 1
or_dash() { [[ -n ${1:-} ]] && echo "$1" || echo -; }
mb() { [[ -n ${1:-} && $1 != - ]] && calc '%.1f' "$1 / 1024" || echo -; } # KB -> MB (2^20)
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -1; } # NAME LINE: NAME=value in a line of words
json_num() { grep -o "\"$2\": *[-0-9.eE+]*" "$1" | head -1 | sed 's/.*: *//'; } # FILE KEY: hyperfine JSON
first_line() { timeout $LIMIT "$@" 2>&1 | head -1; }

# bench_init NAME: the benchmark's name (for messages and goal rows), its scratch directory TMP
# (removed at exit, with any nginx it started) and LUNET.
bench_init() {
  BENCH_NAME=$1
  TMP=$(mktemp -d "${BENCH_TMP:-/tmp}/$1.XXXXXX")
  chmod 755 "$TMP" # nginx's worker may run as another user (nobody) when started by root
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
  LUNET=$(cd "$ROOT" && realpath -- "${BENCH_LUNET:-${LUNET_BIN:-.build/release/lunet}}" 2>/dev/null)
  [[ -n $LUNET && -x $LUNET ]] || {
    say "${BENCH_LUNET:-${LUNET_BIN:-.build/release/lunet}} is not an executable (build lunet, or set LUNET_BIN)"
    exit 1
  }
}
OWN_NGINX=
bench_cleanup() {
  [[ -n $OWN_NGINX ]] && stop_nginx "$OWN_NGINX"
  rm -rf "$TMP"
}

# --- measuring ---------------------------------------------------------------------------------
# time_cmd NAME RUNS WARMUP CMD...: one batch of RUNS runs after WARMUP; sets T_MEAN T_SD T_CPU (ms;
# T_CPU = mean user+sys, "" if unknown) and appends each run's wall time (ms) to $TMP/times.NAME.
# hyperfine -N runs the command without a shell, stdin and stdout on /dev/null.
time_cmd() {
  local name=$1 runs=$2 warmup=$3
  shift 3
  T_MEAN='' T_SD='' T_CPU=''
  if [[ $USE_HYPERFINE == 1 ]] && have hyperfine; then
    local cmdline
    cmdline=$(printf '%q ' "$@")
    if timeout $LIMIT hyperfine -N --style none --warmup "$warmup" --runs "$runs" \
      --export-json "$TMP/hf.json" -n "$name" "$cmdline" >/dev/null 2>"$TMP/hf.err"; then
      T_MEAN=$(calc '%.2f' "$(json_num "$TMP/hf.json" mean) * 1000")
      T_SD=$(calc '%.2f' "$(json_num "$TMP/hf.json" stddev) * 1000")
      T_CPU=$(calc '%.2f' "($(json_num "$TMP/hf.json" user) + $(json_num "$TMP/hf.json" system)) * 1000")
      awk '/"times": *\[/ { on = 1; next } on && /\]/ { exit } on { gsub(/[ ,]/, ""); printf "%.4f\n", $0 * 1000 }' \
        "$TMP/hf.json" >>"$TMP/times.$name"
      TIMER="hyperfine -N (CPU = its mean user+sys)"
      return 0
    fi
    say "hyperfine failed for $name: $(tail -3 "$TMP/hf.err")"
  fi
  # Fallback: a bounded loop timed with date +%s%N, at most $LIMIT s in all, less the loop's own
  # cost (running `true` the same way), measured once.
  local i t0 t1 start=$SECONDS all=()
  if [[ -z ${LOOP_COST_US:-} ]]; then
    LOOP_COST_US=0
    local cal=()
    for ((i = 0; i < 20; i++)); do
      t0=$(date +%s%N); timeout $LIMIT true; t1=$(date +%s%N)
      cal+=($(((t1 - t0) / 1000)))
    done
    LOOP_COST_US=$(printf '%s\n' "${cal[@]}" | sort -n | head -10 | awk '{ s += $1 } END { printf "%d", s / NR }')
  fi
  for ((i = 0; i < warmup; i++)); do timeout $LIMIT "$@" >/dev/null 2>&1 </dev/null; done
  for ((i = 0; i < runs && SECONDS - start < LIMIT; i++)); do
    t0=$(date +%s%N)
    timeout $LIMIT "$@" >/dev/null 2>&1 </dev/null || return 1
    t1=$(date +%s%N)
    all+=($(((t1 - t0) / 1000 - LOOP_COST_US)))
  done
  [[ ${#all[@]} -gt 0 ]] || return 1
  printf '%s\n' "${all[@]}" | awk '{ printf "%.4f\n", $1 / 1000 }' >>"$TMP/times.$name"
  read -r T_MEAN T_SD < <(printf '%s\n' "${all[@]}" | awk '{ s += $1; q += $1 * $1; n++ }
    END { m = s / n; v = q / n - m * m; if (v < 0) v = 0; printf "%.2f %.2f\n", m / 1000, sqrt(v) / 1000 }')
  TIMER="a bounded loop timed with date +%s%N, less the loop's own ${LOOP_COST_US} us"
}

# Process timings in alternating rounds: round_cmd KEY RUNS WARMUP CMD... registers a command;
# time_rounds ROUNDS KEY... runs every KEY's batch (time_cmd) in turn, ROUNDS times (lunet, peer,
# lunet, peer, ...), so that drift in the machine's other work falls on all of them alike. It sets,
# per KEY, T_MEDIAN (the median of every run of every round, the figure the goals use), T_AVG and
# T_DEV (mean and standard deviation of those runs), T_CPUS (the mean of the batches' CPU) and T_RUNS.
declare -A R_CMD R_RUNS R_WARMUP T_MEDIAN T_AVG T_DEV T_CPUS T_RUNS
round_cmd() {
  local key=$1
  R_RUNS[$key]=$2 R_WARMUP[$key]=$3
  shift 3
  R_CMD[$key]=$(printf '%q ' "$@")
}
time_rounds() {
  local rounds=$1 round key cpus
  shift
  declare -A cpu_sum=() cpu_n=() failed=()
  for key in "$@"; do rm -f "$TMP/times.$key"; done
  for ((round = 1; round <= rounds; round++)); do
    for key in "$@"; do
      [[ -z ${failed[$key]:-} ]] || continue
      eval "local -a cmd=(${R_CMD[$key]})"
      # shellcheck disable=SC2154 # cmd is set by the eval
      if ! have "${cmd[0]}" || ! time_cmd "$key" "${R_RUNS[$key]}" "${R_WARMUP[$key]}" "${cmd[@]}"; then
        say "$key is missing or failing; no figures for it"
        failed[$key]=1
        continue
      fi
      if [[ -n $T_CPU ]]; then
        cpu_sum[$key]=$(calc '%.4f' "${cpu_sum[$key]:-0} + $T_CPU") cpu_n[$key]=$((${cpu_n[$key]:-0} + 1))
      fi
    done
  done
  for key in "$@"; do
    [[ -z ${failed[$key]:-} && -s $TMP/times.$key ]] || continue
    T_MEDIAN[$key]=$(calc '%.2f' "$(median <"$TMP/times.$key")")
    read -r T_AVG[$key] T_DEV[$key] T_RUNS[$key] < <(awk '{ s += $1; q += $1 * $1; n++ }
      END { m = s / n; v = q / n - m * m; if (v < 0) v = 0; printf "%.2f %.2f %d\n", m, sqrt(v), n }' "$TMP/times.$key")
    cpus=''
    [[ -n ${cpu_n[$key]:-} ]] && cpus=$(calc '%.2f' "${cpu_sum[$key]} / ${cpu_n[$key]}")
    T_CPUS[$key]=$cpus
  done
}

# peak_rss RUNS CMD...: sets RSS_KB (median of RUNS runs) and RSS_HOW
peak_rss() {
  local runs=$1 i all=()
  shift
  RSS_KB=
  for ((i = 0; i < runs; i++)); do
    if [[ $HAVE_TIME == 1 ]]; then
      timeout $LIMIT "$GNU_TIME" -f %M -o "$TMP/rss" "$@" >/dev/null 2>&1 </dev/null || continue
      all+=("$(tail -1 "$TMP/rss")")
      RSS_HOW="GNU time %M"
    else
      # Sample VmHWM (the kernel's peak RSS) from /proc until the process ends: a lower bound.
      # No `timeout` here (it would be the process sampled): a deadline kills it instead.
      "$@" >/dev/null 2>&1 </dev/null &
      local pid=$! hwm=0 v deadline=$((SECONDS + LIMIT))
      while kill -0 $pid 2>/dev/null; do
        v=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status 2>/dev/null)
        [[ -n $v && $v -gt $hwm ]] && hwm=$v
        ((SECONDS > deadline)) && kill $pid 2>/dev/null
      done
      wait $pid
      [[ $hwm -gt 0 ]] && all+=("$hwm") # too short to sample: no figure
      RSS_HOW="VmHWM sampled from /proc while running (a lower bound)"
    fi
  done
  [[ ${#all[@]} -gt 0 ]] && RSS_KB=$(printf '%s\n' "${all[@]}" | median)
}
# rss_rounds RUNS KEY...: the registered commands (round_cmd) one run each in turn, RUNS times;
# sets RSS[KEY], the median.
declare -A RSS
rss_rounds() {
  local runs=$1 i key
  shift
  for key in "$@"; do rm -f "$TMP/rss.$key"; done
  for ((i = 0; i < runs; i++)); do
    for key in "$@"; do
      eval "local -a cmd=(${R_CMD[$key]})"
      have "${cmd[0]}" || continue
      peak_rss 1 "${cmd[@]}"
      [[ -n $RSS_KB ]] && echo "$RSS_KB" >>"$TMP/rss.$key"
    done
  done
  for key in "$@"; do
    RSS[$key]=
    [[ -s $TMP/rss.$key ]] && RSS[$key]=$(median <"$TMP/rss.$key")
  done
}

# goal FIGURE MEASURED GOAL RESULT: prints a goal row under the benchmark's rows and records it
# (benchmark, figure, goal, measured, result; tab-separated) in $BENCH_TARGETS, from which the
# driver prints its summary and writes the doc's goal table. MEASURED carries its unit ("1.47x",
# "566546/s"); an empty one is shown as "-" (and its RESULT should be FAIL).
goal() {
  printf '    %-56s goal %-8s %s\n' "$1 = $(or_dash "$2")" "$3" "$4"
  [[ -z ${BENCH_TARGETS:-} ]] ||
    printf '%s\t%s\t%s\t%s\t%s\n' "$BENCH_NAME" "$1" "$3" "$(or_dash "$2")" "$4" >>"$BENCH_TARGETS"
}
# ratio_goal FIGURE A B OP LIMIT [SPOILED]: the goal row for A/B OP LIMIT (OP is <= or >=), "x"
# figures; a non-empty SPOILED (the run had bad responses, say) makes it FAIL whatever the ratio.
ratio_goal() {
  local figure=$1 a=$2 b=$3 op=$4 lim=$5 spoiled=${6:-} r='' res=FAIL
  if [[ -n $a && -n $b && $a != - && $b != - ]] && [[ $(passfail "$b > 0") == PASS ]]; then
    r=$(calc '%.2f' "$a / $b")x
    res=$(passfail "$a / $b $op $lim")
    [[ -z $spoiled ]] || res=FAIL
  fi
  goal "$figure" "$r" "$op ${lim}x" "$res"
}
# md_head HEADING: a doc section's heading and, under it, when it was measured and how loaded.
md_head() {
  echo "$1"
  echo
  md_stamp
  echo
}
md_stamp() {
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`scripts/bench $([[ $QUICK == 1 ]] && echo '--quick ')$BENCH_NAME\`; load average $(cut -d' ' -f1-3 /proc/loadavg) at its end."
}

# --- the server ---------------------------------------------------------------------------------
# One nginx, one worker, on a free 127.0.0.1 port, serving WWW (a 13-byte small.txt):
#   /            the files as they are (text/plain, no sendfile): (b) to (d)
#   /cached/     the same files with Cache-Control: max-age=3600: (g) the cache
#   /dl/         the same files with sendfile and tcp_nopush: (h) the download
free_port() {
  if have python3; then
    timeout $LIMIT python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 30000))
  fi
}
# start_nginx DIR: starts nginx with DIR for its files (DIR/www the root); sets NGINX_PID and PORT.
start_nginx() {
  local dir=$1 try port
  mkdir -p "$dir/www" "$dir/logs"
  chmod 755 "$dir" "$dir/www"
  printf 'hello, world\n' >"$dir/www/small.txt" # 13 bytes
  chmod 644 "$dir/www/small.txt"
  PORT= NGINX_PID=
  for try in 1 2 3 4 5; do
    port=$(free_port)
    cat >"$dir/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process on;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  default_type text/plain;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  server {
    listen 127.0.0.1:$port;
    root $dir/www;
    location /cached/ {
      alias $dir/www/;
      default_type application/octet-stream;
      sendfile on;
      tcp_nopush on;
      add_header Cache-Control "max-age=3600";
    }
    location /dl/ {
      alias $dir/www/;
      default_type application/octet-stream;
      sendfile on;
      tcp_nopush on;
    }
  }
}
EOF
    nginx -e "$dir/logs/error.log" -c "$dir/nginx.conf" -p "$dir/" >"$dir/logs/stdout.log" 2>&1 &
    NGINX_PID=$!
    local i
    for i in $(seq 50); do
      kill -0 "$NGINX_PID" 2>/dev/null || break
      if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then PORT=$port; return 0; fi
      sleep 0.1
    done
    stop_nginx "$NGINX_PID"
    NGINX_PID=
  done
  say "nginx did not start: $(cat "$dir/logs/error.log" "$dir/logs/stdout.log" 2>/dev/null | tail -5)"
  return 1
}
stop_nginx() { # PID
  kill -0 "$1" 2>/dev/null || return 0
  kill -TERM "$1" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  return 0
}
# bench_nginx: BASE (http://127.0.0.1:PORT), URL (its small.txt), NGINX_PID and WWW, from the
# driver's nginx or from one started for this benchmark alone.
bench_nginx() {
  if [[ -n ${BENCH_BASE:-} ]]; then
    BASE=$BENCH_BASE NGINX_PID=${BENCH_NGINX_PID:-} WWW=${BENCH_WWW:-}
  else
    start_nginx "$TMP/nginx" || exit 1
    OWN_NGINX=$NGINX_PID
    BASE="http://127.0.0.1:$PORT" WWW="$TMP/nginx/www"
    say "nginx (1 worker) on $BASE"
  fi
  URL="$BASE/small.txt"
}
