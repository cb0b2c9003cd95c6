#!/usr/bin/env bash
# More lunet benchmarks, beside lua-cjson and curl, on one loopback nginx, in one run: the JSON
# codec, the HTTP cache and a large download. Prints the figures with ratios and a PASS/FAIL per
# target, like scripts/bench (which measures (a) to (e)).
#
#   scripts/bench.d/more.sh                    run everything, print
#   scripts/bench.d/more.sh --markdown FILE    ... and write the same sections as Markdown to FILE
#   scripts/bench.d/more.sh --quick            smaller documents and files, shorter runs (a smoke
#                                              test of the script itself; the targets still apply)
#
# Environment:
#   LUNET_BIN=path   the lunet to measure (default .build/release/lunet; nothing is built here)
#   BENCH_DOWNLOAD_BYTES=N   the size of the download in (h) (default 1073741824, 1 GiB)
#
# What is measured:
#   (f) JSON: a ~100 KB and a ~5 MB document (scripts/bench.d/more_json_gen.lua: objects, arrays,
#       strings with escapes and UTF-8, integers, floats, booleans, null), generated once; each
#       decoded into Lua tables and encoded back, again and again for at least 0.5 s of CPU, timed
#       with os.clock() in the process (scripts/bench.d/more_json.lua): lunet's json.decode /
#       json.encode, and lua-cjson's cjson.decode / cjson.encode in lua5.4 (cjson cannot load
#       into lunet, which has its own Lua). MB/s of the document's bytes.
#   (g) The cache: sequential GETs through a session answered by a fresh cache hit from memory
#       (http.cache{ dir = false }), by a hit from disk (http.cache{ dir = TMP, memory = 1 }: no
#       entry fits in memory), and by nginx without a cache, the same URL (an nginx location that
#       adds Cache-Control: max-age=3600); N for about 2 s each (scripts/bench.d/more_cache.lua,
#       which stops with a message if the cached runs are not hits).
#   (h) A 1 GiB file of random bytes downloaded to a file under /tmp: `lunet -e
#       'http.download(URL, PATH)'` beside `curl -s -o PATH URL` (and, for context only, curl
#       followed by `sync PATH`: lunet's download fsyncs the file before renaming it into
#       place), 3 runs each, alternating; median wall time -> MB/s; lunet's peak RSS (GNU time).
# The server is nginx with one worker on a free 127.0.0.1 port (sendfile on, access_log off).
# A target that fails is reported, not fatal: the script exits 0 once the figures are printed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/scripts/bench.d"
MARKDOWN=
QUICK=0
while [[ $# -gt 0 ]]; do
  case $1 in
  --markdown)
    [[ $# -ge 2 && -n $2 ]] || {
      echo "more.sh: --markdown needs a file name" >&2
      exit 2
    }
    MARKDOWN=$2
    shift
    ;;
  --markdown=*) MARKDOWN=${1#--markdown=} ;;
  --quick) QUICK=1 ;;
  -h | --help)
    sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "more.sh: unknown argument '$1' (try --help)" >&2
    exit 2
    ;;
  esac
  shift
done
if [[ -n $MARKDOWN ]]; then
  # Resolve it now: later steps run in other directories.
  MARKDOWN=$(realpath -m -- "$MARKDOWN")
  : >"$MARKDOWN" || {
    echo "more.sh: cannot write $MARKDOWN" >&2
    exit 2
  }
fi

JSON_SMALL=100000        # (f) bytes of the small document (about)
JSON_LARGE=5000000       # (f) bytes of the large document (about)
JSON_SECONDS=0.5         # (f) least CPU time per measure
JSON_REPEAT=3            # (f) each process this many times; the median figure is reported
CACHE_SECONDS=2          # (g) N is what each client does in about this long...
CACHE_PROBE=1000         # (g) ... measured with this many requests
CACHE_REPEAT=3           # (g) each client this many times; the median req/s is reported
DL_BYTES=${BENCH_DOWNLOAD_BYTES:-1073741824} # (h)
DL_RUNS=3                # (h) runs of each command, alternating
if [[ $QUICK == 1 ]]; then
  JSON_LARGE=1000000 JSON_SECONDS=0.2 JSON_REPEAT=1
  CACHE_SECONDS=0.5 CACHE_PROBE=200 CACHE_REPEAT=1
  DL_BYTES=${BENCH_DOWNLOAD_BYTES:-104857600} DL_RUNS=1
