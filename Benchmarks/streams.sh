#!/usr/bin/env bash
# bench (i): streams, WebSocket 1 KB echo round trips/s and SSE events/s beside Python peers
# Issue 18: lunet beside a Python standard-library peer (ws_peer.py, sse_peer.py) against the same
# test servers (Tests/servers/ws_server.py, Tests/servers/sse_server.py), in alternating rounds. CPU is the
# client process's own user+sys (GNU time), not the servers'. Goal: at least the peer's rate at
# lower CPU per message.
#
#   Benchmarks/streams.sh LUNET_BIN [ROUNDS]
# or, as the other benchmarks, with no argument under scripts/bench (BENCH_LUNET, BENCH_QUICK: 1
# round instead of 3, BENCH_MARKDOWN, BENCH_TARGETS; see lib.sh).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" # for md_head; TMP and LUNET are this file's own
BENCH_NAME=streams
LUNET=${1:-${BENCH_LUNET:-${LUNET_BIN:-}}}
[[ -n $LUNET ]] || { echo "usage: streams.sh LUNET_BIN [ROUNDS]" >&2; exit 2; }
ROUNDS=${2:-$([[ ${BENCH_QUICK:-0} == 1 ]] && echo 1 || echo 3)}
WS_N=${BENCH_WS_N:-5000}
SSE_N=${BENCH_SSE_N:-100000}
TMP=$(mktemp -d)
trap 'kill $WS_PID $SSE_PID 2>/dev/null; rm -rf "$TMP"' EXIT

/usr/bin/python3 "$ROOT/Tests/servers/ws_server.py" >"$TMP/ws.port" &
WS_PID=$!
/usr/bin/python3 "$ROOT/Tests/servers/sse_server.py" >"$TMP/sse.port" &
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
# Its own median, not lib.sh's: the mean of the middle two of an even count.
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

verdict() { # LUNET PEER -> PASS/FAIL: at least the peer's rate at lower CPU per message
  awk "BEGIN { print (${RATE[$1]:-0} >= ${RATE[$2]:-1} && ${CPU[$1]:-1e9} < ${CPU[$2]:-0}) ? \"PASS\" : \"FAIL\" }"
}
row() { # LABEL LUNET PEER
  local l=$2 p=$3
  printf '%-34s %12.0f/s %9.1f us  | peer %12.0f/s %9.1f us | rate %.2fx, CPU %.2fx  %s\n' "$1" \
    "${RATE[$l]:-0}" "${CPU[$l]:-0}" "${RATE[$p]:-0}" "${CPU[$p]:-0}" \
    "$(awk "BEGIN { print ${RATE[$l]:-0} / (${RATE[$p]:-1} + 1e-9) }")" \
    "$(awk "BEGIN { print ${CPU[$l]:-0} / (${CPU[$p]:-1} + 1e-9) }")" "$(verdict "$l" "$p")"
}
echo "(i) streams: medians of $ROUNDS alternating rounds; CPU = the client's user+sys per message"
echo "    peer: Python 3 standard-library clients (Benchmarks/ws_peer.py, sse_peer.py)"
row "WebSocket 1 KB echo ($WS_N round trips)" lunet_ws peer_ws
row "SSE events ($SSE_N events)" lunet_sse peer_sse

# Under scripts/bench: the goal rows for its summary and the doc, and the doc's section.
ratios() { # LUNET PEER -> "rate Rx, CPU Cx"
  awk "BEGIN { printf \"rate %.2fx, CPU %.2fx\", ${RATE[$1]:-0} / (${RATE[$2]:-1} + 1e-9), ${CPU[$1]:-0} / (${CPU[$2]:-1} + 1e-9) }"
}
if [[ -n ${BENCH_TARGETS:-} ]]; then
  printf 'streams\t%s\t%s\t%s\t%s\n' "lunet/Python WebSocket 1 KB echo" "rate >= 1x, CPU < 1x" "$(ratios lunet_ws peer_ws)" "$(verdict lunet_ws peer_ws)" \
    "lunet/Python SSE events" "rate >= 1x, CPU < 1x" "$(ratios lunet_sse peer_sse)" "$(verdict lunet_sse peer_sse)" >>"$BENCH_TARGETS"
fi
if [[ -n ${BENCH_MARKDOWN:-} ]]; then
  {
    md_head "## (i) Streams: WebSocket echo and SSE events"
    echo '```'
    row "WebSocket 1 KB echo ($WS_N round trips)" lunet_ws peer_ws
    row "SSE events ($SSE_N events)" lunet_sse peer_sse
    echo '```'
    echo
    echo "- \`Benchmarks/streams.sh\` (run by \`scripts/bench streams\`, or alone:"
    echo "  \`Benchmarks/streams.sh .build/release/lunet 3\`): the same local servers"
    echo "  (Tests/servers/ws_server.py, Tests/servers/sse_server.py), lunet's client beside a Python 3"
    echo "  standard-library client (Benchmarks/ws_peer.py, sse_peer.py), medians of $ROUNDS"
    echo "  alternating round(s), CPU = the client process's user+sys (GNU time) per message."
  } >"$BENCH_MARKDOWN"
fi
exit 0
