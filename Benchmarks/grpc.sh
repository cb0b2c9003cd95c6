#!/usr/bin/env bash
# bench (m): unary gRPC calls, lunet's grpc.client beside Python's grpcio (asyncio, on gRPC's C
# core), against the same server (Tests/servers/grpc_server.py, grpcio, plaintext, in the tests' venv).
# Each client makes GRPC_CALLS SayHello calls, 1 at a time and then 64 at a time, after a
# warm-up; calls/s (wall) and CPU per call (the client's own CPU time over the timed calls:
# os.clock, time.process_time; start-up, imports and protoc left out). The Python server bounds
# calls/s for both, so CPU is the figure; and a client's CPU per call follows the server's pace
# (a slower answer, fewer answers a wake-up), which drifts over a server's life: each client's
# run gets a server of its own, started for it, the two clients take turns first, and each
# figure is the median of GRPC_ROUNDS rounds. Goal (issue 39): lunet at most half of grpcio's
# CPU per call at 64 concurrent. Plaintext both, one connection each (lunet's H2CReuse on
# libcurl 7.88: docs/grpc.md).
#   GRPC_CALLS=n (default 4000; 500 with --quick), GRPC_ROUNDS=n (default 3; 1 with --quick)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init grpc

CALLS=${GRPC_CALLS:-4000}
ROUNDS=${GRPC_ROUNDS:-3}
[[ $QUICK == 1 ]] && CALLS=500 ROUNDS=1
GOAL=0.5
VENV=$("$ROOT/scripts/venv" 2>/dev/null)
PY=${VENV:+$VENV/bin/python3}
[[ -n $PY && -x $PY ]] && "$PY" -c 'import grpc, grpc_tools' 2>/dev/null || { say "no grpcio in the venv (scripts/venv failed): nothing to measure"; exit 1; }

# start_server / stop_server: a new server for each client's run (sets PORT, SERVER).
SERVER=
trap 'stop_server' EXIT
start_server() {
  : >"$TMP/server.out"
  "$PY" "$ROOT/Tests/servers/grpc_server.py" >"$TMP/server.out" 2>"$TMP/server.err" &
  SERVER=$!
  for _ in $(seq 100); do [[ -s $TMP/server.out ]] && break; sleep 0.1; done
  PORT=$(head -1 "$TMP/server.out")
  [[ $PORT =~ ^[0-9]+$ ]] || { say "the gRPC server did not start: $(tail -3 "$TMP/server.err")"; return 1; }
}
stop_server() {
  [[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
  SERVER=
  return 0
}

cat >"$TMP/client.lua" <<'LUA'
local target, proto, n, c = arg[1], arg[2], tonumber(arg[3]), tonumber(arg[4])
local g = grpc.client(target, { proto = proto })
for _ = 1, 50 do g:call("greet.Greeter/SayHello", { name = "warm" }) end
local done, failed, t0, c0 = 0, 0, require("lunet.core").now(), os.clock()
local function worker()
  while done < n do
    done = done + 1
    local ok = pcall(g.call, g, "greet.Greeter/SayHello", { name = "bench" })
    if not ok then failed = failed + 1 end
  end
end
local tasks = {}
for i = 1, c do tasks[i] = task.spawn(worker) end
task.all(tasks):await()
print(string.format("calls=%d failed=%d wall=%.6f cpu=%.6f", done, failed, require("lunet.core").now() - t0, os.clock() - c0))
LUA

cat >"$TMP/client.py" <<'PY'
import asyncio, importlib, os, sys, tempfile, time
import grpc
from grpc_tools import protoc
target, proto, n, c = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
out = tempfile.mkdtemp()
protoc.main(["protoc", "-I" + os.path.dirname(proto), "--python_out=" + out, "--grpc_python_out=" + out, proto])
sys.path.insert(0, out)
pb, stubs = importlib.import_module("greet_pb2"), importlib.import_module("greet_pb2_grpc")

async def main():
    async with grpc.aio.insecure_channel(target) as ch:
        stub = stubs.GreeterStub(ch)
        for _ in range(50):
            await stub.SayHello(pb.HelloRequest(name="warm"))
        done = failed = 0
        async def worker():
            nonlocal done, failed
            while done < n:
                done += 1
                try:
                    await stub.SayHello(pb.HelloRequest(name="bench"))
                except grpc.RpcError:
                    failed += 1
        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(c)))
        print("calls=%d failed=%d wall=%.6f cpu=%.6f" % (done, failed, time.perf_counter() - t0, time.process_time() - c0))