fi
LIMIT=120    # seconds: every command below runs under `timeout $LIMIT`...
DL_LIMIT=600 # ... but the downloads and making the big file: `timeout $DL_LIMIT`
GNU_TIME=/usr/bin/time

say() { printf '%s\n' "$*" >&2; }
have() { command -v "$1" >/dev/null 2>&1; }

# --- dependencies ------------------------------------------------------------------------------
as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"; elif have sudo; then sudo "$@"; else return 1; fi
}
if [[ -x $ROOT/scripts/deps ]]; then
  timeout 900 "$ROOT/scripts/deps" bench || say "more: scripts/deps bench failed; going on with what is installed"
fi
# GNU time gives peak RSS (%M); scripts/deps does not list it.
if [[ ! -x $GNU_TIME ]]; then
  say "more: installing time (GNU time, for peak RSS)"
  policy=/usr/sbin/policy-rc.d added=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null && as_root chmod 755 "$policy" && added=1
  fi
  timeout 600 as_root env DEBIAN_FRONTEND=noninteractive apt-get -q update </dev/null >&2
  timeout 600 as_root env DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends time </dev/null >&2 ||
    say "more: could not install GNU time: no CPU or peak RSS figures"
  [[ $added == 1 ]] && as_root rm -f "$policy"
fi
HAVE_TIME=0
[[ -x $GNU_TIME ]] && HAVE_TIME=1
for t in nginx lua5.4 curl; do
  have $t || {
    say "more: $t is required and missing"
    exit 1
  }
done
HAVE_CJSON=0
timeout $LIMIT lua5.4 -e 'require "cjson"' 2>/dev/null && HAVE_CJSON=1

# --- lunet -------------------------------------------------------------------------------------
LUNET=$(cd "$ROOT" && realpath -- "${LUNET_BIN:-.build/release/lunet}" 2>/dev/null)
[[ -n $LUNET && -x $LUNET ]] || {
  say "more: ${LUNET_BIN:-.build/release/lunet} is not an executable (build lunet, or set LUNET_BIN)"
  exit 1
}
say "more: measuring $LUNET"

