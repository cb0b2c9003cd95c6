#!/usr/bin/env bash
# (i) Streams benchmark (issue 18): WebSocket 1 KB echo round trips per second and SSE events per
# second, lunet beside a Python standard-library peer (ws_peer.py, sse_peer.py) against the same
# test servers (scripts/ws_server.py, scripts/sse_server.py), in alternating rounds. CPU is the
# client process's own user+sys (GNU time), not the servers'. Goal: at least the peer's rate at
# lower CPU per message.
#
#   scripts/bench.d/streams.sh LUNET_BIN [ROUNDS]
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LUNET=${1:?usage: streams.sh LUNET_BIN [ROUNDS]}
ROUNDS=${2:-3}
WS_N=${BENCH_WS_N:-5000}
SSE_N=${BENCH_SSE_N:-100000}
TMP=$(mktemp -d)
trap 'kill $WS_PID $SSE_PID 2>/dev/null; rm -rf "$TMP"' EXIT

/usr/bin/python3 "$HERE/../ws_server.py" >"$TMP/ws.port" &
WS_PID=$!
/usr/bin/python3 "$HERE/../sse_server.py" >"$TMP/sse.port" &
SSE_PID=$!
for _ in $(seq 50); do [[ -s $TMP/ws.port && -s $TMP/sse.port ]] && break; sleep 0.1; done
WS_PORT=$(head -1 "$TMP/ws.port")
SSE_PORT=$(head -1 "$TMP/sse.port")

# Runs a client; prints "wall_s cpu_s count".
measure() {
  /usr/bin/time -f "%e %U %S" -o "$TMP/time" "$@" >"$TMP/out" 2>"$TMP/err" || { echo "- - 0"; return; }
  read -r wall user sys <"$TMP/time"
  echo "$wall $(awk "BEGIN { print $user + $sys }") $(tail -1 "$TMP/out")"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

declare -A RATE CPU
for name in lunet_ws peer_ws lunet_sse peer_sse; do : >"$TMP/$name.rate"; : >"$TMP/$name.cpu"; done
for ((r = 1; r <= ROUNDS; r++)); do
  for name in lunet_ws peer_ws lunet_sse peer_sse; do
    key="r$r-$name-$RANDOM"
    case $name in
    lunet_ws) res=$(measure "$LUNET" "$HERE/ws_echo.lua" "$WS_PORT" "$WS_N"); want=$WS_N ;;
    peer_ws) res=$(measure /usr/bin/python3 "$HERE/ws_peer.py" "$WS_PORT" "$WS_N"); want=$WS_N ;;
    lunet_sse) res=$(measure "$LUNET" "$HERE/sse_events.lua" "$SSE_PORT" "$SSE_N" "$key"); want=$SSE_N ;;
    peer_sse) res=$(measure /usr/bin/python3 "$HERE/sse_peer.py" "$SSE_PORT" "$SSE_N" "$key"); want=$SSE_N ;;
    esac
    read -r wall cpu count <<<"$res"
    if [[ $count != "$want" ]]; then echo "streams: $name did $count of $want" >&2; continue; fi
    awk "BEGIN { print $count / $wall }" >>"$TMP/$name.rate"
    awk "BEGIN { print $cpu / $count * 1e6 }" >>"$TMP/$name.cpu"
  done
done
for name in lunet_ws peer_ws lunet_sse peer_sse; do
  RATE[$name]=$(median <"$TMP/$name.rate")
  CPU[$name]=$(median <"$TMP/$name.cpu")
done

row() { # LABEL LUNET PEER
  local l=$2 p=$3 verdict
  verdict=$(awk "BEGIN { print (${RATE[$l]:-0} >= ${RATE[$p]:-1} && ${CPU[$l]:-1e9} < ${CPU[$p]:-0}) ? \"PASS\" : \"FAIL\" }")
  printf '%-34s %12.0f/s %9.1f us  | peer %12.0f/s %9.1f us | rate %.2fx, CPU %.2fx  %s\n' "$1" \
    "${RATE[$l]:-0}" "${CPU[$l]:-0}" "${RATE[$p]:-0}" "${CPU[$p]:-0}" \
    "$(awk "BEGIN { print ${RATE[$l]:-0} / (${RATE[$p]:-1} + 1e-9) }")" \
    "$(awk "BEGIN { print ${CPU[$l]:-0} / (${CPU[$p]:-1} + 1e-9) }")" "$verdict"
}
echo "(i) streams: medians of $ROUNDS alternating rounds; CPU = the client's user+sys per message"
echo "    peer: Python 3 standard-library clients (scripts/bench.d/ws_peer.py, sse_peer.py)"
row "WebSocket 1 KB echo ($WS_N round trips)" lunet_ws peer_ws
row "SSE events ($SSE_N events)" lunet_sse peer_sse