asyncio.run(main())
PY

# run_client KEY CONCURRENCY CMD...: one run on a server of its own; its calls/s and CPU µs a
# call added to $TMP/rate.KEY_C and $TMP/us.KEY_C (the medians go into RATE and US).
declare -A RATE US
run_client() {
  local key=$1 c=$2 out
  shift 2
  start_server || return 1
  out=$(timeout $LIMIT "$@" "127.0.0.1:$PORT" "$ROOT/Tests/Fixtures/grpc/greet.proto" "$CALLS" "$c" 2>"$TMP/$key.err" </dev/null) ||
    { stop_server; say "$key ($c at a time) failed: $(tail -3 "$TMP/$key.err")"; return 1; }
  stop_server
  [[ $(field failed "$out") == 0 ]] || { say "$key: $out"; return 1; }
  calc '%.0f\n' "$(field calls "$out") / $(field wall "$out")" >>"$TMP/rate.${key}_$c"
  calc '%.1f\n' "$(field cpu "$out") * 1e6 / $(field calls "$out")" >>"$TMP/us.${key}_$c"
}

say "(m) gRPC unary calls: lunet and grpcio, $CALLS calls, $ROUNDS round(s), a server for each run"
for ((round = 1; round <= ROUNDS; round++)); do
  for c in 1 64; do
    if ((round % 2)); then order="lunet grpcio"; else order="grpcio lunet"; fi
    for key in $order; do
      if [[ $key == lunet ]]; then run_client lunet "$c" "$LUNET" "$TMP/client.lua"; else run_client grpcio "$c" "$PY" "$TMP/client.py"; fi
    done
  done
done
for key in lunet grpcio; do
  for c in 1 64; do
    [[ -s $TMP/us.${key}_$c ]] || continue
    RATE[${key}_$c]=$(median <"$TMP/rate.${key}_$c")
    US[${key}_$c]=$(median <"$TMP/us.${key}_$c")
  done
done
V_GRPC=$("$PY" -c 'import grpc; print("grpcio", grpc.__version__)')

echo "(m) gRPC unary calls, $CALLS each           calls/s   CPU us/call  | grpcio calls/s   CPU us/call"
for c in 1 64; do
  printf '    %-2s at a time                      %8s %12s  | %14s %13s\n' "$c" "${RATE[lunet_$c]:--}" "${US[lunet_$c]:--}" "${RATE[grpcio_$c]:--}" "${US[grpcio_$c]:--}"
done
ratio_goal "lunet/grpcio CPU per call, 64 concurrent" "${US[lunet_64]:-}" "${US[grpcio_64]:-}" "<=" "$GOAL"
echo "    CPU: the client's own CPU time (os.clock, time.process_time) over the timed calls only;"
echo "    the server (grpcio, Python) runs on the same 2 CPUs, started anew for each run; medians of"
echo "    $ROUNDS round(s), the clients taking turns first. $V_GRPC; both plaintext (h2c) on one"
echo "    connection (lunet: H2CReuse on libcurl 7.88); grpcio: one channel."

[[ -n ${BENCH_MARKDOWN:-} ]] && {
  md_head "## (m) gRPC: lunet's grpc.client beside grpcio"
  echo "| concurrent calls | lunet calls/s | lunet CPU µs/call | grpcio calls/s | grpcio CPU µs/call |"
  echo "|---:|---:|---:|---:|---:|"
  for c in 1 64; do
    echo "| $c | ${RATE[lunet_$c]:--} | ${US[lunet_$c]:--} | ${RATE[grpcio_$c]:--} | ${US[grpcio_$c]:--} |"
  done
  echo
  echo "- $CALLS unary SayHello calls a row after 50 to warm up, against Tests/servers/grpc_server.py (grpcio,"
  echo "  plaintext) on the same 2 CPUs; $V_GRPC with grpc.aio (asyncio) and one channel; lunet's"
  echo "  grpc.client with tasks, on h2c, sharing one connection (H2CReuse on libcurl 7.88)."
  echo "- CPU per call: the client's own CPU time (os.clock, time.process_time) over the timed calls."
  echo "- Each run has a server of its own (a client's CPU per call follows the server's pace, which"
  echo "  drifts over a server's life); the medians of $ROUNDS rounds, lunet and grpcio taking turns first."
} >"${BENCH_MARKDOWN:-/dev/null}"
exit 0