# --- the server --------------------------------------------------------------------------------
# Under /tmp whatever TMPDIR says: the downloads in (h) land here, on local disk.
TMP=$(mktemp -d /tmp/lunet-more.XXXXXX)
chmod 755 "$TMP" # nginx's worker may run as another user (nobody) when started by root
NGINX_PID=
cleanup() {
  if [[ -n $NGINX_PID ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
    kill -TERM "$NGINX_PID" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$NGINX_PID" 2>/dev/null
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$TMP/www" "$TMP/logs" "$TMP/dl"
printf 'hello, world\n' >"$TMP/www/small.txt" # 13 bytes, as in scripts/bench
chmod 644 "$TMP/www/small.txt"

free_port() {
  if have python3; then
    timeout $LIMIT python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
  else
    echo $((20000 + RANDOM % 30000))
  fi
}
start_nginx() {
  local port=$1
  cat >"$TMP/nginx.conf" <<EOF
worker_processes 1;
daemon off;
master_process on;
pid $TMP/nginx.pid;
error_log $TMP/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/body;
  proxy_temp_path $TMP/proxy;
  fastcgi_temp_path $TMP/fastcgi;
  uwsgi_temp_path $TMP/uwsgi;
  scgi_temp_path $TMP/scgi;
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  server {
    listen 127.0.0.1:$port;
    root $TMP/www;
    location /cached/ {
      alias $TMP/www/;
      add_header Cache-Control "max-age=3600";
    }
  }
}
EOF
  nginx -e "$TMP/logs/error.log" -c "$TMP/nginx.conf" -p "$TMP/" >"$TMP/logs/stdout.log" 2>&1 &
  NGINX_PID=$!
  for _ in $(seq 50); do
    kill -0 "$NGINX_PID" 2>/dev/null || return 1
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  return 1
}
PORT=
for _ in 1 2 3 4 5; do
  p=$(free_port)
  if start_nginx "$p"; then PORT=$p; break; fi
  kill -TERM "$NGINX_PID" 2>/dev/null
  wait "$NGINX_PID" 2>/dev/null
  NGINX_PID=
done
[[ -n $PORT ]] || {
  say "more: nginx did not start:"
  cat "$TMP/logs/error.log" "$TMP/logs/stdout.log" >&2 2>/dev/null
  exit 1
}
BASE="http://127.0.0.1:$PORT"
say "more: nginx (1 worker) on $BASE"

# --- helpers -----------------------------------------------------------------------------------
# calc FORMAT EXPR: awk arithmetic with printf formatting, e.g. calc '%.2f' '1/3'
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
median() { sort -g | awk '{ a[NR] = $0 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
passfail() { # CONDITION (awk expression) -> PASS/FAIL
  awk "BEGIN { exit !($1) }" && echo PASS || echo FAIL
}
or_dash() { [[ -n ${1:-} ]] && echo "$1" || echo -; }
mb() { [[ -n ${1:-} && $1 != - ]] && calc '%.1f' "$1 / 1024" || echo -; } # KB -> MB (2^20)
# field NAME LINE: the value of NAME=value in a line of NAME=value words
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p" | head -1; }

# --- the machine -------------------------------------------------------------------------------
first_line() { timeout $LIMIT "$@" 2>&1 | head -1; }
M_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
M_NPROC=$(nproc)
M_CPU=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
M_KERNEL="$(uname -sr) $(uname -m)"
M_LOAD=$(cut -d' ' -f1-3 /proc/loadavg) # other work on the machine skews every figure
M_DISK=$(timeout $LIMIT df -hP /tmp | awk 'NR == 2 { print $1 " (" $6 ")" }')
V_LUNET=$(first_line "$LUNET" --version)
V_CURL=$(first_line curl --version)
V_LUA=$(first_line lua5.4 -v | awk '{ print $1, $2 }')
V_CJSON="lua-cjson missing"
[[ $HAVE_CJSON == 1 ]] && V_CJSON="lua-cjson $(timeout $LIMIT lua5.4 -e 'print(require("cjson")._VERSION)' 2>/dev/null | sed 's/^lua-cjson //')"
V_CJSON_PKG=$(timeout $LIMIT dpkg-query -W -f='${Version}' lua-cjson 2>/dev/null)
[[ -n $V_CJSON_PKG ]] && V_CJSON="$V_CJSON (Debian $V_CJSON_PKG)"
V_NGINX=$(first_line nginx -v | sed 's/^nginx version: //')

# =============================================================================================
# (f) JSON
# =============================================================================================
say "more: (f) JSON, lunet and lua-cjson"
F_DOCS=(small large)
declare -A F_FILE F_BYTES F_RECORDS
F_OK=1
for d in small large; do
  case $d in small) sz=$JSON_SMALL ;; large) sz=$JSON_LARGE ;; esac
  F_FILE[$d]="$TMP/doc-$d.json"
  line=$(timeout $LIMIT lua5.4 "$HERE/more_json_gen.lua" "$sz" "${F_FILE[$d]}" 2>"$TMP/gen.err")
  if [[ $line != bytes=* ]]; then
    say "more: (f) cannot generate the $d document: $line $(tail -3 "$TMP/gen.err")"
    F_OK=0
    continue
  fi
  F_BYTES[$d]=$(field bytes "$line") F_RECORDS[$d]=$(field records "$line")
done
F_ROWS=()
declare -A F_DEC F_ENC F_DEC_MS F_ENC_MS F_OUT F_LABEL
# json_run KEY DOC GC CMD...: runs `CMD... more_json.lua FILE SECONDS GC` JSON_REPEAT times;
# keeps the median decode and the median encode figure.
json_run() {
  local key=$1 doc=$2 gc=$3 i out decs=() encs=() line
  shift 3
  for ((i = 0; i < JSON_REPEAT; i++)); do
    out=$(timeout $LIMIT "$@" "$HERE/more_json.lua" "${F_FILE[$doc]}" "$JSON_SECONDS" "$gc" 2>"$TMP/json.err" </dev/null)
    local rc=$?
    [[ $rc == 0 ]] || { say "more: (f) $key on the $doc document failed (exit $rc): $(tail -3 "$TMP/json.err")"; return 1; }
    line=$(grep '^decode ' <<<"$out")
    [[ -n $line ]] || { say "more: (f) $key printed no decode line: $out"; return 1; }
    decs+=("$(calc '%.6f' "$(field bytes "$line") * $(field reps "$line") / $(field cpu "$line") / 1e6")")
    line=$(grep '^encode ' <<<"$out")
    [[ -n $line ]] || { say "more: (f) $key printed no encode line: $out"; return 1; }
    encs+=("$(calc '%.6f' "$(field bytes "$line") * $(field reps "$line") / $(field cpu "$line") / 1e6")")
    F_OUT[${key}_$doc]=$(field out "$line")
  done
  local dec enc
  dec=$(printf '%s\n' "${decs[@]}" | median) enc=$(printf '%s\n' "${encs[@]}" | median)
  F_DEC[${key}_$doc]=$(calc '%.1f' "$dec") F_ENC[${key}_$doc]=$(calc '%.1f' "$enc")
  # milliseconds per document at that rate
  F_DEC_MS[${key}_$doc]=$(calc '%.3f' "${F_BYTES[$doc]} / ($dec * 1e6) * 1000")
  F_ENC_MS[${key}_$doc]=$(calc '%.3f' "${F_BYTES[$doc]} / ($enc * 1e6) * 1000")
  F_ROWS+=("${key}_$doc")
}
F_LABEL[lunet]="lunet json.decode / json.encode"
F_LABEL[cjson]="lua5.4 + lua-cjson (generational GC)"
F_LABEL[cjsoninc]="lua5.4 + lua-cjson, incremental GC"
if [[ $F_OK == 1 ]]; then
  for d in small large; do
    json_run lunet $d default "$LUNET"
    if [[ $HAVE_CJSON == 1 ]]; then
      json_run cjson $d default lua5.4
      json_run cjsoninc $d incremental lua5.4
    fi
  done
fi
# Targets: lunet at least lua-cjson's speed both ways, on each document. The peer of record is
# the faster of the two lua-cjson rows (lua5.4's own generational GC, or lunet's incremental).
declare -A F_R F_T F_RGEN
for d in small large; do
  for op in dec enc; do
    k=${op}_$d
    F_R[$k]='' F_RGEN[$k]='' F_T[$k]=FAIL
    if [[ $op == dec ]]; then
      l=${F_DEC[lunet_$d]:-} g=${F_DEC[cjson_$d]:-} i=${F_DEC[cjsoninc_$d]:-}
    else
      l=${F_ENC[lunet_$d]:-} g=${F_ENC[cjson_$d]:-} i=${F_ENC[cjsoninc_$d]:-}
    fi
    [[ -n $l && -n $g ]] || continue
    best=$g
    [[ -n $i && $(passfail "$i > $g") == PASS ]] && best=$i
    F_R[$k]=$(calc '%.2f' "$l / $best")
    F_RGEN[$k]=$(calc '%.2f' "$l / $g")
    F_T[$k]=$(passfail "$l >= $best")
  done
done

# =============================================================================================
# (g) the cache
# =============================================================================================
CACHE_URL="$BASE/cached/small.txt"
say "more: (g) the cache, $CACHE_URL"
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
  say "more: (g) $G_ABORT"
fi
G_R_MEM='' G_R_DISK='' G_R_MEMDISK='' G_T1=FAIL
if [[ -z $G_ABORT && -n ${G_RPS[network]:-} ]]; then
  G_R_MEM=$(calc '%.1f' "${G_RPS[memory]} / ${G_RPS[network]}")
  G_R_DISK=$(calc '%.1f' "${G_RPS[disk]} / ${G_RPS[network]}")
  G_R_MEMDISK=$(calc '%.1f' "${G_RPS[memory]} / ${G_RPS[disk]}")
  G_T1=$(passfail "${G_RPS[memory]} >= 20 * ${G_RPS[network]}")
fi

# =============================================================================================
# (h) a large download
# =============================================================================================
DL_URL="$BASE/big.bin"
DL_SRC="$TMP/www/big.bin"
DL_DEST="$TMP/dl/big.bin"
DL_MIB=$(calc '%.0f' "$DL_BYTES / 1048576")
say "more: (h) download of $DL_MIB MiB, $DL_RUNS runs each"
H_ROWS=()
H_ERR=
declare -A H_WALL H_MBS H_CPU H_RSS H_RSS_MAX H_LABEL H_ALL H_BAD
H_LABEL[lunet]="lunet -e 'http.download(URL, PATH)'"
H_LABEL[curl]="curl -s -o PATH URL"
H_LABEL[curlsync]="curl -s -o PATH URL; sync PATH (context)"
avail=$(timeout $LIMIT df -B1 --output=avail /tmp 2>/dev/null | tail -1 | tr -d ' ')
if [[ -n $avail && $avail -lt $((DL_BYTES * 2 + 1073741824)) ]]; then
  H_ERR="not enough room in /tmp ($((avail >> 20)) MiB free; the file and one copy need $((DL_BYTES * 2 >> 20)) MiB and 1 GiB spare)"
elif ! timeout $DL_LIMIT head -c "$DL_BYTES" /dev/urandom >"$DL_SRC" 2>"$TMP/head.err" ||
  [[ $(stat -c %s "$DL_SRC") != "$DL_BYTES" ]]; then
  H_ERR="cannot make the $DL_MIB MiB file: $(tail -1 "$TMP/head.err")"
fi
chmod 644 "$DL_SRC" 2>/dev/null
# dl_once KEY CMD...: one download to DL_DEST; appends "wall user+sys rss" to H_ALL[KEY].
dl_once() {
  local key=$1 t0 t1 rc size
  shift
  rm -f "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta "$TMP/dl.time"
  timeout $DL_LIMIT sync # no earlier run's dirty pages written back during this one
  t0=$(date +%s%N)
  if [[ $HAVE_TIME == 1 ]]; then
    timeout $DL_LIMIT "$GNU_TIME" -f '%U %S %M' -o "$TMP/dl.time" "$@" >"$TMP/dl.out" 2>"$TMP/dl.err" </dev/null
  else
    timeout $DL_LIMIT "$@" >"$TMP/dl.out" 2>"$TMP/dl.err" </dev/null
  fi
  rc=$?
  t1=$(date +%s%N)
  size=$(stat -c %s "$DL_DEST" 2>/dev/null || echo 0)
  if [[ $rc != 0 || $size != "$DL_BYTES" ]]; then
    say "more: (h) $key failed (exit $rc, $size bytes): $(grep -v '^Command exited' "$TMP/dl.err" | tail -3 | tr '\n' ' ')"
    H_BAD[$key]=1
  elif [[ -z ${H_ALL[$key]:-} ]] && ! timeout $DL_LIMIT cmp -s "$DL_SRC" "$DL_DEST"; then
    # the first run of each command: the bytes, not just the length
    say "more: (h) $key wrote other bytes than the server's file"
    H_BAD[$key]=1
  else
    local user=- sys=- rss=- cpu=-
    [[ -s $TMP/dl.time ]] && read -r user sys rss < <(tail -1 "$TMP/dl.time")
    [[ $user != - ]] && cpu=$(calc '%.2f' "$user + $sys")
    H_ALL[$key]+="$(calc '%.3f' "($t1 - $t0) / 1e9") $cpu $rss"$'\n'
  fi
  rm -f "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta
}
if [[ -z $H_ERR ]]; then
  # One untimed fetch first: the file is in the page cache and nginx is warm for every run.
  timeout $DL_LIMIT curl -s -o /dev/null "$DL_URL"
  for ((r = 0; r < DL_RUNS; r++)); do
    dl_once lunet "$LUNET" -e "http.download('$DL_URL', '$DL_DEST')"
    dl_once curl curl -s -o "$DL_DEST" "$DL_URL"
    dl_once curlsync bash -c 'curl -s -o "$1" "$2" && sync "$1"' _ "$DL_DEST" "$DL_URL"
  done
  for k in lunet curl curlsync; do
    [[ -n ${H_ALL[$k]:-} && -z ${H_BAD[$k]:-} ]] || continue
    read -r H_WALL[$k] H_CPU[$k] H_RSS[$k] < <(printf '%s' "${H_ALL[$k]}" | median)
    H_MBS[$k]=$(calc '%.0f' "$DL_BYTES / ${H_WALL[$k]} / 1e6")
    H_RSS_MAX[$k]=$(printf '%s' "${H_ALL[$k]}" | awk '$3 != "-" { if ($3 > m) m = $3 } END { if (m) print m; else print "-" }')
    H_ROWS+=("$k")
  done
else
  say "more: (h) skipped: $H_ERR"
fi
rm -f "$DL_SRC" "$DL_DEST" "$DL_DEST".part "$DL_DEST".part.meta
H_R_CURL='' H_R_SYNC='' H_T1=FAIL H_T2=FAIL
if [[ -n ${H_MBS[lunet]:-} && -n ${H_MBS[curl]:-} ]]; then
  H_R_CURL=$(calc '%.2f' "${H_WALL[curl]} / ${H_WALL[lunet]}")
  H_T1=$(passfail "${H_WALL[curl]} / ${H_WALL[lunet]} >= 0.9")
fi
[[ -n ${H_MBS[lunet]:-} && -n ${H_MBS[curlsync]:-} ]] && H_R_SYNC=$(calc '%.2f' "${H_WALL[curlsync]} / ${H_WALL[lunet]}")
if [[ -n ${H_RSS_MAX[lunet]:-} && ${H_RSS_MAX[lunet]} != - ]]; then
  H_T2=$(passfail "${H_RSS_MAX[lunet]} < 64 * 1024")
fi

M_LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# =============================================================================================
# the report
# =============================================================================================
doc_name() { case $1 in small) echo "~100 KB" ;; large) echo "~$(calc '%.0f' "$JSON_LARGE / 1e6") MB" ;; esac; }
op_name() { case $1 in dec) echo decode ;; enc) echo encode ;; esac; }
{
  echo "lunet benchmarks (f)-(h), $M_DATE"
  echo "machine: $M_NPROC CPUs, $M_CPU, $M_KERNEL, load average $M_LOAD at the start, $M_LOAD_END at the end"
  echo "versions: $V_LUNET"
  echo "          $V_CURL"
  echo "          $V_LUA, $V_CJSON; $V_NGINX"
  echo "server: nginx, 1 worker, 127.0.0.1, sendfile on, access_log off; /tmp on $M_DISK"
  echo "binary: $LUNET"
  echo
  echo "(f) JSON, decode and encode in-process           decode MB/s  encode MB/s  decode ms  encode ms"
  for d in small large; do
    [[ -n ${F_BYTES[$d]:-} ]] && printf '    %s\n' "$(doc_name $d) document: ${F_BYTES[$d]} bytes, ${F_RECORDS[$d]} records"
    for k in lunet cjson cjsoninc; do
      r=${k}_$d
      [[ -n ${F_DEC[$r]:-} ]] || continue
      printf '      %-44s %11s %12s %10s %10s\n' "${F_LABEL[$k]}" "${F_DEC[$r]}" "${F_ENC[$r]}" "${F_DEC_MS[$r]}" "${F_ENC_MS[$r]}"
    done
  done
  for d in small large; do
    for op in dec enc; do
      k=${op}_$d
      printf '    %-46s %s\n' "lunet/lua-cjson $(op_name $op) $(doc_name $d) = $(or_dash "${F_R[$k]}")x" "target >= 1x     ${F_T[$k]}"
    done
  done
  echo
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
  printf '    %-46s %s\n' "memory hit/network GET = $(or_dash "$G_R_MEM")x" "target >= 20x    $G_T1"
  printf '    %-46s %s\n' "disk hit/network GET = $(or_dash "$G_R_DISK")x" "(no target)"
  printf '    %-46s %s\n' "memory hit/disk hit = $(or_dash "$G_R_MEMDISK")x" "(no target)"
  echo
  if [[ -n $H_ERR ]]; then
    echo "(h) download: skipped: $H_ERR"
  else
    echo "(h) download of $DL_MIB MiB to /tmp, $DL_RUNS runs each      median s     MB/s   CPU s  peak RSS MB (max)"
    for k in "${H_ROWS[@]}"; do
      printf '    %-46s %8s %8s %7s %8s %8s\n' "${H_LABEL[$k]}" "${H_WALL[$k]}" "${H_MBS[$k]}" "${H_CPU[$k]}" "$(mb "${H_RSS[$k]}")" "($(mb "${H_RSS_MAX[$k]}"))"
    done
  fi
  printf '    %-46s %s\n' "lunet/curl throughput = $(or_dash "$H_R_CURL")x" "target >= 0.9x   $H_T1"
  printf '    %-46s %s\n' "lunet peak RSS = $(mb "${H_RSS_MAX[lunet]:-}") MB" "target < 64 MB   $H_T2"
  [[ -n $H_R_SYNC ]] && printf '    %-46s %s\n' "lunet/(curl; sync) throughput = ${H_R_SYNC}x" "(context: what durable = true costs, an fsync before the rename)"
  echo
  echo "notes: (f) MB/s = 10^6 bytes of the source document per CPU second (os.clock() around whole"
  echo "       calls, at least ${JSON_SECONDS} s each; encode rates count the source document's bytes too, so"
  echo "       both codecs are credited for the same work); ms = one call; each process ran $JSON_REPEAT time(s),"
  echo "       the median figure is shown. The target compares with the faster lua-cjson row."
  echo "       (g) req/s from the loop's wall time (lunet.core.now); us/req = 1/rate; CPU us/req ="
  echo "       os.clock() over the loop / N; peak RSS of the whole process (GNU time); N for about"
  echo "       ${CACHE_SECONDS} s from a ${CACHE_PROBE}-GET probe; each ran $CACHE_REPEAT time(s), the median req/s is shown."
  echo "       (h) wall time of the whole process (date +%s%N), each run after a sync; MB/s = 10^6 bytes"
  echo "       per second; CPU = user+sys of the median run; peak RSS: the median run's, (the highest)."
} | tee "$TMP/report.txt"

# --- Markdown ----------------------------------------------------------------------------------
if [[ -n $MARKDOWN ]]; then
  {
    echo "Measured by \`scripts/bench.d/more.sh\`:"
    echo
    echo "- Date: $M_DATE"
    echo "- CPU: $M_NPROC × $M_CPU; kernel $M_KERNEL; /tmp on $M_DISK"
    echo "- Load average at the start: $M_LOAD; at the end: $M_LOAD_END (other work on the machine skews every figure)"
    echo "- lunet: \`$V_LUNET\`"
    echo "- curl: \`$V_CURL\`"
    echo "- $V_LUA, $V_CJSON; $V_NGINX with one worker on 127.0.0.1 (\`sendfile on\`, \`access_log off\`)"
    echo
    echo "## (f) JSON: lunet beside lua-cjson"
    echo
    echo "| Document | Codec | Decode MB/s | Encode MB/s | Decode ms | Encode ms | Encoded bytes |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    for d in small large; do
      for k in lunet cjson cjsoninc; do
        r=${k}_$d
        [[ -n ${F_DEC[$r]:-} ]] || continue
        echo "| $(doc_name $d) (${F_BYTES[$d]} bytes) | ${F_LABEL[$k]} | ${F_DEC[$r]} | ${F_ENC[$r]} | ${F_DEC_MS[$r]} | ${F_ENC_MS[$r]} | ${F_OUT[$r]} |"
      done
    done
    echo
    echo "| Target | Measured | Result |"
    echo "|---|---|---|"
    for d in small large; do
      for op in dec enc; do
        k=${op}_$d
        echo "| (f) $(op_name $op) $(doc_name $d): lunet ≥ lua-cjson | $(or_dash "${F_R[$k]}")× (vs. lua5.4's default GC: $(or_dash "${F_RGEN[$k]}")×) | ${F_T[$k]} |"
      done
    done
    echo
    echo "- The documents come from \`scripts/bench.d/more_json_gen.lua\` (the same bytes every run):"
    echo "  an object holding an array of records that mix nested objects and arrays, strings with"
    echo "  escapes (\`\\\"\`, \`\\\\\`, \`\\/\`, \`\\n\`, \`\\t\`, \`\\u00e9\`, a surrogate pair) and raw UTF-8, small and"
    echo "  64-bit integers, floats with and without exponents, booleans and \`null\`; ${F_RECORDS[small]:-?} and ${F_RECORDS[large]:-?} records."
    echo "- \`scripts/bench.d/more_json.lua\` decodes the document again and again for at least"
    echo "  ${JSON_SECONDS} s of CPU (\`os.clock()\` around whole calls), then encodes the decoded tables the"
    echo "  same way; in lunet with \`json.decode\`/\`json.encode\`, in lua5.4 with \`cjson.decode\`/\`cjson.encode\`"
    echo "  (lua-cjson cannot be loaded into lunet, which has its own Lua). MB/s are 10^6 bytes of the"
    echo "  source document per CPU second, for encoding too, so both codecs are credited for the same"
    echo "  work; \"Encoded bytes\" is what one encode wrote (lua-cjson writes 14 significant digits and"
    echo "  escapes \`/\`; lunet writes the shortest round-tripping form)."
    echo "- lua5.4 runs Lua's generational GC (lua.c switches to it), lunet the incremental one, hence a"
    echo "  second lua-cjson row; the target compares with the faster of the two."
    echo "- Each process ran $JSON_REPEAT time(s); the median figure is shown."
    echo
    echo "## (g) The cache: a fresh hit beside a loopback GET"
    echo
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
    echo "| Target | Measured | Result |"
    echo "|---|---|---|"
    echo "| (g) a memory hit ≥ 20× the loopback GET's requests/s | $(or_dash "$G_R_MEM")× | $G_T1 |"
    echo
    echo "A disk hit is $(or_dash "$G_R_DISK")× the loopback GET; a memory hit $(or_dash "$G_R_MEMDISK")× a disk hit."
    echo
    echo "- \`scripts/bench.d/more_cache.lua\`: one session GETs \`/cached/small.txt\` (13 bytes; an nginx"
    echo "  location that adds \`Cache-Control: max-age=3600\`) N times in a loop. A first GET fills the cache;"
    echo "  the script stops with a message unless the second and every timed GET has \`r.cache == \"hit\"\`,"
    echo "  and, for the disk row, unless the memory tier is empty at the end (\`memory = 1\` byte: no"
    echo "  entry fits, so each hit reads and checks the file). The disk cache is a fresh directory"
    echo "  under /tmp for each run."
    echo "- Requests/s from the loop's wall time (\`lunet.core.now\`); CPU µs/request is \`os.clock()\`"
    echo "  over the loop divided by N; peak RSS is the whole process's (GNU time). N is what each client"
    echo "  does in about ${CACHE_SECONDS} s, from a ${CACHE_PROBE}-GET probe. Each ran $CACHE_REPEAT time(s); the run with the"
    echo "  median requests/s is shown."
    echo
    echo "## (h) Downloading $DL_MIB MiB to a file"
    echo
    if [[ -n $H_ERR ]]; then
      echo "Skipped: $H_ERR."
    else
      echo "| Command | Median s | MB/s | CPU s | Peak RSS MB (median run) | Peak RSS MB (highest) |"
      echo "|---|---:|---:|---:|---:|---:|"
      for k in "${H_ROWS[@]}"; do
        case $k in
        lunet) l="\`lunet -e 'http.download(URL, PATH)'\`" ;;
        curl) l='`curl -s -o PATH URL`' ;;
        curlsync) l='`curl -s -o PATH URL && sync PATH` (context only)' ;;
        esac
        echo "| $l | ${H_WALL[$k]} | ${H_MBS[$k]} | ${H_CPU[$k]} | $(mb "${H_RSS[$k]}") | $(mb "${H_RSS_MAX[$k]}") |"
      done
    fi
    echo
    echo "| Target | Measured | Result |"
    echo "|---|---|---|"
    echo "| (h) lunet ≥ 90% of curl's throughput | $(or_dash "$H_R_CURL")× | $H_T1 |"
    echo "| (h) lunet's peak RSS < 64 MB | $(mb "${H_RSS_MAX[lunet]:-}") MB | $H_T2 |"
    echo
    [[ -n $H_R_SYNC ]] && echo "Beside curl followed by \`sync PATH\` (an fsync of the file, which a \`durable = true\` download does before its rename): $H_R_SYNC×." && echo
    echo "- $DL_BYTES bytes from \`/dev/urandom\` in nginx's root (random: nothing to gain from"
    echo "  compression, and no \`Accept-Encoding\` is sent), fetched to a file under /tmp on $M_DISK."
    echo "  The commands ran $DL_RUNS time(s) each, alternating, each after a \`sync\` and with the file"
    echo "  already in the page cache (one untimed fetch first); the first download of each was compared"
    echo "  byte for byte with the source, and every one's length checked. Downloads are deleted after"
    echo "  each run."
    echo "- Wall time of the whole process (\`date +%s%N\`), the median run; MB/s = 10^6 bytes per"
    echo "  second; CPU is the median run's user+sys and peak RSS its maximum resident set (GNU time"
    echo "  \`%M\`); the target uses the highest peak RSS of the runs."
  } >"$MARKDOWN"
  say "more: wrote $MARKDOWN"
fi
exit 0
